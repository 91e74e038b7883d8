"""`manage.py signing_key`: the studio's pack-signing key — show its public half, or make one."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from routing_core.signing import generate_private_key, private_key_pem
from studio.shared.signing import signing_key_id, signing_public_pem


class Command(BaseCommand):
    help = (
        "Print the key id and public key agents verify packs with (routing-core serve "
        "--verify-key); with --create-missing, first make the private key file "
        "STUDIO_SIGNING_KEY_FILE names when it does not exist (a development key)."
    )
    # The signing key's own check would stop the command that makes the missing key.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--create-missing",
            action="store_true",
            help="write a new Ed25519 key to STUDIO_SIGNING_KEY_FILE if there is none (mode 0600)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["create_missing"]:
            _create_missing(settings.STUDIO_SIGNING_KEY_FILE)
        key = signing_key_id()
        if key is None:
            raise CommandError(
                "no signing key: set STUDIO_SIGNING_KEY_FILE (docs/operators/signing.md)"
            )
        self.stdout.write(f"pack signing key {key}\n{signing_public_pem()}")


def _create_missing(path: str) -> None:
    """A new private key at `path`, readable by its owner only; an existing file is kept."""
    if not path:
        raise CommandError("--create-missing needs STUDIO_SIGNING_KEY_FILE")
    target = Path(path)
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(private_key_pem(generate_private_key()))
