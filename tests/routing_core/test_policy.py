"""The tier-2 verdict, rule by rule (docs/pack-format.md, Verdicts)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from routing_core.policy import Policy, decide, gap, softmax

ROUTES = ["billing", "shipping", "refunds", "account"]


def scores(*values: float) -> list[tuple[str, float]]:
    return list(zip(ROUTES, values, strict=False))


@pytest.mark.parametrize(
    ("values", "incumbent", "policy", "kind", "to", "offered"),
    [
        # decisive cold turn moves to the top
        ((0.71, 0.29), None, Policy(), "move", "billing", ()),
        # decisive and the top is the incumbent: stay
        ((0.71, 0.29), "billing", Policy(), "stay", "billing", ()),
        # decisive top beats the incumbent: move away
        ((0.71, 0.29), "shipping", Policy(), "move", "billing", ()),
        # near-tie cold: menu of the tied routes
        ((0.50, 0.45, 0.0), None, Policy(), "menu", None, ("billing", "shipping")),
        # near-tie mid-conversation: stay on the incumbent
        ((0.50, 0.45, 0.1), "refunds", Policy(), "stay", "refunds", ()),
        # near-tie, incumbent scored at the floor: menu between the new candidates only
        ((0.50, 0.45, 0.0), "refunds", Policy(floor=0.0), "menu", None, ("billing", "shipping")),
        # near-tie, incumbent not scored at all (not a candidate): stay
        # (docs/pack-format.md, Verdicts, step 3)
        ((0.52, 0.50), "refunds", Policy(), "stay", "refunds", ()),
        ((0.52, 0.50), "z", Policy(), "stay", "z", ()),
        # nothing above the floor: unmatched
        ((0.0, 0.0, 0.0), None, Policy(floor=0.0), "unmatched", None, ()),
        # the floor is exclusive: a score equal to it is dead
        ((0.3, 0.1), None, Policy(floor=0.3), "unmatched", None, ()),
        # a single alive candidate is decisive whatever the margin
        ((0.31, 0.1), None, Policy(floor=0.3, near_tie_margin=0.99), "move", "billing", ()),
    ],
)
def test_it_judges_each_rule_of_the_policy(values, incumbent, policy, kind, to, offered):
    verdict = decide(scores(*values), incumbent, policy)
    assert (verdict.kind, verdict.to, verdict.offered) == (kind, to, offered)


def test_the_gap_is_the_tanh_of_half_the_difference():
    verdict = decide(scores(0.71, 0.29))
    assert verdict.runner_up is not None
    assert verdict.runner_up.route == "shipping"
    assert verdict.runner_up.gap == pytest.approx(math.tanh(0.21))


def test_a_gap_exactly_at_the_margin_is_decisive():
    margin = gap(0.8, 0.5)
    verdict = decide(scores(0.8, 0.5), policy=Policy(near_tie_margin=margin))
    assert verdict.decisive and verdict.kind == "move"


def test_a_categorical_scorer_is_always_decisive():
    verdict = decide(scores(1.0, 0.99), categorical=True, scorer_floor=0.0)
    assert verdict.decisive and verdict.to == "billing"


def test_the_policy_floor_wins_over_the_scorer_floor():
    assert decide(scores(0.2, 0.1), scorer_floor=0.5).kind == "unmatched"
    assert decide(scores(0.2, 0.1), policy=Policy(floor=0.15), scorer_floor=0.5).to == "billing"


def test_non_finite_scores_rank_last_but_are_recorded_raw():
    verdict = decide(scores(math.nan, 0.4, math.inf, -math.inf))
    assert [r.route for r in verdict.ranked][:1] == ["shipping"]
    assert math.isnan(next(r.score for r in verdict.ranked if r.route == "billing"))
    assert "refunds" not in verdict.alive  # +inf is not finite, so it is not alive either
    assert verdict.to == "shipping"


def test_relevance_is_uniform_when_nothing_is_finite():
    verdict = decide(scores(math.nan, -math.inf, math.nan))
    assert [r.relevance for r in verdict.ranked] == pytest.approx([1 / 3] * 3)
    assert verdict.kind == "unmatched"


def test_exact_ties_keep_declaration_order():
    verdict = decide(scores(0.5, 0.5, 0.5))
    assert [r.route for r in verdict.ranked] == ["billing", "shipping", "refunds"]


def test_a_menu_holds_at_most_max_2_and_menu_size_routes():
    tied = scores(0.50, 0.49, 0.48, 0.47)
    assert len(decide(tied, policy=Policy(menu_size=3)).offered) == 3
    assert len(decide(tied, policy=Policy(menu_size=1)).offered) == 2
    assert len(decide(tied, policy=Policy(menu_size=10)).offered) == 4


def test_a_menu_leaves_out_alive_routes_outside_the_margin():
    verdict = decide(scores(0.50, 0.45, 0.05), policy=Policy(menu_size=5))
    assert verdict.offered == ("billing", "shipping")


def test_a_mapping_is_taken_in_its_order():
    verdict = decide({"shipping": 0.3, "billing": 0.3})
    assert verdict.ranked[0].route == "shipping"


def test_softmax_divides_by_the_temperature():
    sharp = softmax([1.0, 0.0], temperature=0.1)
    flat = softmax([1.0, 0.0], temperature=10)
    assert sharp[0] > 0.99 > flat[0] > 0.5


finite = st.floats(min_value=-5, max_value=5, allow_nan=False)
any_score = st.one_of(finite, st.just(math.nan), st.just(math.inf), st.just(-math.inf))
policies = st.builds(
    Policy,
    near_tie_margin=st.floats(0, 1),
    menu_size=st.integers(1, 6),
    floor=st.one_of(st.none(), st.floats(-1, 1)),
)


@given(st.lists(any_score, min_size=1, max_size=12), policies, st.integers(0, 11))
def test_relevance_always_sums_to_one(values, policy, pick):
    pairs = [(f"r{i}", v) for i, v in enumerate(values)]
    incumbent = pairs[pick % len(pairs)][0]
    verdict = decide(pairs, incumbent, policy)
    assert math.fsum(r.relevance for r in verdict.ranked) == pytest.approx(1.0)


@given(st.lists(finite, min_size=2, max_size=12), policies)
def test_a_menu_has_between_2_and_max_2_menu_size_alive_entries(values, policy):
    verdict = decide([(f"r{i}", v) for i, v in enumerate(values)], None, policy)
    if verdict.kind == "menu":
        assert 2 <= len(verdict.offered) <= max(2, policy.menu_size)
        assert set(verdict.offered) <= set(verdict.alive)


@given(st.lists(finite, min_size=1, max_size=10, unique=True), policies, st.randoms())
def test_decide_is_invariant_to_candidate_order_without_exact_ties(values, policy, rnd):
    pairs = [(f"r{i}", v) for i, v in enumerate(values)]
    shuffled = pairs[:]
    rnd.shuffle(shuffled)
    a, b = decide(pairs, None, policy), decide(shuffled, None, policy)
    assert (a.kind, a.to, a.offered, a.runner_up) == (b.kind, b.to, b.offered, b.runner_up)
    assert [r.route for r in a.ranked] == [r.route for r in b.ranked]
