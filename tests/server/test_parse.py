"""The server reads a request body with orjson and, for what orjson refuses, the standard
library: a message reads as the standard library reads it, and a refusal is worded as before
(docs/server.md, "Endpoints")."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from routing_core.server import api

# Any JSON the standard library writes, surrogates and controls included.
MESSAGES = st.text(alphabet=st.characters(codec=None), max_size=40)


@given(MESSAGES, st.booleans())
def test_a_body_reads_as_the_standard_library_reads_it(message: str, ascii_only: bool) -> None:
    body = json.dumps({"message": message}, ensure_ascii=ascii_only).encode(
        "utf-8", "surrogatepass"
    )
    try:
        expected = json.loads(body)["message"]
    except ValueError:
        with pytest.raises(api.ApiError) as refused:
            api.parse(api.RouteRequest, body)
        assert refused.value.code == "invalid_json"
        return
    assert api.parse(api.RouteRequest, body).message == expected


def test_what_orjson_refuses_and_the_standard_library_reads_is_still_read() -> None:
    lone = b'{"message": "\\ud800 where is my bag"}'  # an escaped lone surrogate
    assert api.parse(api.RouteRequest, lone).message == "\ud800 where is my bag"
    with pytest.raises(api.ApiError) as big:  # past 64 bits: a float to orjson, still refused
        api.parse(api.RouteRequest, b'{"message": "hi", "turn": 123456789012345678901234567890}')
    assert (big.value.status, big.value.code) == (422, "invalid_request")


def test_a_refusal_is_worded_by_the_standard_library() -> None:
    with pytest.raises(api.ApiError) as refused:
        api.parse(api.RouteRequest, b"{not json")
    assert refused.value.status == 400
    assert refused.value.message.startswith("the body is not JSON: Expecting property name")
