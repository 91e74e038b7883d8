"""Packs served compressed: zstd or gzip as the agent accepts, made once at publish, ETag unchanged."""

from __future__ import annotations

import gzip
from typing import Any

import pytest
import zstandard
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from studio.models import PackEncoding, Version
from studio.publishing.versions import promote, publish
from studio.shared.encodings import OFFERED, choose
from studio.shared.tokens import create_read_token

URL = "/api/profiles/shop/packs/production"


@pytest.fixture
def pull(profile: Any, owner: Any) -> Any:
    version = publish(profile, user=owner)
    promote(version, "production", user=owner)
    _, secret = create_read_token(profile, "agent", user=owner)
    client = Client()

    def get(**headers: str) -> Any:
        extra = {f"HTTP_{k.upper()}": v for k, v in headers.items()}
        return client.get(URL, HTTP_AUTHORIZATION=f"Bearer {secret}", **extra)

    get.version = version  # type: ignore[attr-defined]
    return get


def test_publishing_stores_the_pack_compressed_once_per_encoding(pull: Any) -> None:
    version: Version = pull.version
    stored = {e.coding: bytes(e.body) for e in PackEncoding.objects.filter(version=version)}

    assert sorted(stored) == sorted(OFFERED)
    assert gzip.decompress(stored["gzip"]).decode() == version.pack_json
    assert zstandard.ZstdDecompressor().decompress(stored["zstd"]).decode() == version.pack_json


@pytest.mark.parametrize(
    ("accept", "coding"),
    [("gzip", "gzip"), ("gzip, deflate, br, zstd", "zstd"), ("zstd;q=0.5, gzip", "gzip")],
)
def test_a_pull_is_compressed_as_the_agent_accepts(pull: Any, accept: str, coding: str) -> None:
    plain = pull()
    response = pull(accept_encoding=accept)

    assert response.status_code == 200 and response["Content-Encoding"] == coding
    decode = gzip.decompress if coding == "gzip" else zstandard.ZstdDecompressor().decompress
    assert decode(response.content) == plain.content
    assert len(response.content) < len(plain.content)
    assert response["ETag"] == plain["ETag"] == f'"{pull.version.checksum}"'
    assert response["Vary"] == "Authorization, Accept-Encoding"


def test_an_agent_that_accepts_no_encoding_gets_plain_json(pull: Any) -> None:
    for response in (pull(), pull(accept_encoding="identity"), pull(accept_encoding="gzip;q=0")):
        assert response.status_code == 200 and not response.has_header("Content-Encoding")
        assert response.content.decode() == pull.version.pack_json


def test_the_304_is_unchanged_whatever_the_encoding(pull: Any) -> None:
    etag = pull()["ETag"]

    for accept in ("", "gzip", "zstd"):
        response = pull(accept_encoding=accept, if_none_match=etag)
        assert response.status_code == 304 and response.content == b""
        assert response["ETag"] == etag and not response.has_header("Content-Encoding")


def test_a_version_published_before_encodings_gets_them_at_its_first_pull(pull: Any) -> None:
    PackEncoding.objects.all().delete()  # as for a version published by an older studio
    from studio.agents.pulls import _pack_body

    _pack_body.cache_clear()

    response = pull(accept_encoding="gzip")

    assert gzip.decompress(response.content).decode() == pull.version.pack_json
    assert PackEncoding.objects.filter(version=pull.version, coding="gzip").exists()


# -- Accept-Encoding, parsed ------------------------------------------------------------------------

CODINGS = st.sampled_from(["gzip", "zstd", "br", "deflate", "identity", "*", "x-gzip", "GZIP"])
QS = st.sampled_from(["", ";q=0", ";q=1", ";q=0.5", ";q=0.001", ";q=x", ";q=2", "; Q=0.7"])
HEADERS = st.lists(st.tuples(CODINGS, QS), max_size=6).map(
    lambda items: ", ".join(c + q for c, q in items)
)


@given(HEADERS)
def test_the_chosen_encoding_is_one_the_agent_accepts_with_the_highest_q(header: str) -> None:
    chosen = choose(header)

    weights: dict[str, float] = {}
    for item in filter(None, (i.strip() for i in header.split(","))):
        name, _, q = item.partition(";")
        value = q.split("=", 1)[1] if "=" in q else "1"
        try:
            weight = float(value)
        except ValueError:
            weight = 0.0
        weights[name.strip().lower()] = weight if 0 <= weight <= 1 else 0.0

    def q(coding: str) -> float:
        return weights.get(coding, weights.get("*", 0.0))

    if chosen is None:
        assert all(q(c) == 0 for c in OFFERED)
    else:
        assert chosen in OFFERED and q(chosen) > 0
        assert q(chosen) == max(q(c) for c in OFFERED)


@given(st.text(max_size=200))
def test_any_header_is_answered_without_an_error(header: str) -> None:
    assert choose(header) in (None, *OFFERED)
