"""Evaluation figures against hand-computed cases."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest

from routing_core import Router, load_pack
from routing_core.cases import Case, parse_case
from routing_core.evaluate import MENU, UNMATCHED, evaluate
from tests.routing_core.conftest import TableScorer, minimal_doc

TABLE = {
    "b1": {"billing": 0.9},
    "b2": {"billing": 0.9},
    "s-as-b": {"billing": 0.9},  # a shipping case routed to billing
    "s1": {"shipping": 0.9},
    "tie": {"billing": 0.5, "shipping": 0.45},  # expected shipping, comes out a menu
    "oos-ok": {},  # out of scope, comes out unmatched
    "oos-bad": {"shipping": 0.9},  # out of scope, routed to shipping
}
CASES = [
    Case("b1", "billing"),
    Case("b2", "billing"),
    Case("s-as-b", "shipping"),
    Case("s1", "shipping"),
    Case("tie", "shipping"),
    Case("oos-ok", None),
    Case("oos-bad", None),
]


@pytest.fixture(scope="module")
def report():
    router = Router(load_pack(minimal_doc()), scorer=TableScorer(TABLE))
    return evaluate(router, CASES)


def test_accuracy_figures_match_a_hand_count(report):
    assert report.n == 7
    # in scope: b1 b2 s-as-b s1 tie; top-1 right for b1 b2 s1 = 3/5 (tie's top is billing)
    assert report.top1_accuracy == pytest.approx(3 / 5)
    assert report.in_scope_accuracy == pytest.approx(3 / 5)
    assert report.oos_recall == pytest.approx(1 / 2)
    assert report.oos_precision == pytest.approx(1 / 1)
    assert report.menu_rate == pytest.approx(1 / 7)


def test_per_route_precision_recall_f1_and_support(report):
    billing, shipping = report.per_route["billing"], report.per_route["shipping"]
    # billing: predicted b1 b2 s-as-b (2 right) -> P 2/3, R 2/2
    assert (billing.precision, billing.recall, billing.support) == (pytest.approx(2 / 3), 1.0, 2)
    assert billing.f1 == pytest.approx(0.8)
    # shipping: predicted s1 oos-bad (1 right) -> P 1/2; expected s-as-b s1 tie -> R 1/3
    assert (shipping.precision, shipping.recall, shipping.support) == (0.5, pytest.approx(1 / 3), 3)
    assert "human" not in report.per_route


def test_confusions_count_each_expected_predicted_pair(report):
    assert sorted(report.confusions) == sorted(
        [("shipping", "billing", 1), ("shipping", MENU, 1), (UNMATCHED, "shipping", 1)]
    )


def test_progress_is_reported_per_case():
    seen = []
    router = Router(load_pack(minimal_doc()), scorer=TableScorer(TABLE))
    evaluate(router, CASES[:3], progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_the_json_form_rounds_and_keeps_every_key(report):
    data = report.to_dict()
    assert data["top1_accuracy"] == 0.6 and data["latency_us"]["p50"] >= 0
    assert data["confusions"][0]["count"] == 1


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 4: invalid JSON"),
        ('{"expected": "x"}', "line 4: a case is an object with a string 'text'"),
        ('{"text": "a", "expected": 3}', "line 4: 'expected' is a route name or null"),
        ('{"text": "a", "incumbent": []}', "line 4: 'incumbent' is a route name or null"),
    ],
)
def test_a_malformed_case_names_its_line(line, message):
    with pytest.raises(ValueError, match=message):
        parse_case(line, 4)


CONVERSATION_TABLE = {
    "about my bill": {"billing": 0.9},
    "and the other thing": {"billing": 0.50, "shipping": 0.45},  # near-tie: stays put
    "where is the parcel": {"shipping": 0.9},
}


def test_a_conversation_chains_each_turns_route_as_the_next_incumbent():
    router = Router(load_pack(minimal_doc()), scorer=TableScorer(CONVERSATION_TABLE))
    turns = [
        Case("about my bill", "billing", conversation="c1", expected_verdict="move"),
        Case("and the other thing", "billing", conversation="c1", expected_verdict="stay"),
        Case("where is the parcel", "shipping", conversation="c1", expected_verdict="move"),
        Case("and the other thing", None, conversation="c2", expected_verdict="menu"),
    ]
    report = evaluate(router, turns)
    assert [r.decision.from_route for r in report.results] == [None, "billing", "billing", None]
    assert [r.decision.verdict for r in report.results] == ["move", "stay", "move", "menu"]
    assert [r.passed for r in report.results] == [True, True, True, False]


def test_optional_expectations_fail_a_case_with_a_reason():
    router = Router(load_pack(minimal_doc()), scorer=TableScorer(CONVERSATION_TABLE))
    case = Case(
        "about my bill",
        "billing",
        expected_verdict="stay",
        expected_triage="action",
        expected_tools=("x",),
    )
    result = evaluate(router, [case]).results[0]
    assert result.route_ok and not result.passed
    assert result.failures == [
        "verdict: expected stay, got move",
        "triage: expected action, got ambiguous",
        "tools: must keep x, got none",
    ]


def test_the_pass_rate_counts_every_expectation():
    router = Router(load_pack(minimal_doc()), scorer=TableScorer(CONVERSATION_TABLE))
    cases = [
        Case("about my bill", "billing"),
        Case("about my bill", "billing", expected_verdict="menu"),
    ]
    report = evaluate(router, cases)
    assert report.pass_rate == 0.5 and report.in_scope_accuracy == 1.0


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"text": "a", "expected_verdict": "jump"},
            "'expected_verdict' is one of move, stay, menu, unmatched",
        ),
        ({"text": "a", "expected_triage": "maybe"}, "'expected_triage' is one of action"),
        ({"text": "a", "expected_tools": "x"}, "'expected_tools' is a list of tool names"),
        ({"text": "a", "conversation": 3}, "'conversation' is a route name or null"),
        ({"text": "a", "dropped_tools": [1]}, "'dropped_tools' is a list of tool names"),
        ({"text": "a", "exact_tools": "yes"}, "'exact_tools' is true or false"),
    ],
)
def test_malformed_expectations_are_named(row, message):
    from routing_core.cases import case_from_mapping

    with pytest.raises(ValueError, match=message):
        case_from_mapping(row, 7)


class ColdStartScorer(TableScorer):
    """A table scorer whose first call is slow, as a real scorer's first turn is (cold caches)."""

    def __init__(self, table: dict[str, dict[str, float]], cold_s: float) -> None:
        super().__init__(table)
        self.cold_s = cold_s

    def score(self, message: str, candidates: Sequence[str]) -> Sequence[float]:
        if self.cold_s:
            time.sleep(self.cold_s)
            self.cold_s = 0.0
        return super().score(message, candidates)


def test_the_cold_first_case_is_reported_apart_and_does_not_skew_the_p99():
    router = Router(load_pack(minimal_doc()), scorer=ColdStartScorer(TABLE, cold_s=0.05))

    report = evaluate(router, CASES * 3)

    assert report.latency_us["first"] >= 50_000
    assert report.latency_us["p99"] < 50_000
    assert report.to_dict()["latency_us"]["first"] == round(report.latency_us["first"], 1)


KEPT = ("hydrate", "refund_order", "create_return")


@pytest.mark.parametrize(
    ("expectations", "misses"),
    [
        ({"expected_tools": ("refund_order",)}, []),  # must keep: others may be kept too
        (
            {"expected_tools": ("refund_order", "track")},
            ["tools: must keep track, got hydrate, refund_order, create_return"],
        ),
        (
            {"expected_tools": ("refund_order",), "exact_tools": True},
            ["tools: expected exactly refund_order, got hydrate, refund_order, create_return"],
        ),
        ({"expected_tools": KEPT[::-1], "exact_tools": True}, []),
        (
            {"expected_tools": ()},
            ["tools: expected exactly none, got hydrate, refund_order, create_return"],
        ),  # [] always meant "no tool kept"
        ({"dropped_tools": ("track", "cancel")}, []),
        (
            {"dropped_tools": ("track", "create_return")},
            ["tools: must drop create_return, but kept them"],
        ),
        ({}, []),
    ],
)
def test_a_cases_tools_are_kept_at_least_dropped_or_exact_when_asked(expectations, misses):
    assert Case("a", None, **expectations).tool_misses(KEPT) == misses


def test_tool_expectations_are_read_from_jsonl():
    case = parse_case(
        '{"text": "a", "expected_tools": ["x"], "dropped_tools": ["y"], "exact_tools": true}'
    )
    assert (case.expected_tools, case.dropped_tools, case.exact_tools) == (("x",), ("y",), True)
    assert parse_case('{"text": "a"}').exact_tools is False


def test_a_case_expecting_a_menu_passes_when_the_menu_offers_its_route():
    router = Router(load_pack(minimal_doc()), scorer=TableScorer(TABLE))
    menu_of_shipping = Case("tie", "shipping", expected_verdict="menu")
    menu_of_human = Case("tie", "human", expected_verdict="menu")  # not on that menu
    decided = Case("s1", "shipping", expected_verdict="menu")  # a decisive move, not a menu

    report = evaluate(router, [menu_of_shipping, menu_of_human, decided])

    assert [r.passed for r in report.results] == [True, False, False]
    assert report.results[1].failures == ["route: expected human, got (menu)"]
    assert report.results[2].failures == ["verdict: expected menu, got move"]
    assert report.in_scope_accuracy == pytest.approx(2 / 3)  # the move went to the right route


def test_a_passing_menu_case_counts_for_its_route_in_the_per_route_figures():
    router = Router(load_pack(minimal_doc()), scorer=TableScorer(TABLE))
    cases = [Case("tie", "shipping", expected_verdict="menu"), Case("s1", "shipping")]
    cases.append(Case("tie", "human", expected_verdict="menu"))  # not on that menu

    report = evaluate(router, cases)

    # Both shipping cases passed: shipping's recall is 2/2 (not 1/2, the menu under "(menu)"),
    # its precision 2/2; human's one case failed (its menu did not offer it).
    shipping, human = report.per_route["shipping"], report.per_route["human"]
    assert (shipping.precision, shipping.recall, shipping.support) == (1.0, 1.0, 2)
    assert (human.precision, human.recall, human.support) == (0.0, 0.0, 1)
    assert report.menu_rate == pytest.approx(2 / 3)  # what was shown is still counted


def test_a_menu_is_still_wrong_for_a_case_that_expects_a_route():
    router = Router(load_pack(minimal_doc()), scorer=TableScorer(TABLE))

    (result,) = evaluate(router, [Case("tie", "shipping")]).results

    assert not result.route_ok and result.predicted == MENU
