"""`manage.py load_demo`: the demo support profile and, on a development database, a demo login."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from studio.authoring import PROFILE, load_demo_profile
from studio.jobs import request_model_safely
from studio.models import Profile
from studio.shared.packs import pack_report
from studio.shared.roles import ROLES, grant


class Command(BaseCommand):
    help = "Create the demo customer-support profile and the demo/demo login when missing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--force",
            action="store_true",
            help="create the demo/demo user even though DEBUG is off (never on a shared server)",
        )
        parser.add_argument(
            "--no-user", action="store_true", help="load the profile only, no demo login"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["no_user"] and not (settings.DEBUG or options["force"]):
            raise CommandError(
                "refusing to create the demo/demo login with DEBUG off; "
                "use --no-user, or --force on a local database"
            )
        existed = Profile.objects.filter(slug=PROFILE["slug"]).exists()
        profile = load_demo_profile()
        report = pack_report(profile)
        state = "valid pack" if report.is_valid else f"{len(report.problems)} problems"
        if report.is_valid:  # queued: the worker trains it, the playground is ready at once
            request_model_safely(profile.pk)
        done = "already there, left as it is" if existed else "loaded"
        self.stdout.write(f"Demo profile '{profile.slug}' {done} ({state}).")
        for path, message in report.problems:
            self.stdout.write(f"  {path}: {message}")
        if not options["no_user"]:
            _create_demo_user()
            self.stdout.write("Demo login: user demo, password demo (every role).")


def _create_demo_user() -> None:
    """Create demo/demo with every role; an existing demo user keeps the password and roles given."""
    user, created = get_user_model().objects.get_or_create(username="demo")
    if not created:
        return
    user.set_password("demo")
    user.is_staff = True
    user.save()
    grant(user, *ROLES)
