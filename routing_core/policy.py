"""Tier 2's judgement: turn one score per route into move / stay / menu / unmatched (DESIGN §4)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

VerdictKind = Literal["move", "stay", "menu", "unmatched"]
Strictness = Literal["assist", "guard", "rails"]


class Policy(BaseModel):
    """The thresholds that judge a turn. Stored in the pack, overridable per call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    near_tie_margin: float = Field(
        0.15, ge=0.0, le=1.0, description="Minimum pairwise gap for a decisive top route."
    )
    menu_size: int = Field(3, ge=1, le=50, description="Most routes a near-tie menu offers.")
    floor: float | None = Field(
        None,
        allow_inf_nan=False,
        description="A route must score strictly above this to be alive; null = the scorer's.",
    )
    strictness: Strictness = Field(
        "assist",
        description="assist: agent may switch anywhere; guard: only to a menu; rails: never.",
    )


@dataclass(frozen=True, slots=True)
class Ranked:
    """One candidate's place in the ranking: raw score (maybe non-finite) and softmax relevance."""

    route: str
    score: float
    relevance: float


@dataclass(frozen=True, slots=True)
class RunnerUp:
    """The best alive route after the top, and the pairwise gap between them."""

    route: str
    gap: float


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the policy concluded from one set of scores."""

    kind: VerdictKind
    to: str | None
    offered: tuple[str, ...]
    decisive: bool
    ranked: tuple[Ranked, ...]
    runner_up: RunnerUp | None
    floor: float | None
    alive: tuple[str, ...]


Scores = Mapping[str, float] | Sequence[tuple[str, float]]


def decide(
    scores: Scores,
    incumbent: str | None = None,
    policy: Policy | None = None,
    scorer_floor: float | None = None,
    categorical: bool = False,
    temperature: float = 1.0,
) -> Verdict:
    """Judge one turn's scores.

    Args:
        scores: `(route, score)` in candidate (declaration) order, or a mapping in that order.
        incumbent: the route the conversation is in, or None for a cold turn.
        policy: thresholds; defaults when None.
        scorer_floor: the scorer's own floor, used when the policy sets none.
        categorical: the scorer picks one route or none, so its top is always decisive.
        temperature: scores are divided by it before the softmax (the scorer declares it).

    Returns:
        The verdict with the full ranking, so an observer never has to guess.
    """
    policy = policy or Policy()
    pairs = list(scores.items()) if isinstance(scores, Mapping) else list(scores)
    ranked = _rank(pairs, temperature)
    floor = policy.floor if policy.floor is not None else scorer_floor
    alive = tuple(r for r in ranked if _is_alive(r.score, floor))
    if not alive:
        return Verdict("unmatched", None, (), False, ranked, None, floor, ())
    top = alive[0]
    runner_up = RunnerUp(alive[1].route, gap(top.score, alive[1].score)) if len(alive) > 1 else None
    decisive = categorical or runner_up is None or runner_up.gap >= policy.near_tie_margin
    names = tuple(r.route for r in alive)
    if decisive:
        kind: VerdictKind = "stay" if top.route == incumbent else "move"
        return Verdict(kind, top.route, (), True, ranked, runner_up, floor, names)
    if incumbent is not None and incumbent in names:
        return Verdict("stay", incumbent, (), False, ranked, runner_up, floor, names)
    offered = _menu(alive, policy)
    return Verdict("menu", None, offered, False, ranked, runner_up, floor, names)


def gap(top: float, second: float) -> float:
    """Pairwise gap in [0, 1): tanh of half the score difference; independent of route count."""
    return math.tanh((top - second) / 2.0)


def softmax(values: Iterable[float], temperature: float = 1.0) -> list[float]:
    """Softmax with non-finite values as -inf; uniform when nothing finite is left."""
    xs = [v / temperature if math.isfinite(v) else -math.inf for v in values]
    if not xs:
        return []
    peak = max(xs)
    if peak == -math.inf:
        return [1.0 / len(xs)] * len(xs)
    exps = [math.exp(x - peak) if x != -math.inf else 0.0 for x in xs]
    total = math.fsum(exps)
    return [e / total for e in exps]


def _rank(pairs: list[tuple[str, float]], temperature: float) -> tuple[Ranked, ...]:
    raw = [float(score) for _, score in pairs]
    relevance = softmax(raw, temperature if temperature > 0 else 1.0)
    entries = [Ranked(name, raw[i], relevance[i]) for i, (name, _) in enumerate(pairs)]
    # sorted() is stable, so exact ties keep declaration order.
    return tuple(sorted(entries, key=lambda r: -_rankable(r.score)))


def _rankable(score: float) -> float:
    return score if math.isfinite(score) else -math.inf


def _is_alive(score: float, floor: float | None) -> bool:
    if not math.isfinite(score):
        return False
    return floor is None or score > floor


def _menu(alive: tuple[Ranked, ...], policy: Policy) -> tuple[str, ...]:
    top = alive[0].score
    # Only called on a near-tie, so the runner-up is always within the margin: >= 2 entries.
    near = [r.route for r in alive if gap(top, r.score) < policy.near_tie_margin]
    return tuple(near[: max(2, policy.menu_size)])
