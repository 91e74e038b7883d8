"""Signed packs: Ed25519 signatures over a pack's exact bytes, and the keys that check them.

The signature is *detached* (docs/pack-format.md, Signed packs): it travels beside the pack —
in the `Route-Pack-Signature` header of a pull, or in a sibling file `PACK.sig` — so the pack's
bytes are served unchanged and every reader that does not verify keeps working. It covers the
bytes exactly as served (after any `Content-Encoding` is undone), not a re-serialisation, so
there is no canonical form to get wrong. Verification is on when a runtime is given at least
one public key, never because of anything in the pack or the signature: once on, a missing,
unknown or bad signature refuses the pack.

Needs `cryptography` (`pip install 'routing-core[signing]'`), imported only when a key is read.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from routing_core.errors import PackError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

    from routing_core.pack import Pack

__all__ = [
    "SIGNATURE_FORMAT",
    "SIGNATURE_HEADER",
    "SIGNATURE_SUFFIX",
    "PackSignature",
    "PublicKeys",
    "SignatureError",
    "generate_private_key",
    "key_id",
    "load_private_key",
    "load_verified_pack",
    "parse_signature",
    "private_key_pem",
    "public_key_pem",
    "sign_pack",
    "signature_path",
    "verify_pack_file",
]

SIGNATURE_FORMAT = "route-pack-signature"
SIGNATURE_HEADER = "Route-Pack-Signature"
SIGNATURE_SUFFIX = ".sig"
_KEY_ID = re.compile(r"[0-9a-f]{16}")
_MAX_SIGNATURE_CHARS = 1024


class SignatureError(PackError):
    """A pack refused for its signature (missing, malformed, unknown key, or not matching)."""

    def __init__(self, reason: str) -> None:
        super().__init__([("signature", reason)])
        self.reason = reason


@dataclass(frozen=True, slots=True)
class PackSignature:
    """One detached signature: which key made it and the 64 signature bytes."""

    key_id: str
    signature: bytes

    def to_text(self) -> str:
        """The signature document: compact ASCII JSON, the same in a header and in a `.sig` file."""
        return json.dumps(
            {
                "format": SIGNATURE_FORMAT,
                "version": 1,
                "algorithm": "ed25519",
                "key_id": self.key_id,
                "signature": _b64url(self.signature),
            },
            separators=(",", ":"),
        )


def parse_signature(text: str | bytes) -> PackSignature:
    """Read a signature document (docs/pack-format.md, Signed packs).

    Raises:
        SignatureError: it is not a version-1 Ed25519 route-pack signature.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if len(text) > _MAX_SIGNATURE_CHARS:
        raise SignatureError("the signature document is too long to be a pack signature")
    try:
        document = json.loads(text)
    except ValueError:
        raise SignatureError("the signature is not JSON") from None
    return _signature_from(document)


def _signature_from(document: Any) -> PackSignature:
    expected = {"format", "version", "algorithm", "key_id", "signature"}
    if not isinstance(document, dict) or set(document) != expected:
        raise SignatureError(f"the signature must be an object with exactly {sorted(expected)}")
    if (document["format"], document["version"]) != (SIGNATURE_FORMAT, 1):
        raise SignatureError("not a route-pack-signature version 1 document")
    if document["algorithm"] != "ed25519":
        raise SignatureError(f"unsupported algorithm {document['algorithm']!r} (only ed25519)")
    key = document["key_id"]
    if not isinstance(key, str) or not _KEY_ID.fullmatch(key):
        raise SignatureError("key_id must be 16 lowercase hex digits")
    raw = _unb64url(document["signature"])
    if raw is None or len(raw) != 64:
        raise SignatureError("signature must be 64 bytes in unpadded base64url")
    return PackSignature(key, raw)


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64url(text: Any) -> bytes | None:
    if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]*", text):
        return None
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None


# -- keys -------------------------------------------------------------------------------------


def _ed25519() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:  # pragma: no cover - the extra is installed wherever tests run
        raise SignatureError(
            "verifying signatures needs pip install 'routing-core[signing]'"
        ) from None
    return ed25519


def key_id(public_key: Ed25519PublicKey) -> str:
    """The key's id: the first 16 hex digits of SHA-256 of its 32 raw bytes.

    Derived, never configured, so that an id cannot name the wrong key.
    """
    from cryptography.hazmat.primitives import serialization

    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def generate_private_key() -> Ed25519PrivateKey:
    """A new signing key."""
    key: Ed25519PrivateKey = _ed25519().Ed25519PrivateKey.generate()
    return key


def load_private_key(pem: bytes) -> Ed25519PrivateKey:
    """A PKCS#8 PEM private key (unencrypted).

    Raises:
        ValueError: not a PEM Ed25519 private key.
    """
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, _ed25519().Ed25519PrivateKey):
        raise ValueError("the signing key is not an Ed25519 private key")
    return key  # type: ignore[no-any-return]


def private_key_pem(key: Ed25519PrivateKey) -> bytes:
    """PKCS#8 PEM, unencrypted (the file's permissions protect it)."""
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def public_key_pem(key: Ed25519PrivateKey | Ed25519PublicKey) -> bytes:
    """The public half as SubjectPublicKeyInfo PEM: what agents are given."""
    from cryptography.hazmat.primitives import serialization

    public = key.public_key() if isinstance(key, _ed25519().Ed25519PrivateKey) else key
    return public.public_bytes(  # type: ignore[union-attr]
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def sign_pack(body: bytes, key: Ed25519PrivateKey) -> PackSignature:
    """Sign a pack's exact bytes."""
    return PackSignature(key_id(key.public_key()), key.sign(body))


class PublicKeys:
    """The keys a runtime trusts, by key id. Giving a runtime any key turns verification on.

    Args:
        keys: Ed25519 public keys; several while keys rotate (the old one until every pack
            served is signed by the new one).
    """

    def __init__(self, keys: Iterable[Ed25519PublicKey]) -> None:
        self._keys: Mapping[str, Ed25519PublicKey] = {key_id(k): k for k in keys}
        if not self._keys:
            raise ValueError("verification needs at least one public key")

    @classmethod
    def from_pem(cls, pems: Iterable[bytes]) -> PublicKeys:
        """Keys from SubjectPublicKeyInfo PEM texts.

        Raises:
            ValueError: a text that is no Ed25519 public key.
        """
        from cryptography.hazmat.primitives import serialization

        keys = []
        for pem in pems:
            key = serialization.load_pem_public_key(pem)
            if not isinstance(key, _ed25519().Ed25519PublicKey):
                raise ValueError("a verification key is not an Ed25519 public key")
            keys.append(key)
        return cls(keys)

    @classmethod
    def from_files(cls, paths: Iterable[str | Path]) -> PublicKeys:
        """Keys from PEM files (`routing-core verify --key`, `serve --verify-key`).

        Raises:
            OSError: a file cannot be read.
            ValueError: a file holds no Ed25519 public key.
        """
        return cls.from_pem(Path(p).read_bytes() for p in paths)

    @property
    def ids(self) -> tuple[str, ...]:
        """The configured key ids, sorted."""
        return tuple(sorted(self._keys))

    def verify(self, body: bytes, signature: str | bytes | None) -> str:
        """Check `signature` over `body`; returns the id of the key that signed it.

        Raises:
            SignatureError: no signature, a malformed one, a key not configured, or a
                signature that does not match these bytes.
        """
        from cryptography.exceptions import InvalidSignature

        if signature is None or not signature.strip():
            raise SignatureError("the pack came without a signature, and verification is on")
        parsed = parse_signature(signature)
        key = self._keys.get(parsed.key_id)
        if key is None:
            raise SignatureError(
                f"signed by key {parsed.key_id}, which is not a configured key "
                f"({', '.join(self.ids)})"
            )
        try:
            key.verify(parsed.signature, body)
        except InvalidSignature:
            raise SignatureError(
                f"the signature by key {parsed.key_id} does not match the pack's bytes "
                "(changed after signing, or another pack's signature)"
            ) from None
        return parsed.key_id


def signature_path(pack_path: str | Path) -> Path:
    """Where a pack file's detached signature lives: beside it, `.sig` appended."""
    path = Path(pack_path)
    return path.with_name(path.name + SIGNATURE_SUFFIX)


def verify_pack_file(
    pack_path: str | Path, keys: PublicKeys, signature: str | Path | None = None
) -> tuple[bytes, str]:
    """Read a pack file and its signature file; (the pack's bytes, the signing key's id).

    Raises:
        OSError: the pack cannot be read.
        SignatureError: the signature file is missing or refused.
    """
    body = Path(pack_path).read_bytes()
    sig_path = Path(signature) if signature is not None else signature_path(pack_path)
    try:
        text = sig_path.read_bytes()[: _MAX_SIGNATURE_CHARS + 1]
    except FileNotFoundError:
        raise SignatureError(f"no signature file {sig_path.name}, and verification is on") from None
    return body, keys.verify(body, text)


def load_verified_pack(pack_path: str | Path, keys: PublicKeys) -> Pack:
    """`load_pack` for a file whose signature file (`PACK.sig`) must verify first.

    Raises:
        SignatureError: the signature is missing or refused (the pack is not even parsed).
        PackError: the pack itself is invalid.
        OSError: the pack cannot be read.
    """
    from routing_core.codec import load_pack

    body, _key = verify_pack_file(pack_path, keys)
    return load_pack(body)
