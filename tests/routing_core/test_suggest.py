"""Suggestions come from a real loopback endpoint; the router judges every one of them."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from routing_core import Router, load_pack
from routing_core.pack import LlmScorerSettings
from routing_core.scorers.base import ScorerFailure
from routing_core.scorers.llm import ChatClient
from routing_core.suggest import parse_suggestions, suggest
from tests.routing_core.chat_server import ChatServer, Reply, answers
from tests.routing_core.conftest import PACKS

# How the profile's own texts are learned, without the built-in background (conftest).
pytestmark = pytest.mark.usefixtures("without_background")


@pytest.fixture(scope="module")
def router():
    return Router(load_pack(PACKS / "support.json"))


def client(server, **settings):
    return ChatClient(
        LlmScorerSettings(
            kind="llm", base_url=server.base_url, model="writer", max_output_tokens=256, **settings
        )
    )


def test_good_suggestions_are_scored_and_one_that_lands_elsewhere_is_flagged(router):
    proposals = [
        "my card was billed two times",
        "my invoice shows a wrong charge",
        "where is my parcel right now",
        "could you send me last month's invoice",
    ]
    with ChatServer(answers(json.dumps(proposals))) as server:
        batch = suggest(client(server), router, "billing", "examples", count=4)
    assert [(s.text, s.lands_on, s.fits) for s in batch.suggestions] == [
        ("my card was billed two times", "billing", True),
        ("my invoice shows a wrong charge", "billing", True),
        ("where is my parcel right now", "shipping", False),
        ("could you send me last month's invoice", None, False),
    ]
    assert (batch.suggestions[3].verdict, batch.suggestions[3].offered) == (
        "menu",
        ("human", "billing"),
    )
    assert batch.usage.total_tokens == 102
    request = server.seen[0]
    assert request.body["messages"][0]["content"].endswith(
        "JSON array of strings and nothing else."
    )
    assert (
        "Route: billing" in request.last_user
        and "- shipping: delivery options" in request.last_user
    )


def test_suggestions_that_repeat_any_routes_examples_or_each_other_are_dropped(router):
    proposals = [
        "Where is my PARCEL?",
        "track my package",
        "why was I charged twice",
        "refund me",
        "refund me!",
    ]
    with ChatServer(answers(json.dumps(proposals))) as server:
        batch = suggest(client(server), router, "refunds", "examples")
    assert [s.text for s in batch.suggestions] == ["refund me"]
    assert batch.repeats == (
        "Where is my PARCEL?",
        "track my package",
        "why was I charged twice",
        "refund me!",
    )


def test_never_phrases_that_land_on_the_route_today_are_flagged(router):
    with ChatServer(
        answers("- I want a refund for my invoice\n- what is the weather like")
    ) as server:
        batch = suggest(client(server), router, "refunds", "never")
    assert [(s.text, s.fits) for s in batch.suggestions] == [
        ("I want a refund for my invoice", False),
        ("what is the weather like", True),
    ]
    assert "must not go there" in server.seen[0].last_user


def test_a_prose_answer_holds_no_suggestion(router):
    with ChatServer(
        answers("Sure! Billing is about invoices, so people might ask about those.")
    ) as server:
        batch = suggest(client(server), router, "billing", "examples")
    assert batch.suggestions == () and batch.answer_was_unreadable


def test_an_error_status_and_a_slow_answer_raise_a_scorer_failure(router):
    with (
        ChatServer(answers(Reply(status=500))) as server,
        pytest.raises(ScorerFailure, match="HTTP 500"),
    ):
        suggest(client(server), router, "billing", "examples")
    with ChatServer(answers(Reply('["x"]', delay=2.0))) as server:
        started = time.monotonic()
        with pytest.raises(ScorerFailure, match="timed out"):
            suggest(client(server, timeout_s=0.3), router, "billing", "examples")
        assert time.monotonic() - started < 1.5


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('Here you go: ["a b", "c"]', ["a b", "c"]),
        ("1. first one\n2) second one\n* third", ["first one", "second one", "third"]),
        ('["ok", 3]', None),
        ("no list here", None),
        ('["  spaced   out  ", "\\"quoted\\""]', ["spaced out", "quoted"]),
    ],
)
def test_answers_are_read_as_a_json_array_or_a_list_and_nothing_else(answer, expected):
    assert parse_suggestions(answer) == expected


@given(st.text(max_size=400))
def test_reading_any_answer_never_raises_and_gives_short_one_line_texts(answer):
    parsed = parse_suggestions(answer)
    assert parsed is None or all(t and "\n" not in t and len(t) <= 200 for t in parsed)
