"""`manage.py expire_events`: delete decision events older than each profile's retention period.

Every job worker already does this once an hour (STUDIO_EVENT_EXPIRY_S); this command is
for doing it now, by hand or from a scheduler.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from studio.agents import expire_events


class Command(BaseCommand):
    help = "Delete decision events older than each profile's retention period."

    def handle(self, *args: Any, **options: Any) -> None:
        deleted = expire_events()
        self.stdout.write(f"deleted {deleted} expired events")
