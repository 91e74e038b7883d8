"""Threshold sweeps replay the real policy and suggest what the cases support."""

from __future__ import annotations

import pytest

from routing_core import Router, load_pack
from routing_core.cases import Case
from routing_core.evaluate import evaluate
from routing_core.tuning import objective_for, suggest, sweep
from tests.routing_core.conftest import TableScorer, minimal_doc

TABLE = {
    "bill": {"billing": 0.9, "shipping": 0.05},
    "parcel": {"shipping": 0.8, "billing": 0.1},
    "weak bill": {"billing": 0.35, "shipping": 0.05},
    "noise": {"billing": 0.2, "shipping": 0.1},
    "gibberish": {"billing": 0.15},
}
CASES = [
    Case("bill", "billing"),
    Case("parcel", "shipping"),
    Case("weak bill", "billing"),
    Case("noise", None),
    Case("gibberish", None),
]


@pytest.fixture
def router():
    return Router(load_pack(minimal_doc()), scorer=TableScorer(TABLE))


def test_the_suggested_floor_separates_weak_in_scope_from_out_of_scope(router):
    points = sweep(router, CASES, floors=[None, 0.1, 0.25, 0.4], margins=[0.0])
    best = suggest(points)
    # floor 0.25 keeps "weak bill" (0.35) and rejects both out-of-scope messages (≤ 0.2)
    assert (best.floor, best.in_scope_accuracy, best.oos_recall) == (0.25, 1.0, 1.0)


def test_each_point_agrees_with_evaluate_under_the_same_policy(router):
    for point in sweep(router, CASES, floors=[None, 0.1, 0.3], margins=[0.0, 0.2]):
        policy = router.policy_with(floor=point.floor, near_tie_margin=point.margin)
        report = evaluate(router, CASES, policy=policy)
        assert point.in_scope_accuracy == report.in_scope_accuracy
        assert point.oos_recall == report.oos_recall
        assert point.menu_rate == report.menu_rate


def test_the_objective_is_balanced_only_with_out_of_scope_cases():
    assert objective_for(CASES) == "balanced"
    assert objective_for(CASES[:3]) == "in_scope"


def test_conversations_are_replayed_with_their_chained_incumbents(router):
    turns = [Case("bill", "billing", conversation="c"), Case("noise", "billing", conversation="c")]
    # "noise" is a near-tie (0.2 vs 0.1 at margin 0.2): mid-conversation it stays on billing
    point = sweep(router, turns, floors=[None], margins=[0.2])[0]
    report = evaluate(router, turns, policy=router.policy_with(near_tie_margin=0.2))
    assert point.in_scope_accuracy == report.in_scope_accuracy == 1.0
