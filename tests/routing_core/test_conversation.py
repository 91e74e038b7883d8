"""Routing that follows a conversation: turns with no topic stay, real changes of topic move.

The fixture pack and its conversations (tests/packs/travel_*) were written for these tests.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from routing_core.build import build_pack_file
from routing_core.cases import Case, load_cases
from routing_core.cli import main
from routing_core.codec import dump_pack, load_pack
from routing_core.conversation import carries_no_topic, pool
from routing_core.evaluate import evaluate
from routing_core.pack import FORMAT_MINOR
from routing_core.policy import Policy, decide_scores
from routing_core.router import Router
from tests.routing_core.conftest import TableScorer, minimal_doc

PACKS = Path(__file__).resolve().parents[1] / "packs"
ROUTES = PACKS / "travel_routes.json"
CONVERSATIONS = PACKS / "travel_conversations.jsonl"
NAMES = ("baggage", "book_flight", "seats_upgrades", "hotel", "refund")


@pytest.fixture(scope="module")
def router() -> Router:
    return Router(build_pack_file(ROUTES, slug="travel"))


@pytest.mark.parametrize(
    "text",
    ["yes please", "ok great", "Sure, that is great.", "thanks!", "No, the other one",
     "at 7 pm", "for two", "vale, gracias", "oui merci", "ja, genau", "👍"],
)  # fmt: skip
def test_acknowledgements_and_short_answers_carry_no_topic(text: str) -> None:
    assert carries_no_topic(text)


@pytest.mark.parametrize(
    "text", ["yes, cancel it", "now I need a hotel", "ok, what about my bags", "refund please"]
)
def test_a_request_carries_a_topic_even_after_a_yes(text: str) -> None:
    assert not carries_no_topic(text)


@pytest.mark.parametrize("text", ["yes please", "ok great", "thank you, that is correct"])
def test_an_acknowledgement_stays_by_rule_with_the_reason(router: Router, text: str) -> None:
    d = router.route(text, "baggage")
    assert (d.verdict, d.route, d.by, d.offered) == ("stay", "baggage", "continuity", ())
    assert d.evidence is not None and d.evidence.source == "conversation"
    assert d.evidence.reason is not None and "stays on baggage" in d.evidence.reason
    assert d.to_event()["evidence"]["reason"] == d.evidence.reason


def test_a_slot_value_stays_on_the_route(router: Router) -> None:
    d = router.route("on Friday, for 2", "book_flight")
    assert (d.verdict, d.route) == ("stay", "book_flight")


def test_a_decisive_change_of_topic_moves(router: Router) -> None:
    for text, to in [("now I need a hotel for tonight", "hotel"), ("can I get a window seat too", "seats_upgrades")]:  # fmt: skip
        d = router.route(text, "baggage" if to == "hotel" else "book_flight")
        assert (d.verdict, d.route, d.decisive) == ("move", to, True), text


def test_a_cold_turn_is_judged_as_before(router: Router) -> None:
    """No incumbent, no conversation: the new rules never fire on a first turn."""
    follow = router.route("yes please")
    alone = router.route("yes please", policy=router.policy_with(conversation="ignore"))
    assert (follow.route, follow.verdict, follow.by, follow.evidence) == (
        alone.route, alone.verdict, alone.by, alone.evidence
    )  # fmt: skip
    assert follow.ranked == alone.ranked


def test_ignore_judges_every_turn_alone(router: Router) -> None:
    d = router.route("yes please", "baggage", policy=router.policy_with(conversation="ignore"))
    assert d.evidence is None or d.evidence.source != "conversation"
    assert d.route != "baggage" or d.by != "continuity"


def test_the_prior_turns_a_lean_into_a_stay_and_says_so() -> None:
    """The message alone leans to billing (0.5 vs 0.3), not surely; the incumbent's prior
    (shipping's own text scored 0.98 on shipping) keeps the turn on shipping."""
    names = ("billing", "shipping", "refunds")
    message = np.array([0.5, 0.3, 0.2])
    prior = np.array([0.01, 0.98, 0.01])
    policy = Policy(near_tie_margin=0.05)
    verdict = decide_scores(names, message, "shipping", policy, None, prior=prior)
    assert (verdict.kind, verdict.to, verdict.message_top) == ("stay", "shipping", "billing")
    ignore = Policy(near_tie_margin=0.05, conversation="ignore")
    alone = decide_scores(names, message, "shipping", ignore, prior=prior)
    assert (alone.kind, alone.to, alone.message_top) == ("move", "billing", None)


def test_the_router_says_when_the_conversation_kept_a_lean_from_moving() -> None:
    """The prior comes from the incumbent's own text ("billing. invoices and charges"),
    scored by the same scorer; the message alone leans to shipping, not surely."""
    scorer = TableScorer(
        {
            "and the other thing": {"billing": 0.25, "shipping": 0.6, "human": 0.15},
            "billing. invoices and charges": {"billing": 0.98, "shipping": 0.01, "human": 0.01},
        }
    )
    router = Router(minimal_doc(), scorer=scorer)
    d = router.route("and the other thing", "billing")
    assert (d.verdict, d.route, d.by) == ("stay", "billing", "scorer")
    assert d.evidence is not None and d.evidence.reason is not None
    assert "leaned to shipping" in d.evidence.reason
    assert [r.route for r in d.ranked][0] == "billing"  # the pooled scores judged the turn
    cold = router.route("and the other thing")
    assert (cold.route, cold.evidence and cold.evidence.reason) == ("shipping", None)


def test_route_command_prints_why_a_turn_stayed(tmp_path: Path, router: Router, capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    pack = tmp_path / "travel.json"
    pack.write_text(dump_pack(router.pack), encoding="utf-8")
    assert main(["route", str(pack), "ok great", "--incumbent", "baggage"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("stay baggage (by continuity")
    assert "why:      the message only acknowledges" in out


def test_a_message_sure_of_a_new_route_ignores_the_prior() -> None:
    names = ("billing", "shipping", "refunds")
    prior = np.array([0.0001, 0.9998, 0.0001])
    verdict = decide_scores(names, [0.85, 0.1, 0.05], "shipping", Policy(), prior=prior)
    assert (verdict.kind, verdict.to) == ("move", "billing")


def test_a_true_near_tie_mid_conversation_still_offers_a_menu_with_stay() -> None:
    """Two new routes tie and the incumbent is at the floor: a menu, as before; the router
    offers STAY beside it."""
    names = ("billing", "shipping", "refunds")
    prior = np.array([0.3, 0.3, 0.4])  # the incumbent's text is no help here
    verdict = decide_scores(
        names, [0.46, 0.44, 0.0], "refunds", Policy(floor=0.0), None, prior=prior
    )
    assert (verdict.kind, verdict.offered) == ("menu", ("billing", "shipping"))


def test_a_near_tie_menu_mid_conversation_offers_stay() -> None:
    """The router pools with the prior made from the incumbent's own text (here `human`,
    which has no description); the message gives it nothing, so the tie is a menu."""
    scorer = TableScorer(
        {
            "a charge for my parcel": {"billing": 0.46, "shipping": 0.44},
            "human": {"human": 0.98, "billing": 0.01, "shipping": 0.01},
        }
    )
    router = Router(minimal_doc(), scorer=scorer)
    d = router.route("a charge for my parcel", "human")
    assert (d.verdict, d.offered, d.stay_offered) == ("menu", ("billing", "shipping"), True)
    assert "STAY: keep the current route (human)" in (d.menu_text() or "")


def test_pooling_keeps_the_messages_total_and_order_of_equals() -> None:
    scores = np.array([0.2, 0.2, 0.4])  # 0.2 left to out of scope
    pooled = pool(scores, np.array([0.5, 0.5, 0.0]))
    assert pooled.sum() == pytest.approx(0.8)
    assert pooled[0] == pytest.approx(pooled[1]) and pooled[0] > pooled[2]


def test_the_conversation_figures_on_the_fixture(router: Router) -> None:
    cases = load_cases(CONVERSATIONS)
    report = evaluate(router, cases)
    talk = report.conversations
    assert talk is not None
    assert (talk.conversations, talk.turns, talk.stay_turns, talk.move_turns) == (3, 12, 6, 3)
    assert talk.first_turns == 3
    assert (talk.turn_accuracy, talk.stay_accuracy, talk.move_accuracy) == (1.0, 1.0, 1.0)
    alone = evaluate(router, cases, policy=router.policy_with(conversation="ignore"))
    assert alone.conversations is not None
    assert alone.conversations.stay_accuracy is not None
    assert alone.conversations.stay_accuracy < 1.0  # "yes please" left baggage


def test_wrong_turns_come_with_the_conversation_around_them(router: Router) -> None:
    cases = [
        Case("my suitcase did not arrive", "baggage", conversation="c"),
        Case("yes please", "baggage", conversation="c"),
        Case("on Friday", "hotel", conversation="c"),  # should have moved: it stays
        Case("thanks", "hotel", conversation="c"),
        Case("refund my ticket please", "refund"),  # a lone turn: not a conversation's
    ]
    report = evaluate(router, cases)
    talk = report.conversations
    assert talk is not None
    assert (talk.turns, talk.stay_turns, talk.move_turns) == (4, 2, 1)
    assert talk.move_accuracy == 0.0 and talk.first_accuracy == 1.0
    assert [(w.position, w.kind) for w in talk.wrong] == [(3, "move"), (4, "stay")]
    shown = talk.to_dict(report.results)["wrong"][0]
    assert [t["text"] for t in shown["turns"]] == [c.text for c in cases[:4]]
    assert [t["this"] for t in shown["turns"]] == [False, False, True, False]
    assert shown["turns"][2]["predicted"] == "baggage"


def test_single_turn_cases_have_no_conversation_figures(router: Router) -> None:
    report = evaluate(router, [Case("refund my ticket please", "refund")])
    assert report.conversations is None
    assert report.to_dict()["conversations"] is None


def test_eval_json_reports_the_conversation_figures(
    tmp_path: Path, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = tmp_path / "travel.json"
    pack.write_text(dump_pack(router.pack), encoding="utf-8")
    assert main(["eval", str(pack), str(CONVERSATIONS), "--json"]) == 0
    talk = json.loads(capsys.readouterr().out)["conversations"]
    assert set(talk) == {
        "conversations", "turns", "turn_accuracy", "first_accuracy", "stay_accuracy",
        "move_accuracy", "stay_turns", "move_turns", "first_turns", "wrong_turns", "wrong",
    }  # fmt: skip
    assert (talk["turns"], talk["turn_accuracy"], talk["wrong"]) == (12, 1.0, [])


def test_eval_text_prints_the_conversation_figures(
    tmp_path: Path, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = tmp_path / "travel.json"
    pack.write_text(dump_pack(router.pack), encoding="utf-8")
    main(["eval", str(pack), str(CONVERSATIONS)])
    out = capsys.readouterr().out
    assert "stay accuracy       100.00% (6 turns)" in out
    assert "move accuracy       100.00% (3 turns)" in out


def test_the_policy_setting_round_trips_and_old_packs_stay_1_0(router: Router) -> None:
    doc = json.loads(dump_pack(router.pack))
    assert "conversation" not in doc["policy"]  # the default writes nothing
    doc["policy"]["conversation"] = "ignore"
    del doc["checksum"]
    again = load_pack(doc)
    assert again.policy.conversation == "ignore"
    written = json.loads(dump_pack(again))
    assert written["policy"]["conversation"] == "ignore"
    assert written["format_minor"] == FORMAT_MINOR


def test_the_prior_is_skipped_for_scores_that_are_no_distribution() -> None:
    names = ("billing", "shipping")
    prior = np.array([0.01, 0.99])
    verdict = decide_scores(names, [3.0, 1.0], "shipping", Policy(), prior=prior)
    assert (verdict.kind, verdict.to, verdict.message_top) == ("move", "billing", None)
