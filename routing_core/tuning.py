"""Threshold tuning: sweep the floor and the near-tie margin over labelled cases.

Each case is routed once; the sweep then replays the policy (`routing_core.policy.decide`,
the exact function production uses) on the recorded scores for every (floor, margin), so a
grid of 100 points costs one routing pass plus cheap replays. Rule wins do not depend on the
thresholds and keep their outcome; conversations are replayed turn by turn because the
incumbent of a turn depends on where the previous one landed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from routing_core.cases import Case
from routing_core.decision import Decision
from routing_core.policy import Policy, decide
from routing_core.router import Router

Objective = Literal["balanced", "in_scope"]

DEFAULT_FLOORS: tuple[float | None, ...] = (
    None, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8,
)  # fmt: skip
DEFAULT_MARGINS: tuple[float, ...] = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3)

OBJECTIVES: dict[str, str] = {
    "balanced": "the mean of in-scope accuracy and out-of-scope recall",
    "in_scope": "in-scope accuracy (no out-of-scope cases to balance against)",
}


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """The figures one (floor, margin) pair gives on the cases."""

    floor: float | None
    margin: float
    in_scope_accuracy: float | None
    oos_recall: float | None
    menu_rate: float
    score: float


def sweep(
    router: Router,
    cases: Sequence[Case],
    floors: Sequence[float | None] = DEFAULT_FLOORS,
    margins: Sequence[float] = DEFAULT_MARGINS,
) -> list[SweepPoint]:
    """Figures for every (floor, margin) pair, in grid order."""
    recorded = [router.route(c.text, c.incumbent) for c in cases]
    base = router.pack.policy
    return [
        _point(router, cases, recorded, base.model_copy(update={"floor": f, "near_tie_margin": m}))
        for f in floors
        for m in margins
    ]


def objective_for(cases: Sequence[Case]) -> Objective:
    """Balanced when the cases include out-of-scope ones, else in-scope accuracy."""
    return "balanced" if any(c.expected is None for c in cases) else "in_scope"


def suggest(points: Sequence[SweepPoint]) -> SweepPoint:
    """The point with the best objective; ties go to fewer menus, then the lower floor."""
    return max(points, key=lambda p: (round(p.score, 9), -p.menu_rate, -(p.floor or 0.0)))


def _point(
    router: Router, cases: Sequence[Case], recorded: list[Decision], policy: Policy
) -> SweepPoint:
    info = router.scorer.info
    in_scope_hits = in_scope = oos_hits = oos = menus = 0
    incumbent: str | None = None
    conversation: str | None = None
    for case, decision in zip(cases, recorded, strict=True):
        if case.conversation is None or case.conversation != conversation:
            incumbent = case.incumbent
        conversation = case.conversation
        route, kind = _replay(decision, incumbent, policy, info.floor, info.categorical)
        if kind == "unmatched":
            route = router.pack.default_route  # where production sends it: the next incumbent
        incumbent = route or incumbent
        menus += kind == "menu"
        if case.expected is None:
            oos += 1
            oos_hits += kind == "unmatched"
        else:
            in_scope += 1
            in_scope_hits += kind in ("move", "stay") and route == case.expected
    acc = in_scope_hits / in_scope if in_scope else None
    recall = oos_hits / oos if oos else None
    score = (acc or 0.0) if recall is None else ((acc or 0.0) + recall) / 2
    return SweepPoint(
        policy.floor, policy.near_tie_margin, acc, recall, menus / max(len(cases), 1), score
    )


def _replay(
    decision: Decision,
    incumbent: str | None,
    policy: Policy,
    scorer_floor: float | None,
    categorical: bool,
) -> tuple[str | None, str]:
    if decision.by == "rule":
        return decision.route, ("stay" if decision.route == incumbent else "move")
    if decision.scorer.error:
        return decision.route, decision.verdict
    pairs = [(r.route, r.score) for r in decision.ranked]
    verdict = decide(pairs, incumbent, policy, scorer_floor, categorical)
    return verdict.to, verdict.kind
