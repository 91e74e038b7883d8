"""Overlap checkup: which examples would the profile's own scorer send elsewhere?

Each example is held out, the scorer is trained on the rest, and the example is routed with
the profile's policy (rules left out: this is about what the *examples* teach). An example
that lands on another route, or in a near-tie, shows two routes that overlap. Small profiles
get exact leave-one-out; past `EXACT_LIMIT` examples, k-fold hold-out (every example is
still held out exactly once, ten trainings instead of thousands).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from routing_core.pack import Pack, Route
from routing_core.router import Router
from routing_core.scorers import _model

EXACT_LIMIT = 300
FOLDS = 10

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class OverlapFinding:
    """A held-out example that did not come back to its own route."""

    route: str
    example: str
    path: str
    outcome: str  # "elsewhere" | "near-tie" | "unmatched"
    landed: str | None
    own_score: float
    other_route: str | None
    other_score: float


def overlap_checkup(pack: Pack, progress: Progress | None = None) -> list[OverlapFinding]:
    """Hold out every example once and list those the rest of the profile misroutes."""
    places = [(r, e) for r, route in enumerate(pack.routes) for e in range(len(route.examples))]
    folds = len(places) if len(places) <= EXACT_LIMIT else FOLDS
    findings: list[OverlapFinding] = []
    # Every held-out copy of a pack of 100-199 texts learns on the schedule the first one
    # chose, at its thresholds (`_model.one_schedule`): choosing again for each costs ten fold
    # models a copy, and fitting the thresholds again five.
    with _model.one_schedule():
        for fold in range(folds):
            held = {p for i, p in enumerate(places) if i % folds == fold}
            router = Router(_without(pack, held))
            for r, e in sorted(held):
                finding = _check(pack, router, r, e)
                if finding is not None:
                    findings.append(finding)
            if progress is not None:
                progress(fold + 1, folds)
    return findings


def _without(pack: Pack, held: set[tuple[int, int]]) -> Pack:
    routes = [
        route.model_copy(
            update={
                "examples": tuple(x for e, x in enumerate(route.examples) if (r, e) not in held)
            }
        )
        for r, route in enumerate(pack.routes)
    ]
    return pack.model_copy(update={"routes": tuple(routes), "rules": ()})


def _check(pack: Pack, router: Router, r: int, e: int) -> OverlapFinding | None:
    route: Route = pack.routes[r]
    example = route.examples[e]
    decision = router.route(example)
    scores = {x.route: x.score for x in decision.ranked}
    own = scores.get(route.name, 0.0)
    rivals = [x for x in decision.ranked if x.route != route.name]
    rival = rivals[0] if rivals else None
    if decision.route == route.name and decision.verdict in ("move", "stay"):
        return None
    if decision.verdict == "menu":
        outcome = "near-tie"
    elif decision.verdict == "unmatched":
        outcome = "unmatched"
    else:
        outcome = "elsewhere"
    return OverlapFinding(
        route=route.name,
        example=example,
        path=f"routes[{r}].examples[{e}]",
        outcome=outcome,
        landed=decision.route,
        own_score=own,
        other_route=rival.route if rival else None,
        other_score=rival.score if rival else 0.0,
    )
