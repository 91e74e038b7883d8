"""`manage.py signing_key`: `make run` makes its development key once, outside the checkout."""

from __future__ import annotations

import io
import stat
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from routing_core.signing import PublicKeys, sign_pack
from studio.shared.signing import signing_key


def test_create_missing_makes_a_private_key_once_readable_by_its_owner_only(settings, tmp_path):
    path = tmp_path / "data" / "dev-signing-key.pem"
    settings.STUDIO_SIGNING_KEY_FILE, settings.STUDIO_SIGNING_KEY = str(path), ""
    out = io.StringIO()
    call_command("signing_key", "--create-missing", stdout=out)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    first = path.read_bytes()
    call_command("signing_key", "--create-missing", stdout=io.StringIO())
    assert path.read_bytes() == first  # an existing key is never replaced
    printed = out.getvalue()
    public = printed[printed.index("-----BEGIN") :].encode()
    key = signing_key()
    assert key is not None
    assert PublicKeys.from_pem([public]).verify(b"pack", sign_pack(b"pack", key).to_text())


def test_without_a_key_it_says_how_to_set_one(settings):
    settings.STUDIO_SIGNING_KEY_FILE, settings.STUDIO_SIGNING_KEY = "", ""
    with pytest.raises(CommandError, match="STUDIO_SIGNING_KEY_FILE"):
        call_command("signing_key", stdout=io.StringIO())
    assert not Path("dev-signing-key.pem").exists()
