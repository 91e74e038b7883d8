"""App configuration: creates the four role groups after every migrate."""

from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class StudioConfig(AppConfig):
    name = "studio"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        post_migrate.connect(_create_roles, sender=self)
        # The admin's registrations live with the shared plumbing, not in a top-level admin.py
        # (which Django's autodiscovery would have found by itself).
        import studio.shared.admin  # noqa: F401
        import studio.shared.signing  # noqa: F401 - registers the signing key's system check


def _create_roles(sender: AppConfig, **kwargs: Any) -> None:
    from studio.shared.roles import ensure_roles

    ensure_roles(using=kwargs.get("using", "default"))
