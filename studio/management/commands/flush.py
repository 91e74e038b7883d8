"""`manage.py flush`, able to erase published versions (see `studio.shared.immutability`)."""

from __future__ import annotations

from typing import Any

from django.core.management.commands import flush
from django.db import connections

from studio.shared.immutability import flushing


class Command(flush.Command):
    def handle(self, **options: Any) -> None:
        with flushing(connections[options["database"]]):
            super().handle(**options)
