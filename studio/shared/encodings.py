"""Packs on the wire: gzip or zstd, chosen from `Accept-Encoding`, compressed once per version.

A CLINC-size pack is megabytes of JSON; compressed it is a fraction of that, and agents pull it
often. Each version's compressed bodies are computed when it is published (or at its first
pull, for versions published before this existed) and stored beside it (`PackEncoding`).
"""

from __future__ import annotations

import gzip

import zstandard

from studio.models import PackEncoding, Version

# Best first: what the studio offers, in the order it prefers them at equal q.
OFFERED = ("zstd", "gzip")
GZIP_LEVEL = 6
ZSTD_LEVEL = 10


def choose(accept_encoding: str | None) -> str | None:
    """The encoding to send for an `Accept-Encoding` header (RFC 9110 §12.5.3), None: identity.

    The highest q wins, ties go to the studio's preference; `*` stands for any encoding not
    named; `q=0` refuses one. A header that cannot be parsed (or is absent) gets identity.
    """
    if not accept_encoding:
        return None
    weights: dict[str, float] = {}
    for item in accept_encoding.split(","):
        name, _, params = item.strip().partition(";")
        name = name.strip().lower()
        if not name:
            continue
        weights[name] = _q(params)
    best: tuple[float, int] | None = None
    chosen: str | None = None
    for rank, coding in enumerate(OFFERED):
        q = weights.get(coding, weights.get("*", 0.0))
        key = (q, -rank)
        if q > 0 and (best is None or key > best):
            best, chosen = key, coding
    return chosen


def _q(params: str) -> float:
    for param in params.split(";"):
        key, _, value = param.strip().partition("=")
        if key.strip().lower() == "q":
            try:
                q = float(value.strip())
            except ValueError:
                return 0.0
            return q if 0.0 <= q <= 1.0 else 0.0
    return 1.0


def compress(body: bytes, coding: str) -> bytes:
    if coding == "gzip":
        return gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)
    if coding == "zstd":
        return zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(body)
    raise ValueError(f"no such encoding: {coding}")


def store_encodings(version: Version) -> None:
    """Compress a new version's pack once, in every offered encoding (at publish)."""
    body = version.pack_json.encode("utf-8")
    PackEncoding.objects.bulk_create(
        [PackEncoding(version=version, coding=c, body=compress(body, c)) for c in OFFERED],
        ignore_conflicts=True,
    )


def encoded(version_id: int, coding: str) -> bytes:
    """A version's pack in one encoding: stored at publish, or made and stored now (older ones)."""
    row = PackEncoding.objects.filter(version_id=version_id, coding=coding).values_list("body")
    found = next(iter(row), None)
    if found is not None:
        return bytes(found[0])
    pack_json = Version.objects.values_list("pack_json", flat=True).get(pk=version_id)
    body = compress(pack_json.encode("utf-8"), coding)
    PackEncoding.objects.bulk_create(
        [PackEncoding(version_id=version_id, coding=coding, body=body)], ignore_conflicts=True
    )
    return body
