"""Tier 2's judgement: turn one score per route into move / stay / menu / unmatched.

Specified in docs/pack-format.md, Verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Literal, NamedTuple, overload

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from routing_core._numbers import event_number, event_numbers
from routing_core._records import builder
from routing_core._types import Float64Array, IndexArray, ScoreArray
from routing_core.conversation import Prior, pooled_turn

VerdictKind = Literal["move", "stay", "menu", "unmatched"]
Strictness = Literal["assist", "guard", "rails"]
Following = Literal["follow", "ignore"]


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
    conversation: Following | None = Field(
        None,
        description=(
            "follow (null: the default): a turn after the first is read in the light of the "
            "route it is in; ignore: every turn is judged alone."
        ),
    )

    @property
    def follows_conversation(self) -> bool:
        """Turns after the first are read in the light of the incumbent (the default)."""
        return self.conversation != "ignore"


class Ranked(NamedTuple):
    """One candidate's place in the ranking: raw score (maybe non-finite) and softmax relevance.

    A named tuple rather than a dataclass: a decision builds one per route per turn, and
    tuples are the cheapest immutable records Python makes.
    """

    route: str
    score: float
    relevance: float


# The bits of 0.0005 as an unsigned integer: a double's bits below them round to +0.0 at
# 3 decimals (`Ranking.event_rows_sparse`).
_QUIET_BELOW = int(np.array(0.0005).view(np.uint64))
_QUIET = 0.0005
# Rows read one by one from the top before the loud ones are counted on the arrays instead.
_WALK = 24
# The bits of +inf as a signed integer: a non-negative double's bits are below them exactly
# when it is finite (NaN's are above).
_INFINITY_BITS = int(np.array(np.inf).view(np.int64))


class Ranking(Sequence[Ranked]):
    """Every candidate best first (exact ties in declaration order), as `Ranked` made on access.

    Routing a turn ranks every route, but most callers read only the top entry or two; at
    2,000 routes sorting them and turning three arrays into Python lists cost more than
    scoring did. So a ranking keeps the arrays and sorts (once) only when someone reads past
    the top: `to_event()`, the playground and `==` still see every route. Read-only.
    """

    __slots__ = ("_names", "_order", "_rankable", "_raw", "_relevance", "_rows", "_temperature")

    def __init__(
        self,
        routes: Sequence[str],
        scores: Sequence[float] | Float64Array,
        relevance: Sequence[float] | Float64Array | None,
        *,
        rankable: Float64Array | None = None,
        temperature: float = 1.0,
    ) -> None:
        """`routes`, `scores` and `relevance` in ranking order; or, with `rankable` (scores
        with non-finite ones as -inf), in candidate order, to be sorted when first read, the
        relevance (None) then computed from `rankable` and `temperature` when first read."""
        self._names = routes if isinstance(routes, tuple) else tuple(routes)
        self._raw = np.asarray(scores, dtype=np.float64)
        self._relevance = None if relevance is None else np.asarray(relevance, dtype=np.float64)
        self._temperature = temperature
        self._rankable = rankable
        self._order: IndexArray | None = None if rankable is not None else np.arange(len(routes))
        self._rows: tuple[Ranked, ...] | None = None

    def __len__(self) -> int:
        return len(self._names)

    @overload
    def __getitem__(self, index: int) -> Ranked: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Ranked, ...]: ...

    def __getitem__(self, index: int | slice) -> Ranked | tuple[Ranked, ...]:
        if isinstance(index, slice):
            return self._all()[index]
        if self._rows is not None:
            return self._rows[index]
        if self._order is None and len(self) and index in (0, -len(self)):
            assert self._rankable is not None
            return self._row(int(self._rankable.argmax()))  # the first of the highest: no sort
        position = range(len(self))[index]  # IndexError as a tuple gives it
        return self._row(int(self._sorted()[position]))

    def __iter__(self) -> Iterator[Ranked]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self._all() == tuple(other)

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return f"Ranking({list(self)!r})"

    def _row(self, i: int) -> Ranked:
        return Ranked(self._names[i], float(self._raw[i]), float(self._shares()[i]))

    def _shares(self) -> Float64Array:
        """The softmax relevance in candidate order (one exp over every route, when read)."""
        if self._relevance is None:
            assert self._rankable is not None
            self._relevance = _softmax(self._rankable, self._temperature)
        return self._relevance

    def _sorted(self) -> IndexArray:
        if self._order is None:
            assert self._rankable is not None
            self._order = np.argsort(-self._rankable, kind="stable")
        return self._order

    def _all(self) -> tuple[Ranked, ...]:
        """Every row, made once (three list conversions rather than 3 x n item reads)."""
        if self._rows is None:
            order = self._sorted()
            names = _pick(self._names, order.tolist())
            scores, relevance = self._raw[order].tolist(), self._shares()[order].tolist()
            self._rows = tuple(map(Ranked, names, scores, relevance))
        return self._rows

    def event_rows(self) -> list[dict[str, str | float | None]]:
        """Every row as the decision event writes it (docs/event-schema.md), rounded on the
        arrays: the event is the one reader of every row on each turn a server answers, and
        making a `Ranked` and rounding each number one by one cost more than the turn."""
        order = self._sorted()
        names = _pick(self._names, order.tolist())
        # Both columns rounded in one call: each numpy call costs the same at 150 or 300.
        numbers = event_numbers(np.concatenate((self._raw[order], self._shares()[order])))
        n = len(names)
        return [
            {"route": name, "score": score, "relevance": relevance}
            for name, score, relevance in zip(names, numbers[:n], numbers[n:], strict=True)
        ]

    def event_rows_sparse(
        self,
    ) -> tuple[tuple[str, ...], IndexArray, list[int], list[float | str | None]]:
        """`event_rows` for a writer of the event's JSON text (the route server): the routes
        in candidate order and the ranking's order (indexes into them, best first); the
        positions of the rows whose event score or relevance is not 0.0 (at 150 routes nearly
        every row rounds to 0.0 and 0.0); and those rows' event scores, followed by their
        event relevances. The other rows are `0.0` and `0.0` exactly.

        Few numpy calls, as each costs about what a row does in Python: a number's bits read
        as an unsigned integer are below those of 0.0005 exactly when it rounds to +0.0 (the
        positive doubles are ordered as their bits; -0.0, the negatives and NaN have the top
        bit, or all exponent bits, set). No name is picked: a writer that keeps each route's
        text by candidate index (`order`) needs none.
        """
        n = len(self._names)
        order = self._sorted()
        if not n:
            return self._names, order, [], []
        shares = self._shares()
        prefix = self._loud_prefix(order, shares)
        if prefix is not None:
            first, walked = prefix
            loud_first = list(range(first))
            if isinstance(walked, list):  # a dozen rows or so: one by one, as below
                return self._names, order, loud_first, list(map(event_number, walked))
            return self._names, order, loud_first, event_numbers(walked)
        bits = np.concatenate((self._raw, shares)).view(np.uint64)
        loud = np.flatnonzero((np.maximum(bits[:n], bits[n:]) >= _QUIET_BELOW)[order])
        at = order[loud]
        values = np.concatenate((self._raw[at], shares[at]))
        # A few numbers: one by one is cheaper than the array's steps (and rounds the same).
        numbers = (
            list(map(event_number, values.tolist())) if len(values) < 16 else event_numbers(values)
        )
        return self._names, order, loud.tolist(), numbers

    def _loud_prefix(
        self, order: IndexArray, shares: Float64Array
    ) -> tuple[int, list[float] | Float64Array] | None:
        """The usual case of `event_rows_sparse`, read row by row from the top: every score
        finite and not negative (no -0.0) and every relevance at most 1. Both columns then
        fall along the ranking, so the rows that do not round to 0.0 are its first ones, and
        the walk stops at the first quiet row, a dozen rows down on a 150-route pack, where
        whole-array steps cost as much as a row each (past `_WALK` rows, a flat ranking, they
        are counted on the arrays). Returns how many rows are loud and their scores followed
        by their relevances; None outside that case."""
        bits = self._raw.view(np.int64)  # negative exactly when the sign bit is set
        if not (
            int(np.minimum.reduce(bits)) >= 0
            and int(np.maximum.reduce(bits)) < _INFINITY_BITS
            and float(np.maximum.reduce(shares)) <= 1.0  # NaN compares false
        ):
            return None
        score_of, relevance_of, at = self._raw.item, shares.item, order.item
        scores: list[float] = []
        relevances: list[float] = []
        for position in range(min(len(order), _WALK)):
            i = at(position)
            score, relevance = score_of(i), relevance_of(i)
            if score < _QUIET and relevance < _QUIET:
                break
            scores.append(score)
            relevances.append(relevance)
        else:
            if len(order) > _WALK:  # many loud rows (a flat ranking): counted on the arrays
                loud = max(
                    int(np.count_nonzero(self._raw >= _QUIET)),
                    int(np.count_nonzero(shares >= _QUIET)),
                )
                top = order[:loud]
                return loud, np.concatenate((self._raw[top], shares[top]))
        return len(scores), scores + relevances


class RunnerUp(NamedTuple):
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
    ranked: Ranking
    runner_up: RunnerUp | None
    floor: float | None
    alive: tuple[str, ...]
    # The route the message alone ranked first, when the incumbent's prior changed the
    # ranking's top (routing_core.conversation); None when it did not.
    message_top: str | None = None


# `Verdict(...)`, filled in as a draft (routing_core._records): one is made on every turn.
_verdict: Callable[..., Verdict] = builder(Verdict)

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
    pairs = list(scores.items()) if isinstance(scores, Mapping) else list(scores)
    return decide_scores(
        [name for name, _ in pairs],
        [score for _, score in pairs],
        incumbent,
        policy,
        scorer_floor,
        categorical,
        temperature,
    )


def decide_scores(
    names: Sequence[str],
    scores: Sequence[float] | ScoreArray,
    incumbent: str | None = None,
    policy: Policy | None = None,
    scorer_floor: float | None = None,
    categorical: bool = False,
    temperature: float = 1.0,
    prior: Float64Array | Prior | None = None,
) -> Verdict:
    """`decide` on parallel sequences of names and scores: the router's hot path, no pairs.

    `prior`: the scorer's scores for the incumbent's own text, pooled with the message's
    when both are distributions and the policy follows the conversation (the ranking then
    records the pooled scores: they are what judged the turn; routing_core.conversation).
    """
    policy = policy or Policy()
    names = names if isinstance(names, tuple) else tuple(names)  # the ranking keeps them
    raw = np.array(scores, dtype=np.float64)  # a copy: the ranking keeps it
    message_top: str | None = None
    if prior is not None and incumbent is not None and policy.follows_conversation:
        pooled = pooled_turn(raw, prior if isinstance(prior, Prior) else Prior.of(prior))
        if pooled is not None:
            raw, alone = pooled
            if int(raw.argmax()) != alone:
                message_top = names[alone]
    return _judge(
        names, raw, incumbent, policy, scorer_floor, categorical, temperature, message_top
    )


def _judge(
    names: tuple[str, ...],
    raw: Float64Array,
    incumbent: str | None,
    policy: Policy,
    scorer_floor: float | None,
    categorical: bool,
    temperature: float,
    message_top: str | None,
) -> Verdict:
    """The verdict's steps (alive, gap, decisive, stay / move / menu) on scores as given."""
    floor = policy.floor if policy.floor is not None else scorer_floor
    ranked, alive = _rank(names, raw, temperature, floor)
    if not alive:
        return _verdict("unmatched", None, (), False, ranked, None, floor, (), message_top)
    top = alive[0]
    alive_names = _pick(names, alive)
    runner_up = RunnerUp(names[alive[1]], gap(raw[top], raw[alive[1]])) if len(alive) > 1 else None
    decisive = categorical or runner_up is None or runner_up.gap >= policy.near_tie_margin
    if decisive:
        kind: VerdictKind = "stay" if names[top] == incumbent else "move"
        return _verdict(
            kind, names[top], (), True, ranked, runner_up, floor, alive_names, message_top
        )
    # docs/pack-format.md, Verdicts, step 3: a near-tie opens a menu mid-conversation only
    # when the scorer scored the incumbent at or below the floor; an incumbent it did not
    # score at all stays.
    if incumbent is not None and (incumbent in alive_names or incumbent not in names):
        return _verdict(
            "stay", incumbent, (), False, ranked, runner_up, floor, alive_names, message_top
        )
    offered = _menu(alive_names, raw[alive], policy)
    return _verdict(
        "menu", None, offered, False, ranked, runner_up, floor, alive_names, message_top
    )


def gap(top: float, second: float) -> float:
    """Pairwise gap in [0, 1): tanh of half the score difference; independent of route count."""
    return math.tanh((top - second) / 2.0)


def softmax(values: Iterable[float], temperature: float = 1.0) -> list[float]:
    """Softmax with non-finite values as -inf; uniform when nothing finite is left."""
    xs = np.array(list(values), dtype=np.float64)
    shares: list[float] = _softmax(np.where(np.isfinite(xs), xs, -np.inf), temperature).tolist()
    return shares


def _softmax(rankable: Float64Array, temperature: float) -> Float64Array:
    if not len(rankable):
        return rankable
    # In place on this call's own array, and the reductions without their Python wrappers
    # (`.max()`, `.sum()`): the same numbers in fewer steps, on every turn a server answers.
    shares: Float64Array = rankable / (temperature if temperature > 0 else 1.0)
    peak = np.maximum.reduce(shares)
    if peak == -np.inf:
        return np.full(len(rankable), 1.0 / len(rankable))
    shares -= peak
    np.exp(shares, out=shares)
    shares /= np.add.reduce(shares)
    return shares


def _rank(
    names: Sequence[str], raw: Float64Array, temperature: float, floor: float | None
) -> tuple[Ranking, list[int]]:
    """Every candidate best first (exact ties in declaration order), and the alive indexes.

    Only the alive routes are sorted here (a floor usually leaves a handful of 2,000); the
    full ranking sorts itself when read past its top.
    """
    finite = np.isfinite(raw)
    # Scorers' scores are nearly always all finite: then the raw array ranks as it is, and
    # the floor alone says who is alive (two passes over 2,000 routes fewer). The ufuncs'
    # own reductions, not the array methods, which go through Python wrappers each turn.
    if np.logical_and.reduce(finite):
        rankable = raw
        living = finite if floor is None else raw > floor
    else:
        rankable = np.where(finite, raw, -np.inf)
        living = finite if floor is None else finite & (raw > floor)
    ranking = Ranking(names, raw, None, rankable=rankable, temperature=temperature)
    return ranking, _best_first(raw, living.nonzero()[0])


# Up to this many alive routes are sorted as Python floats: a calibrated floor above one half
# leaves at most one alive, and numpy's sort of one or two cost more than the whole list's.
SMALL_SORT = 16


def _best_first(raw: Float64Array, alive: IndexArray) -> list[int]:
    """The alive indexes (ascending, finite scores) by score, best first, ties in declaration
    order: `argsort(-raw[alive], kind="stable")`, which a stable descending sort is."""
    if len(alive) > SMALL_SORT:
        ordered: list[int] = alive[np.argsort(-raw[alive], kind="stable")].tolist()
        return ordered
    indexes: list[int] = alive.tolist()
    if len(indexes) > 1:
        indexes.sort(key=raw.item, reverse=True)  # `reverse` keeps ties in their order
    return indexes


def _pick(names: Sequence[str], indexes: list[int]) -> tuple[str, ...]:
    """`names` at `indexes`, at C speed (itemgetter returns a bare item for one index)."""
    if len(indexes) == 1:
        return (names[indexes[0]],)
    return tuple(itemgetter(*indexes)(names)) if indexes else ()


def _menu(alive: tuple[str, ...], scores: Float64Array, policy: Policy) -> tuple[str, ...]:
    # Only called on a near-tie, so the runner-up is always within the margin: >= 2 entries.
    near = np.tanh((scores[0] - scores) / 2.0) < policy.near_tie_margin
    return tuple(name for name, keep in zip(alive, near.tolist(), strict=True) if keep)[
        : max(2, policy.menu_size)
    ]
