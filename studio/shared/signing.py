"""The studio's signing key: each published pack is served with its Ed25519 signature.

The key comes from the environment (`STUDIO_SIGNING_KEY_FILE`, a PEM file, or
`STUDIO_SIGNING_KEY`, the PEM itself), never from the repository; `make run` makes a dev key
outside it on first start. Signatures are made when a version is first served with a key, not
stored: after a key rotation every version, old ones too, is signed by the new key
(docs/operators/signing.md). Without a key packs are served unsigned.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.checks import Error, register
from django.core.exceptions import ImproperlyConfigured

from routing_core.signing import key_id, load_private_key, public_key_pem, sign_pack

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def signing_key() -> Ed25519PrivateKey | None:
    """The configured private key, or None when the studio does not sign.

    Raises:
        ImproperlyConfigured: a key is configured but cannot be read as Ed25519 PEM.
    """
    return _key(settings.STUDIO_SIGNING_KEY_FILE, settings.STUDIO_SIGNING_KEY)


@lru_cache(maxsize=4)
def _key(path: str, pem: str) -> Ed25519PrivateKey | None:
    if not path and not pem:
        return None
    try:
        raw = Path(path).read_bytes() if path else pem.encode()
        return load_private_key(raw)
    except (OSError, ValueError, TypeError) as exc:
        where = f"STUDIO_SIGNING_KEY_FILE={path}" if path else "STUDIO_SIGNING_KEY"
        raise ImproperlyConfigured(f"{where} is no Ed25519 private key in PEM: {exc}") from exc


def signing_key_id() -> str | None:
    """The id agents see in each signature (the key's digest), or None when not signing."""
    key = signing_key()
    return None if key is None else key_id(key.public_key())


def signing_public_pem() -> str | None:
    """The public key to give agents (`routing-core serve --verify-key`)."""
    key = signing_key()
    return None if key is None else public_key_pem(key).decode("ascii")


def signature_for(body: bytes) -> str | None:
    """The signature document of a pack's exact bytes, or None when the studio does not sign."""
    key = signing_key()
    return None if key is None else sign_pack(body, key).to_text()


@register()
def check_signing_key(**kwargs: Any) -> list[Error]:
    """A configured key that cannot be read stops the studio at start, not at the first pull."""
    try:
        signing_key()
    except ImproperlyConfigured as exc:
        return [Error(str(exc), id="studio.E010")]
    return []
