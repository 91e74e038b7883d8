"""The scorer protocol: what tier 2 of the cascade asks of any scorer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class RouteText:
    """The text a scorer learns a route from (a pack route, minus what scorers never see)."""

    name: str
    description: str = ""
    examples: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Term:
    """One term's contribution to a route's score, for explaining a scorer win."""

    term: str
    weight: float


@dataclass(frozen=True, slots=True)
class ScorerInfo:
    """What a scorer declares about itself; the policy needs it to judge the scores."""

    name: str
    floor: float | None = None
    categorical: bool = False
    # Softmax temperature for relevance: scores are divided by it before the softmax, so a
    # scorer whose scores live in [0, 1] still yields relevance bars a person can read.
    temperature: float = 1.0
    details: dict[str, object] = field(default_factory=dict)


@runtime_checkable
class Scorer(Protocol):
    """Scores a message against candidate routes.

    `score` returns one float per candidate, in candidate order. Non-finite values are
    allowed (the policy ranks them as -inf); raising is allowed too (the router records
    the failure and falls back), but a well-behaved scorer does neither on ordinary input.
    """

    info: ScorerInfo

    def score(self, message: str, candidates: Sequence[str]) -> Sequence[float]: ...

    def explain(self, message: str, route: str, limit: int = 5) -> Sequence[Term]:
        """The terms that contributed most to `route`'s score (empty when not explainable)."""
        ...
