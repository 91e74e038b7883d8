"""The Router: tiers, tier-3 fallbacks, the Decision and its event.

Specified in docs/pack-format.md: Tier 3, Failures, The decision.
"""

from __future__ import annotations

import json
import math
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core import Router, load_pack
from routing_core.policy import Policy
from tests.routing_core.conftest import TableScorer, minimal_doc

TABLE = {
    "why was I charged": {"billing": 0.71, "shipping": 0.29},
    "both": {"billing": 0.50, "shipping": 0.45},
    "billing-ish": {"billing": 0.40, "shipping": 0.05},
    "tie, human alive": {"billing": 0.50, "shipping": 0.45, "human": 0.1},
}


def router(doc=None, **scorer_options):
    return Router(load_pack(doc or minimal_doc()), scorer=TableScorer(TABLE, **scorer_options))


def test_a_decisive_scorer_win_moves_with_its_terms_as_evidence():
    d = router().route("why was I charged")
    assert (d.route, d.by, d.verdict, d.decisive) == ("billing", "scorer", "move", True)
    assert d.runner_up is not None and d.runner_up.route == "shipping"
    assert d.evidence is not None and d.evidence.source == "scorer"
    assert [t.term for t in d.evidence.terms] == ["why", "was", "I", "charged"]


def test_a_decisive_win_for_the_incumbent_stays_by_the_scorer():
    d = router().route("why was I charged", incumbent="billing")
    assert (d.route, d.by, d.verdict, d.from_route) == ("billing", "scorer", "stay", "billing")


def test_a_near_tie_mid_conversation_stays_by_continuity():
    d = router().route("tie, human alive", incumbent="human")
    assert (d.route, d.by, d.verdict, d.decisive) == ("human", "continuity", "stay", False)


def test_a_near_tie_cold_offers_a_menu_with_relevance():
    d = router().route("both")
    assert (d.route, d.by, d.verdict, d.offered) == (None, "menu", "menu", ("billing", "shipping"))
    assert d.stay_offered is False
    text = d.menu_text()
    assert text is not None
    assert "- billing (≈62%): invoices and charges" in text and "offline scorer" in text


def test_a_menu_mid_conversation_offers_stay_when_the_incumbent_is_dead():
    # "both" alone is a short answer that stays by rule when the router follows the
    # conversation (test_conversation.py); judged alone, the tie is a menu.
    ignore = Policy(conversation="ignore")
    d = router().route("both", incumbent="human", policy=ignore)  # human: 0.0 at floor 0.0
    # incumbent at the floor: the tie is between new candidates only
    assert (d.verdict, d.offered, d.stay_offered) == ("menu", ("billing", "shipping"), True)
    assert "STAY: keep the current route (human)" in (d.menu_text() or "")


def test_a_rule_decides_before_the_scorer_with_the_matched_text():
    doc = minimal_doc(rules=[{"route": "human", "match": {"keywords": ["agent", "real person"]}}])
    d = router(doc).route("I want a REAL   person")
    assert (d.route, d.by, d.verdict, d.decisive) == ("human", "rule", "move", True)
    assert d.evidence is not None
    assert (d.evidence.text, d.evidence.keyword, d.evidence.rule) == (
        "REAL person",
        "real person",
        0,
    )
    assert d.action is not None and (d.action.kind, d.action.message) == ("stuck", "Handing over.")


def test_unmatched_goes_to_the_default_route_when_there_is_one():
    d = router(minimal_doc(default_route="human")).route("nothing at all")
    assert (d.route, d.by, d.verdict) == ("human", "default", "unmatched")


def test_unmatched_without_a_default_offers_the_full_menu():
    d = router().route("nothing at all")
    assert (d.route, d.by, d.verdict) == (None, "menu", "unmatched")
    assert d.offered == ("billing", "shipping", "human")


def test_rails_offers_no_menu_and_records_by_none():
    doc = minimal_doc(policy={"strictness": "rails"})
    for message in ("both", "nothing at all"):
        d = router(doc).route(message)
        assert (d.by, d.offered, d.menu_text()) == ("none", (), None)


@pytest.mark.parametrize(
    ("strictness", "message", "route", "admitted"),
    [
        ("assist", "why was I charged", "shipping", True),
        ("assist", "why was I charged", "ghost", False),
        ("guard", "both", "shipping", True),
        ("guard", "both", "human", False),
        ("guard", "why was I charged", "shipping", False),
        ("rails", "both", "billing", False),
    ],
)
def test_admits_follows_the_strictness(strictness, message, route, admitted):
    d = router(minimal_doc(policy={"strictness": strictness})).route(message)
    assert d.admits(route) is admitted


def test_a_failing_scorer_cold_offers_the_full_menu_and_records_the_error():
    d = router(raises=True).route("why was I charged")
    assert (d.route, d.by, d.verdict) == (None, "menu", "menu")
    assert d.offered == ("billing", "shipping", "human")
    assert d.scorer.error == "RuntimeError: scorer backend down"


def test_a_failing_scorer_mid_conversation_stays():
    d = router(raises=True).route("why was I charged", incumbent="shipping")
    assert (d.route, d.by, d.verdict) == ("shipping", "continuity", "stay")


def test_an_unknown_incumbent_is_dropped_and_recorded():
    d = router().route("both", incumbent="ghost")
    assert (d.from_route, d.dropped_incumbent, d.verdict) == (None, "ghost", "menu")


def test_a_policy_override_judges_this_call_only():
    r = router()
    assert r.route("both", policy=Policy(near_tie_margin=0.01)).route == "billing"
    assert r.route("both").verdict == "menu"
    assert r.route("billing-ish", policy=r.policy_with(floor=0.5)).verdict == "unmatched"


def test_policy_with_refuses_out_of_range_values_by_path():
    from routing_core import PackError

    with pytest.raises(PackError) as caught:
        router().policy_with(near_tie_margin=4)
    assert caught.value.errors[0][0] == "policy.near_tie_margin"


def test_the_route_action_is_attached():
    doc = minimal_doc()
    doc["routes"][1]["action"] = {"kind": "delegate", "agent": "order-agent"}
    d = router(doc).route("both", policy=Policy(near_tie_margin=0.0))
    assert d.action is not None and d.action.kind == "answer"
    d = router(doc).route("tie, human alive", incumbent="shipping")
    assert d.action is not None and (d.action.kind, d.action.agent) == ("delegate", "order-agent")


def test_a_stuck_route_without_a_message_falls_back_to_its_description():
    doc = minimal_doc(default_route="human")
    doc["routes"][2] = {"name": "human", "description": "ask a person", "action": {"kind": "stuck"}}
    d = router(doc).route("nothing")
    assert d.action is not None and d.action.message == "ask a person"


def test_tools_are_narrowed_and_shadow_mode_keeps_them_bound(support_doc):
    d = Router(load_pack(support_doc), scorer=TableScorer({})).route("please refund my order")
    assert d.triage is not None and d.triage.label == "action"
    assert d.tools.kept == ("hydrate_context", "refund_order")
    assert d.tools.bound == d.tools.kept and "track_parcel" in d.tools.dropped
    assert d.tokens_saved > 0
    support_doc["triage"]["mode"] = "shadow"
    shadow = Router(load_pack(support_doc), scorer=TableScorer({})).route("please refund my order")
    assert len(shadow.tools.bound) == 6 and shadow.tools.dropped == d.tools.dropped


def test_triage_off_binds_every_tool_and_records_no_triage(support_doc):
    support_doc["triage"]["mode"] = "off"
    d = Router(load_pack(support_doc), scorer=TableScorer({})).route("please refund my order")
    assert d.triage is None and len(d.tools.bound) == 6 and d.tools.dropped == ()


def test_the_event_is_json_safe_with_non_finite_scores_as_strings():
    table = {"odd": {"billing": math.nan, "shipping": math.inf, "human": 0.2}}
    d = Router(load_pack(minimal_doc()), scorer=TableScorer(table)).route("odd")
    event = json.loads(json.dumps(d.to_event(), allow_nan=False))
    scores = {r["route"]: r["score"] for r in event["ranked"]}
    assert scores == {"billing": "nan", "shipping": "inf", "human": 0.2}
    assert event["schema"] == "route-decision/1"
    assert event["policy"]["effective_floor"] == 0.0


def test_the_event_has_the_documented_keys():
    event = router().route("why was I charged").to_event()
    assert set(event) == {
        "schema",
        "pack",
        "route",
        "by",
        "verdict",
        "from_route",
        "dropped_incumbent",
        "offered",
        "stay_offered",
        "decisive",
        "ranked",
        "runner_up",
        "evidence",
        "action",
        "triage",
        "tools",
        "usage",
        "policy",
        "scorer",
        "tiers",
        "regex",
        "elapsed_us",
    }
    assert event["tiers"] == [
        {
            "name": "table",
            "decided": True,
            "verdict": "move",
            "elapsed_us": event["tiers"][0]["elapsed_us"],
            "usage": {"input": 0, "output": 0, "cached": 0, "total": 0},
            "error": None,
            "note": None,
        }
    ]
    assert event["runner_up"] == {"route": "shipping", "gap": 0.207}


@pytest.mark.parametrize(
    "message",
    [
        "",
        "   ",
        "x" * 1_000_000,
        b"\xff\xfe\x00binary",
        None,
        42,
        "\ud800 lone surrogate",
        "".join(chr(c) for c in range(0x20, 0x2FFFF, 97)),
        "\U0010ffff" * 10,
    ],
)
def test_route_never_raises_on_odd_messages(support_doc, message):
    d = Router(load_pack(support_doc)).route(message)
    assert d.verdict in ("move", "stay", "menu", "unmatched")
    assert math.fsum(r.relevance for r in d.ranked) == pytest.approx(1.0)


def test_it_is_safe_to_route_from_many_threads(support_doc):
    r = Router(load_pack(support_doc))
    messages = ["where is my parcel", "refund my order", "reset my password", "get me a human"]
    expected = {m: r.route(m).to_event() for m in messages}
    mismatches: list[str] = []

    def work() -> None:
        for _ in range(50):
            for m in messages:
                event = r.route(m).to_event()
                event["elapsed_us"] = expected[m]["elapsed_us"]
                event["tiers"] = expected[m]["tiers"]  # timings differ; the rest must not
                event["regex"] = expected[m]["regex"]
                if event != expected[m]:
                    mismatches.append(m)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mismatches == []


@settings(max_examples=150, deadline=None)
@given(
    message=st.text(max_size=200), incumbent=st.sampled_from([None, "billing", "human", "ghost"])
)
def test_route_always_returns_a_well_formed_decision(support_doc_once, message, incumbent):
    r = support_doc_once
    d = r.route(message, incumbent)
    names = set(r.pack.route_names)
    assert d.route is None or d.route in names
    assert set(d.offered) <= names
    assert math.fsum(x.relevance for x in d.ranked) == pytest.approx(1.0)
    assert len(d.ranked) == len(names)
    if d.verdict == "menu" and d.by == "menu" and d.scorer.error is None:
        assert 2 <= len(d.offered) <= max(2, d.policy.menu_size)
    if d.action is not None and d.action.kind == "stuck":
        assert d.action.message
    json.dumps(d.to_event(), allow_nan=False)


@pytest.fixture(scope="module")
def support_doc_once():
    from tests.routing_core.conftest import PACKS

    return Router(load_pack(PACKS / "support.json"))


def test_an_event_without_scorer_terms_never_computes_them() -> None:
    """A server answers without `explain` on nearly every turn: the terms stay uncomputed."""
    from routing_core.decision import Evidence
    from routing_core.scorers.base import Term

    calls: list[int] = []

    def explain() -> list[Term]:
        calls.append(1)
        return [Term("refund", 0.5)]

    scorer = Evidence("scorer", "refunds", explain=explain)
    assert scorer.to_event(terms=False)["terms"] == [] and calls == []
    assert scorer.to_event()["terms"] == [{"term": "refund", "weight": 0.5, "kind": "word"}]
    assert calls == [1]
    rule = Evidence("rule", "refunds", rule=0, terms=[Term("refund", 1.0)])
    assert rule.to_event(terms=False)["terms"] != [], "only a scorer's terms are left out"
