"""Drafted test conversations come from a real loopback endpoint and are routed as conversations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from routing_core import Router, build_pack_file
from routing_core.pack import LlmScorerSettings
from routing_core.scorers.llm import ChatClient
from routing_core.suggest import draft_conversations, parse_conversations
from tests.routing_core.chat_server import ChatServer, answers

ROUTES = Path(__file__).resolve().parents[1] / "packs" / "travel_routes.json"


@pytest.fixture(scope="module")
def router() -> Router:
    return Router(build_pack_file(ROUTES, slug="travel"))


def _client(server: ChatServer) -> ChatClient:
    settings = LlmScorerSettings(
        kind="llm", base_url=server.base_url, model="writer", max_output_tokens=256
    )
    return ChatClient(settings)


def _turn(text: str, part: str, route: str) -> dict[str, str]:
    return {"user": text, "part": part, "route": route}


LOST_BAG = [
    _turn("my suitcase did not arrive", "opening", "baggage"),
    _turn("at 7 pm", "answer", "baggage"),
    _turn("yes please", "confirmation", "baggage"),
    _turn("now I need a hotel for tonight", "new topic", "hotel"),
]


def test_drafted_conversations_are_routed_turn_by_turn_and_a_wrong_turn_is_flagged(router):
    mislabelled = [*LOST_BAG[:2], _turn("ok great", "confirmation", "refund")]
    answer = json.dumps([{"turns": LOST_BAG}, {"turns": mislabelled}])
    with ChatServer(answers(answer)) as server:
        batch = draft_conversations(_client(server), router, "baggage")

    first, second = batch.conversations
    assert [(t.part, t.expected, t.routed) for t in first.turns] == [
        ("opening", "baggage", "baggage"),
        ("answer", "baggage", "baggage"),
        ("confirmation", "baggage", "baggage"),
        ("new topic", "hotel", "hotel"),
    ]
    assert first.fits and not second.fits
    assert [t.fits for t in second.turns] == [True, True, False]
    assert (second.turns[2].routed, second.turns[2].verdict) == ("baggage", "stay")
    request = server.seen[0]
    assert "Route: baggage" in request.last_user and "- hotel:" in request.last_user


def test_conversations_that_name_unknown_routes_or_open_elsewhere_are_dropped(router):
    elsewhere = [_turn("I need a hotel in Porto", "opening", "hotel"), LOST_BAG[2]]
    unknown = [LOST_BAG[0], _turn("and a rental car", "new topic", "car_rental")]
    lone = [LOST_BAG[0]]
    answer = json.dumps([elsewhere, unknown, lone, LOST_BAG])  # bare lists of turns read too
    with ChatServer(answers(answer)) as server:
        batch = draft_conversations(_client(server), router, "baggage")

    assert len(batch.conversations) == 1 and batch.dropped == 3
    assert batch.conversations[0].turns[0].text == "my suitcase did not arrive"


def test_an_answer_in_prose_is_unreadable_not_an_error(router):
    with ChatServer(answers("Sure! Here are some conversations about luggage.")) as server:
        batch = draft_conversations(_client(server), router, "baggage")

    assert batch.answer_was_unreadable and batch.conversations == ()


def test_turns_without_text_or_route_are_left_out_and_an_unknown_part_is_an_answer():
    answer = json.dumps(
        [{"turns": [{"user": "hi", "route": "x", "part": "greeting"}, {"user": "", "route": "x"},
                    {"text": "bye", "route": "y"}, "not a turn", {"user": "no route"}]}]
    )  # fmt: skip
    assert parse_conversations(answer) == [[("hi", "answer", "x"), ("bye", "answer", "y")]]
