"""`manage.py traffic_rollups`: recount the Traffic page's hourly rollups from the stored events.

Ingest and retention keep the rollups (studio.traffic.rollups) equal to the events, and the
migration that introduced them counted the events stored before. This command is the repair:
after events were changed by hand, or restored from a backup without their rollups. Run it
while no events arrive for the profile (an ingest committing meanwhile into a recounted hour
may be counted twice or not at all).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studio.models import Profile
from studio.traffic.rollups import rebuild


class Command(BaseCommand):
    help = "Recount the Traffic page's hourly rollups from the stored events."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--profile", help="a profile's slug (default: every profile)")

    def handle(self, *args: Any, **options: Any) -> None:
        profile_id = None
        if options["profile"]:
            profile = Profile.objects.filter(slug=options["profile"]).first()
            if profile is None:
                raise CommandError(f"no profile {options['profile']!r}")
            profile_id = profile.pk
        counted = rebuild(profile_id)
        self.stdout.write(f"counted {counted} turns into hourly rollups")
