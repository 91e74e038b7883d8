"""The cascade: each tier only when the one before was not decisive, and who paid for what."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core import PackError, Router, load_pack
from routing_core.cases import Case
from routing_core.evaluate import evaluate
from routing_core.scorers import Tier
from routing_core.scorers.base import ScorerInfo
from tests.routing_core.chat_server import ChatServer, Reply, answers
from tests.routing_core.conftest import TableScorer

# How the profile's own texts are learned, without the built-in background (conftest).
pytestmark = pytest.mark.usefixtures("without_background")

TIE = "card payment problem"  # the lexical scorer splits it evenly: billing / payments
CLEAR = "invoice copy"  # lexically decisive: billing


def cascade_doc(base_url, *, decider=False, tiers=("lexical", "llm"), **extra):
    llm = {"kind": "llm", "base_url": base_url, "model": "m"}
    scorer = {
        "kind": "cascade",
        "tiers": [llm if t == "llm" else {"kind": t} for t in tiers],
    }
    if decider:
        scorer["decider"] = llm
    return {
        "profile": {"slug": "t", "name": "T"},
        "routes": [
            {"name": "billing", "examples": [TIE, CLEAR]},
            {"name": "payments", "examples": [TIE, "wallet setup"]},
            {"name": "human", "examples": ["let me talk to someone"]},
        ],
        "scorer": scorer,
        **extra,
    }


def test_a_decisive_lexical_tier_never_calls_the_llm():
    with ChatServer(answers("payments")) as server:
        d = Router(cascade_doc(server.base_url)).route(CLEAR)
    assert (d.route, d.by, d.scorer.name) == ("billing", "scorer", "lexical")
    assert server.seen == []
    assert [(t.name, t.decided, t.verdict) for t in d.tiers] == [("lexical", True, "move")]


def test_a_lexical_near_tie_goes_to_the_llm_over_the_contenders_only():
    with ChatServer(answers("payments")) as server:
        d = Router(cascade_doc(server.base_url)).route(TIE)
    assert (d.route, d.by, d.scorer.name, d.scorer.categorical) == (
        "payments",
        "scorer",
        "llm",
        True,
    )
    assert [(t.name, t.decided, t.verdict) for t in d.tiers] == [
        ("lexical", False, "menu"),
        ("llm", True, "move"),
    ]
    prompt = server.seen[0].system
    assert "- billing" in prompt and "- payments" in prompt and "- human" not in prompt
    assert d.usage.total_tokens == 102 and d.tiers[1].usage.total_tokens == 102


def test_an_unmatched_turn_is_not_sent_to_the_llm():
    with ChatServer(answers("billing")) as server:
        d = Router(cascade_doc(server.base_url)).route("zzzz qqq")
    assert d.verdict == "unmatched" and server.seen == []


@pytest.mark.parametrize("reply", [Reply(status=503), Reply("no idea, sorry")])
def test_a_failing_or_abstaining_llm_leaves_the_lexical_menu_standing(reply):
    with ChatServer(answers(reply)) as server:
        d = Router(cascade_doc(server.base_url)).route(TIE)
    assert (d.route, d.by, d.offered) == (None, "menu", ("billing", "payments"))
    assert [(t.name, t.decided) for t in d.tiers] == [("lexical", True), ("llm", False)]
    llm = d.tiers[1]
    assert (llm.error is not None) == (reply.status != 200)
    assert (llm.note is not None) == (reply.status == 200)


def test_a_near_tie_with_the_incumbent_asks_the_llm_which_may_keep_it():
    with ChatServer(answers("billing")) as server:
        d = Router(cascade_doc(server.base_url)).route(TIE, incumbent="billing")
    assert (d.route, d.verdict, d.by) == ("billing", "stay", "scorer")
    assert d.tiers[-1].decided


def test_the_decider_resolves_a_menu_to_an_offered_route():
    with ChatServer(answers("payments")) as server:
        d = Router(cascade_doc(server.base_url, decider=True, tiers=["lexical"])).route(TIE)
    assert (d.route, d.by, d.verdict) == ("payments", "decider", "move")
    assert [(t.name, t.decided) for t in d.tiers] == [("lexical", False), ("decider", True)]
    prompt = server.seen[0].system
    assert "- billing" in prompt and "- none" in prompt
    assert "- human" not in prompt and "- stay" not in prompt  # cold: nothing to stay on


def test_the_decider_may_stay_mid_conversation():
    with ChatServer(answers("stay")) as server:
        # Judged alone (the incumbent's prior would keep human alive and the turn on it):
        policy = {"floor": 0.01, "conversation": "ignore"}
        doc = cascade_doc(server.base_url, decider=True, tiers=["lexical"], policy=policy)
        router = Router(doc)
        # human is the incumbent and scores under the floor, so the tie offers a menu with STAY
        d = router.route(TIE, incumbent="human")
    assert "- stay: keep the current route (human)" in server.seen[0].system
    assert (d.route, d.by, d.verdict) == ("human", "decider", "stay")


def test_the_deciders_none_sends_the_turn_to_the_default_route():
    with ChatServer(answers("none")) as server:
        doc = cascade_doc(server.base_url, decider=True, tiers=["lexical"], default_route="human")
        d = Router(doc).route(TIE)
    assert (d.route, d.by) == ("human", "default")
    assert d.tiers[-1].name == "decider" and d.tiers[-1].verdict == "unmatched"


@pytest.mark.parametrize("reply", [Reply("human"), Reply(status=500), Reply(raw=b"{")])
def test_an_off_menu_or_failed_decider_leaves_the_menu_for_the_agent(reply):
    with ChatServer(answers(reply)) as server:
        d = Router(cascade_doc(server.base_url, decider=True, tiers=["lexical"])).route(TIE)
    assert (d.route, d.by, d.offered) == (None, "menu", ("billing", "payments"))
    assert d.tiers[-1].name == "decider" and not d.tiers[-1].decided


def test_the_event_carries_every_tier_and_stays_json_safe():
    with ChatServer(answers("payments")) as server:
        event = Router(cascade_doc(server.base_url)).route(TIE).to_event()
    json.dumps(event, allow_nan=False)
    assert [t["name"] for t in event["tiers"]] == ["lexical", "llm"]
    assert event["usage"]["total"] == 102 and event["tiers"][1]["usage"]["cached"] == 40


def test_eval_reports_what_each_tier_decided_and_spent():
    cases = [Case(CLEAR, "billing"), Case(TIE, "payments"), Case(TIE, "payments")]
    with ChatServer(answers("payments")) as server:
        report = evaluate(Router(cascade_doc(server.base_url)), cases)
    out = report.to_dict()
    assert out["decided_by"] == {"llm": 2, "lexical": 1}
    assert out["tiers"]["lexical"]["ran"] == 3 and out["tiers"]["lexical"]["decided"] == 1
    assert out["tiers"]["llm"]["ran"] == 2 and out["tiers"]["llm"]["share"] == 0.6667
    assert out["tiers"]["llm"]["tokens"] == {"input": 200, "output": 4, "cached": 80, "total": 204}
    assert out["tiers"]["lexical"]["tokens"]["total"] == 0
    assert set(out["tiers"]["llm"]["latency_us"]) == {"p50", "p99", "mean"}
    assert out["in_scope_accuracy"] == 1.0


def test_a_tier_with_its_own_margin_judges_with_it_and_records_the_policy_used():
    from routing_core.cascade import Cascade
    from routing_core.policy import Policy

    table = {"m": {"a": 0.60, "b": 0.55}}
    wide = Tier(TableScorer(table), near_tie_margin=0.01)
    outcome = Cascade([wide], ["a", "b"]).run("m", None, Policy(near_tie_margin=0.15))
    assert outcome.verdict is not None and outcome.verdict.kind == "move"
    assert outcome.policy.near_tie_margin == 0.01


def test_a_failing_first_tier_hands_the_turn_to_the_next():
    from routing_core.cascade import Cascade
    from routing_core.policy import Policy

    broken = Tier(TableScorer({}, raises=True))
    working = TableScorer({"m": {"a": 0.9, "b": 0.1}})
    working.info = ScorerInfo("backup", floor=0.0)
    outcome = Cascade([broken, Tier(working)], ["a", "b"]).run("m", None, Policy())
    assert outcome.verdict is not None and outcome.verdict.to == "a"
    assert outcome.error == "table: RuntimeError: scorer backend down"
    assert [(r.name, r.decided) for r in outcome.records] == [("table", False), ("backup", True)]


def test_a_tier_that_takes_a_message_reads_it_after_a_decisive_verdict_and_stands():
    """A later tier that takes a message (a hybrid's test for a language none of the routes
    are in) runs on it however decisive the tier before it was, and its verdict stands; on
    a message it does not take, a decisive verdict still ends the cascade."""
    from routing_core.cascade import Cascade
    from routing_core.policy import Policy

    table = {"tempo di pagare": {"a": 0.9, "b": 0.1}, "pay now": {"a": 0.9, "b": 0.1}}
    words = TableScorer(table)
    meaning = TableScorer({"tempo di pagare": {"a": 0.05, "b": 0.95}})
    meaning.info = ScorerInfo("hybrid", floor=0.0)
    taken: list[str] = []

    def foreign(text: str) -> bool:
        taken.append(text)
        return text == "tempo di pagare"

    cascade = Cascade([Tier(words), Tier(meaning, takes=foreign)], ["a", "b"])
    italian = cascade.run("tempo di pagare", None, Policy())
    assert italian.verdict is not None and italian.verdict.to == "b"
    assert [(r.name, r.verdict, r.decided) for r in italian.records] == [
        ("table", "move", False),
        ("hybrid", "move", True),
    ]
    english = cascade.run("pay now", None, Policy())
    assert english.verdict is not None and english.verdict.to == "a"
    assert [(r.name, r.decided) for r in english.records] == [("table", True)]
    assert taken == ["tempo di pagare", "pay now"]
    # A tier that takes nothing is asked only after an open verdict, as before.
    plain = Cascade([Tier(words), Tier(meaning)], ["a", "b"]).run("tempo di pagare", None, Policy())
    assert [r.name for r in plain.records] == ["table"]


def test_a_tier_whose_test_fails_takes_nothing_and_the_turn_stands():
    from routing_core.cascade import Cascade
    from routing_core.policy import Policy

    words = TableScorer({"m": {"a": 0.9, "b": 0.1}})
    meaning = TableScorer({"m": {"a": 0.1, "b": 0.9}})

    def broken(text: str) -> bool:
        raise RuntimeError("language model missing")

    outcome = Cascade([Tier(words), Tier(meaning, takes=broken)], ["a", "b"]).run(
        "m", None, Policy()
    )
    assert outcome.verdict is not None and outcome.verdict.to == "a"
    assert [(r.name, r.decided) for r in outcome.records] == [("table", True)]


def test_take_foreign_is_for_a_later_hybrid_tier_of_a_cascade_only():
    """The first tier reads every message already, and a scorer alone has no tier before it:
    either saying `take_foreign` is refused with its path, not ignored."""
    doc = cascade_doc("http://127.0.0.1:1/v1")
    doc["scorer"] = {"kind": "cascade", "tiers": [{"kind": "hybrid", "take_foreign": True}]}
    with pytest.raises(PackError) as caught:
        load_pack(doc)
    assert any(
        p == "scorer" and "take_foreign is for a later tier" in m for p, m in caught.value.errors
    ), caught.value.errors
    doc["scorer"] = {"kind": "hybrid", "take_foreign": True}
    with pytest.raises(PackError) as caught:
        load_pack(doc)
    assert [p for p, _ in caught.value.errors] == ["scorer.take_foreign"]
    embedding = {"kind": "embedding", "take_foreign": True}
    doc["scorer"] = {"kind": "cascade", "tiers": [{"kind": "lexical"}, embedding]}
    with pytest.raises(PackError) as caught:
        load_pack(doc)
    assert [p for p, _ in caught.value.errors] == ["scorer.tiers[1].take_foreign"]


@pytest.mark.parametrize(
    ("tiers", "reason"),
    [
        ([{"kind": "lexical"}, {"kind": "lexical"}], "at most once"),
        ([{"kind": "llm", "base_url": "http://x", "model": "m"}, {"kind": "lexical"}], "last"),
        ([], "at least 1"),
        ([{"kind": "cascade", "tiers": [{"kind": "lexical"}]}], "kind is one of"),
    ],
)
def test_a_malformed_cascade_is_refused_with_its_path(tiers, reason):
    doc = cascade_doc("http://127.0.0.1:1/v1")
    doc["scorer"] = {"kind": "cascade", "tiers": tiers}
    with pytest.raises(PackError) as caught:
        load_pack(doc)
    assert any(p.startswith("scorer") and reason in m for p, m in caught.value.errors), (
        caught.value.errors
    )


def test_an_unknown_scorer_kind_names_the_kind_field():
    doc = cascade_doc("http://127.0.0.1:1/v1")
    doc["scorer"] = {"kind": "magic"}
    with pytest.raises(PackError) as caught:
        load_pack(doc)
    assert caught.value.errors[0][0] == "scorer.kind"


def test_the_eval_command_reports_tiers_in_json_and_text(tmp_path, capsys):
    from routing_core.cli import main

    cases = tmp_path / "cases.jsonl"
    rows = [{"text": CLEAR, "expected": "billing"}, {"text": TIE, "expected": "payments"}]
    cases.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with ChatServer(answers("payments")) as server:
        pack = tmp_path / "pack.json"
        pack.write_text(json.dumps(cascade_doc(server.base_url)))
        assert main(["eval", str(pack), str(cases), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert main(["eval", str(pack), str(cases)]) == 0
        text = capsys.readouterr().out
    assert report["decided_by"] == {"lexical": 1, "llm": 1}
    assert report["tiers"]["llm"]["tokens"]["total"] == 102
    assert "decided by:         lexical 1, llm 1" in text
    assert "tier llm" in text and "102 tokens" in text


scores = st.one_of(
    st.floats(min_value=-1, max_value=1), st.sampled_from([math.nan, math.inf, -math.inf])
)


@settings(max_examples=150, deadline=None)
@given(
    first=st.tuples(scores, scores, scores),
    second=st.tuples(scores, scores, scores),
    second_fails=st.booleans(),
    incumbent=st.sampled_from([None, "a", "c"]),
    margin=st.floats(min_value=0, max_value=1),
)
def test_a_cascade_always_ends_with_at_most_one_deciding_tier(
    first, second, second_fails, incumbent, margin
):
    from routing_core.cascade import Cascade
    from routing_core.policy import Policy

    names = ["a", "b", "c"]
    cheap = TableScorer({"m": dict(zip(names, first, strict=True))})
    costly = TableScorer({"m": dict(zip(names, second, strict=True))}, raises=second_fails)
    costly.info = ScorerInfo("costly", floor=0.0)
    tiers = [Tier(cheap), Tier(costly, near_tie_margin=margin)]
    outcome = Cascade(tiers, names).run("m", incumbent, Policy())
    decided = [r for r in outcome.records if r.decided]
    assert len(decided) == (0 if outcome.verdict is None else 1)
    assert [r.name for r in outcome.records][:1] == ["table"]
    if outcome.records[0].verdict is not None and len(outcome.records) == 1:
        assert outcome.verdict is not None and outcome.verdict.decisive
