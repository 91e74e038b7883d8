"""The one rule for text a database cannot store: NUL characters and unpaired surrogates."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from routing_core import PackError, load_pack
from routing_core.storable import unstorable_paths, unstorable_reason
from tests.routing_core.conftest import minimal_doc


@pytest.mark.parametrize(
    ("text", "words"),
    [("a\x00b", "NUL character"), ("\ud83d", "unpaired surrogate"), ("é\udfff", "unpaired")],
)
def test_nul_and_lone_surrogates_are_named(text, words):
    reason = unstorable_reason(text)
    assert reason is not None and words in reason


@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")))
def test_any_other_text_is_storable(text):
    assert unstorable_reason(text) is None
    assert unstorable_paths({"k": text, "list": [text, "x"]}) == []


def test_every_bad_string_of_a_document_is_found_with_its_path():
    doc = {"a": ["x", "y\x00"], "b": [1, "\ud800"], "c\x00": 1, "d": {"e": "é\x00"}, "f": ["é"]}
    # Keys are checked as their object is reached, before its values.
    assert [p for p, _ in unstorable_paths(doc)] == ["$", "a[1]", "b[1]", "d.e"]
    assert unstorable_paths(doc)[0][1].startswith("a key contains a NUL")


def test_a_pack_from_json_text_with_escaped_nul_is_refused_with_the_path():
    doc = minimal_doc()
    doc["routes"][0]["examples"] = ["fine", "bad\x00"]
    with pytest.raises(PackError) as caught:
        load_pack(json.dumps(doc))
    assert [p for p, _ in caught.value.errors] == ["routes[0].examples[1]"]
