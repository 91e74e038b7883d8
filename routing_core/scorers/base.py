"""The scorer protocol: what tier 2 of the cascade asks of any scorer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from routing_core._types import ScoreArray

if TYPE_CHECKING:
    from routing_core.pack import Pack
    from routing_core.policy import Policy


@dataclass(frozen=True, slots=True)
class RouteText:
    """The text a scorer learns a route from (a pack route, minus what scorers never see)."""

    name: str
    description: str = ""
    examples: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()

    @property
    def name_words(self) -> str:
        """The name as the words a person meant ("refund_request" -> "refund request"): every
        scorer learns it as the route's first text (docs/decisions.md)."""
        return self.name.replace("_", " ").replace("-", " ")


def route_texts(pack: Pack) -> list[RouteText]:
    """What a scorer may learn from: names, descriptions, examples, keywords (never messages)."""
    return [
        RouteText(r.name, r.description, tuple(r.examples), tuple(r.keywords)) for r in pack.routes
    ]


TermKind = Literal["word", "example"]


@dataclass(frozen=True, slots=True)
class Term:
    """One term's contribution to a route's score, for explaining a scorer win.

    `kind` says what `term` is: "word", a word or bigram of the message (its weight is what
    it added to the route's score); "example", one of the route's own texts that the message
    is close to in meaning (a scorer that compares meanings says so with the nearest example
    a person wrote, rather than with a number alone).
    """

    term: str
    weight: float
    kind: TermKind = "word"


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


@dataclass(frozen=True, slots=True)
class Usage:
    """LLM token usage (all zero for offline scorers)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
        )

    def to_event(self) -> dict[str, int]:
        """JSON-safe form."""
        return {
            "input": self.input_tokens,
            "output": self.output_tokens,
            "cached": self.cached_tokens,
            "total": self.total_tokens,
        }


NO_USAGE = Usage()


class Scored:
    """One scoring call's result with what it cost (`note` says why a categorical scorer abstained).

    A scorer that computes its scores as an array hands over the array (`array=`, read-only):
    the policy ranks it as it is, and `scores` lists it only when someone reads them; at
    2,000 routes listing them cost a tenth of a turn. Read-only; compares as its scores.
    """

    __slots__ = ("_array", "_scores", "note", "usage")

    _array: ScoreArray | None
    _scores: tuple[float, ...] | None
    usage: Usage
    note: str | None

    def __init__(
        self,
        scores: Sequence[float] = (),
        usage: Usage = NO_USAGE,
        note: str | None = None,
        *,
        array: ScoreArray | None = None,
    ) -> None:
        object.__setattr__(self, "_array", array)
        object.__setattr__(self, "_scores", None if array is not None else tuple(scores))
        object.__setattr__(self, "usage", usage)
        object.__setattr__(self, "note", note)

    @property
    def scores(self) -> tuple[float, ...]:
        """One float per candidate, in candidate order."""
        if self._scores is None:
            assert self._array is not None
            object.__setattr__(self, "_scores", tuple(self._array.tolist()))
            return self.scores
        return self._scores

    @property
    def array(self) -> ScoreArray | None:
        """The scores as the scorer's own array, when it handed one over."""
        return self._array

    def __len__(self) -> int:
        return len(self._array) if self._array is not None else len(self.scores)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Scored is read-only: cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scored) and (self.scores, self.usage, self.note) == (
            other.scores,
            other.usage,
            other.note,
        )

    def __hash__(self) -> int:
        return hash((self.scores, self.usage, self.note))

    def __repr__(self) -> str:
        return f"Scored(scores={self.scores!r}, usage={self.usage!r}, note={self.note!r})"

    def __reduce__(self) -> tuple[type[Scored], tuple[tuple[float, ...], Usage, str | None]]:
        """Pickled and copied as its floats (setting attributes is refused)."""
        return Scored, (self.scores, self.usage, self.note)


class ScorerFailure(RuntimeError):
    """A scorer could not score; carries the tokens it spent before failing."""

    def __init__(self, message: str, usage: Usage = NO_USAGE) -> None:
        super().__init__(message)
        self.usage = usage


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


def measure(
    scorer: Scorer, message: str, candidates: Sequence[str], following: bool = False
) -> Scored:
    """Score with a scorer and report its cost: `score_metered` when it has one, else `score`;
    in a turn that follows a conversation, `score_following` when it has one."""
    metered = getattr(scorer, "score_following", None) if following else None
    metered = metered or getattr(scorer, "score_metered", None)
    if callable(metered):
        result = metered(message, candidates)
        if isinstance(result, Scored):
            return result
    return Scored(tuple(map(float, scorer.score(message, candidates))))


@dataclass(frozen=True, slots=True)
class Tier:
    """One scorer in the cascade, with the thresholds it declares (None: the policy's).

    Here beside `Scorer` because `scorers.build_tiers` makes them from a pack's settings and
    the cascade runs them: both import this module, neither the other.
    """

    scorer: Scorer
    floor: float | None = None
    near_tie_margin: float | None = None
    # Whether this tier also runs on a message however decisive the tiers before it were:
    # a hybrid's test for a message in a language none of the routes are written in, when
    # its settings say `take_foreign` (docs/pack-format.md, Cascade); None: only on an open
    # verdict.
    takes: Callable[[str], bool] | None = None

    @property
    def name(self) -> str:
        """The scorer's name, as tier records and reports show it."""
        return self.scorer.info.name

    def policy(self, policy: Policy) -> Policy:
        """`policy` with this tier's own thresholds in place of the policy's."""
        if self.floor is None and self.near_tie_margin is None:  # the usual tier: every turn
            return policy
        update = {"floor": self.floor, "near_tie_margin": self.near_tie_margin}
        update = {k: v for k, v in update.items() if v is not None}
        return policy.model_copy(update=update) if update else policy
