"""Any pack within the documented limits builds a Router and routes.

Specified in docs/pack-format.md, Limits.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from routing_core import PackError, Router, load_pack
from routing_core.pack import MAX_DESCRIPTION, MAX_TEXT
from routing_core.scorers._terms import MAX_WORD_CHARS, message_words
from tests.routing_core.conftest import minimal_doc

letters = st.characters(categories=("L", "Nd"))
# A "word" here is one run of letters and digits, as long as a field allows.
long_word = st.one_of(
    st.text(letters, min_size=1, max_size=40),
    st.builds(lambda c, n: c * n, letters, st.integers(1, MAX_TEXT)),
)
description = st.one_of(
    st.text(max_size=200), st.builds(lambda c, n: c * n, letters, st.integers(1, MAX_DESCRIPTION))
)
text = st.one_of(long_word, st.text(max_size=200), st.lists(long_word, max_size=3).map(" ".join))


def test_a_route_text_of_one_word_at_the_field_limit_builds_and_routes():
    doc = minimal_doc()
    doc["routes"][0]["examples"] = ["a" * MAX_TEXT, "b" * 999 + " " + "c" * 1000]
    doc["routes"][1]["description"] = "d" * MAX_DESCRIPTION
    router = Router(load_pack(doc))
    assert router.route("a" * MAX_TEXT).route == "billing"


def test_two_capped_words_make_a_bigram_within_the_model_term_limit():
    assert 2 * MAX_WORD_CHARS + 1 <= MAX_TEXT


def test_normal_words_are_not_cut():
    assert message_words("Where is my parcel? " * 100) == ["where", "is", "my", "parcel"] * 100


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "description": st.text(letters, max_size=MAX_DESCRIPTION),
                "examples": st.lists(text, max_size=3),
            }
        ),
        min_size=1,
        max_size=4,
    ),
    text,
)
def test_any_pack_within_the_limits_builds_and_routes(routes, message):
    doc = minimal_doc(routes=[{"name": f"r{i}", **r} for i, r in enumerate(routes)])
    try:
        pack = load_pack(doc)
    except PackError:
        return  # e.g. a blank example: refused with a reason, which is fine
    decision = Router(pack).route(message)
    assert decision.route is None or decision.route in pack.route_names
