"""The LLM tier and the menu decider, against a real chat-completions server on 127.0.0.1."""

from __future__ import annotations

import time

import pytest

from routing_core import Router, load_pack
from routing_core.scorers.llm import parse_answer
from tests.routing_core.chat_server import ChatServer, Reply, answers

ALLOWED = ["billing", "orders", "human"]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("billing", "billing"),
        ("Billing.", "billing"),
        ('"billing".', "billing"),
        ("`orders`", "orders"),
        ("'human',", "human"),
        ("billing,.", "billing"),  # one "." then one ",": the order the contract names
        ("billing.,", None),
        ("  orders\nbecause the user asks about a parcel", "orders"),
        ("The answer is billing", None),
        ("refunds", None),
        ("", None),
        ("   ", None),
        ("**billing**", None),
    ],
)
def test_answers_are_parsed_strictly(answer, expected):
    assert parse_answer(answer, ALLOWED) == expected


def llm_pack(base_url, **llm):
    settings = {"kind": "llm", "base_url": base_url, "model": "tiny-router", **llm}
    return {
        "profile": {"slug": "t", "name": "Test"},
        "routes": [
            {
                "name": "billing",
                "description": "invoices and charges",
                "examples": [f"billing example {i}" for i in range(8)],
            },
            {
                "name": "orders",
                "description": "an existing order",
                "action": {"kind": "delegate", "agent": "secret-order-agent"},
            },
            {
                "name": "human",
                "description": "wants a person",
                "action": {"kind": "stuck", "message": "PRIVATE handover text"},
            },
        ],
        "scorer": settings,
    }


def test_a_clean_answer_routes_there_and_adds_the_token_usage():
    with ChatServer(answers("orders")) as server:
        d = Router(llm_pack(server.base_url)).route("where is my parcel")
    assert (d.route, d.by, d.verdict) == ("orders", "scorer", "move")
    assert d.usage.to_event() == {"input": 100, "output": 2, "cached": 40, "total": 102}
    assert [(t.name, t.decided, t.usage.total_tokens) for t in d.tiers] == [("llm", True, 102)]
    assert server.seen[0].path == "/v1/chat/completions"
    assert server.seen[0].body["model"] == "tiny-router"
    assert server.seen[0].last_user == "where is my parcel"


def test_the_prompt_has_names_descriptions_and_five_examples_but_no_action_details():
    with ChatServer(answers("billing")) as server:
        Router(llm_pack(server.base_url)).route("why was I charged")
    prompt = server.seen[0].system
    for text in ("billing: invoices and charges", "orders: an existing order", "human"):
        assert text in prompt
    assert [f"billing example {i}" in prompt for i in range(8)] == [True] * 5 + [False] * 3
    assert "secret-order-agent" not in prompt and "PRIVATE" not in prompt
    assert "none" in prompt


def test_prose_gets_one_re_ask_that_quotes_the_allowed_names():
    with ChatServer(answers("I think the user means billing", '"billing".')) as server:
        d = Router(llm_pack(server.base_url)).route("why was I charged")
    assert d.route == "billing"
    assert len(server.seen) == 2
    assert "billing, orders, human, none" in server.seen[1].last_user
    assert d.usage.total_tokens == 204  # both calls are paid for


@pytest.mark.parametrize("answer", ["refunds", "Sure! Here it is", "", "none"])
def test_an_unusable_answer_after_the_re_ask_is_no_pick_and_never_a_route(answer):
    with ChatServer(answers(answer)) as server:
        d = Router(llm_pack(server.base_url)).route("hello there")
    assert len(server.seen) == (1 if answer == "none" else 2)  # at most one re-ask
    assert d.route is None and d.verdict == "unmatched"
    assert all(r.score == 0.0 for r in d.ranked)
    assert d.scorer.error is None and d.tiers[0].note is not None


def test_no_pick_falls_to_the_default_route_when_the_pack_has_one():
    with ChatServer(answers("refunds")) as server:
        doc = llm_pack(server.base_url) | {"default_route": "human"}
        d = Router(doc).route("hello there")
    assert (d.route, d.by) == ("human", "default")


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (Reply(status=500), "HTTP 500"),
        (Reply(status=429), "HTTP 429"),
        (Reply(raw=b"<html>not json</html>"), "did not answer with a chat completion"),
        (Reply(raw=b'{"choices": []}'), "did not answer with a chat completion"),
    ],
)
def test_a_transport_or_response_failure_is_recorded_and_falls_back(reply, error):
    with ChatServer(answers(reply)) as server:
        router = Router(llm_pack(server.base_url))
        cold = router.route("where is my parcel")
        warm = router.route("where is my parcel", incumbent="billing")
    assert (cold.route, cold.by, cold.offered) == (None, "menu", ("billing", "orders", "human"))
    assert error in (cold.scorer.error or "")
    assert cold.tiers[0].error is not None and cold.tiers[0].verdict is None
    assert (warm.route, warm.by, warm.verdict) == ("billing", "continuity", "stay")


def test_a_slow_endpoint_times_out_and_the_turn_falls_back():
    with ChatServer(answers(Reply("orders", delay=2.0))) as server:
        router = Router(llm_pack(server.base_url, timeout_s=0.3))
        started = time.monotonic()
        d = router.route("where is my parcel", incumbent="human")
        elapsed = time.monotonic() - started
    assert (d.route, d.by) == ("human", "continuity")
    assert "timed out" in (d.scorer.error or "")
    assert elapsed < 1.5


def test_an_unreachable_endpoint_is_a_recorded_failure():
    d = Router(llm_pack("http://127.0.0.1:9/v1", timeout_s=1)).route("where is my parcel")
    assert d.by == "menu" and "unreachable" in (d.scorer.error or "")


def test_the_key_comes_from_the_named_environment_variable(monkeypatch):
    monkeypatch.setenv("ROUTER_TEST_KEY", "sk-test-123")
    with ChatServer(answers("orders")) as server:
        Router(llm_pack(server.base_url, api_key_env="ROUTER_TEST_KEY")).route("parcel")
    assert server.seen[0].headers["Authorization"] == "Bearer sk-test-123"


def test_a_missing_key_variable_fails_the_turn_without_calling_the_endpoint(monkeypatch):
    monkeypatch.delenv("ROUTER_TEST_KEY", raising=False)
    with ChatServer(answers("orders")) as server:
        d = Router(llm_pack(server.base_url, api_key_env="ROUTER_TEST_KEY")).route("parcel")
    assert server.seen == []
    assert "ROUTER_TEST_KEY" in (d.scorer.error or "")


@pytest.mark.parametrize("key", ["sk-live-abc", "not a name", "lower_case"])
def test_a_pack_cannot_hold_a_key_only_the_name_of_a_variable(key):
    from routing_core import PackError

    with pytest.raises(PackError) as caught:
        load_pack(llm_pack("http://127.0.0.1:1/v1", api_key_env=key))
    assert caught.value.errors[0][0] == "scorer.api_key_env"


def test_a_rule_win_spends_no_tokens():
    doc = llm_pack("http://127.0.0.1:9/v1")
    doc["rules"] = [{"route": "human", "match": {"keywords": ["agent"]}}]
    with ChatServer(answers("billing")) as server:
        doc["scorer"]["base_url"] = server.base_url
        d = Router(doc).route("get me an agent")
    assert (d.route, d.by) == ("human", "rule")
    assert server.seen == [] and d.tiers == () and d.usage.total_tokens == 0
