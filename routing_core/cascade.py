"""Tier 2 as a cascade: scorers tried cheapest first, each only while the verdict is open.

A tier runs when no tier before it was decisive, or when it takes the message whatever they
made of it (a hybrid that reads a message in a language the routes are not written in). A
categorical tier (the LLM) runs only on a remaining near-tie, and only over its contenders:
the routes within the margin of the top, plus the incumbent. Its "no pick" is an
abstention: the verdict before it stands, as does the verdict before a tier that fails.
Every tier that ran leaves a `TierRecord` (its verdict, time, tokens, error); the one whose
verdict the decision stands on is marked `decided`.

Thresholds: a tier may declare its own floor and near-tie margin (in its scores' units);
they replace the policy's for that tier, and the decision records the policy it used.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from routing_core._records import builder
from routing_core._types import ScoreArray
from routing_core.conversation import Prior, is_distribution
from routing_core.decision import TierRecord
from routing_core.policy import Policy, Verdict, VerdictKind, decide_scores, gap
from routing_core.scorers.base import NO_USAGE, Scored, Tier, Usage, measure


class Outcome(NamedTuple):
    """What the cascade concluded: the standing verdict (None: every tier failed) and records.

    A named tuple: the router makes one on every turn (docs/lab/benchmarks.md, "A cheaper
    turn, again").
    """

    verdict: Verdict | None
    tier: Tier
    policy: Policy
    records: tuple[TierRecord, ...]
    error: str | None

    @property
    def usage(self) -> Usage:
        """Tokens spent by every tier that ran."""
        total = NO_USAGE
        for record in self.records:
            total += record.usage
        return total


class _Standing(NamedTuple):
    """The verdict that stands so far, its tier, that tier's policy and the index of its record."""

    verdict: Verdict
    tier: Tier
    policy: Policy
    record: int


# One tier's run, kept until the cascade knows which tier decided: its name, verdict kind,
# time (µs), usage, error and note. Each becomes one `TierRecord`, made once, at the end.
_Ran = tuple[str, VerdictKind | None, int, Usage, str | None, str | None]


class Cascade:
    """Runs the tiers for one turn. Holds no per-turn state: safe across threads.

    Args:
        tiers: cheapest first; at least one.
        names: every route, in declaration (candidate) order.
        prior_texts: each route's own text, read as a message to make the prior of a
            conversation in it (routing_core.conversation); none: no prior.
    """

    def __init__(
        self,
        tiers: Sequence[Tier],
        names: Sequence[str],
        prior_texts: Mapping[str, str] | None = None,
    ) -> None:
        if not tiers:
            raise ValueError("a cascade needs at least one tier")
        self.tiers = tuple(tiers)
        self._names = tuple(names)
        self._prior_texts = prior_texts or {}
        # (tier index, incumbent) -> that tier's scores for the incumbent's text, made on a
        # conversation's first turn in it. Bounded by tiers x routes; a race computes the
        # same array twice, harmlessly.
        self._priors: dict[tuple[int, str], Prior | None] = {}

    def run(
        self, text: str, incumbent: str | None, policy: Policy, *, first_only: bool = False
    ) -> Outcome:
        """Score `text` tier by tier until one is decisive.

        Args:
            text: the message.
            incumbent: the conversation's route, or None.
            policy: the turn's policy (tiers may replace its thresholds).
            first_only: run the first tier alone, and not at all when it is categorical
                (a rule has already decided; the ranking is only for the record).
        """
        standing: _Standing | None = None
        ran: list[_Ran] = []
        errors: list[str] = []
        for index, tier in enumerate(self.tiers):
            if not self._should_run(tier, standing, first_only, bool(ran), text):
                break
            candidates = self._candidates(tier, standing, incumbent)
            started = time.perf_counter_ns()
            tier_policy = tier.policy(policy)
            try:
                prior = self._prior(index, tier, candidates, incumbent, policy)
                scored = measure(tier.scorer, text, candidates, following=prior is not None)
                verdict = self._judge(tier, scored, candidates, incumbent, tier_policy, prior)
            except Exception as exc:  # noqa: BLE001 - a failing tier is recorded, never raised
                message = f"{type(exc).__name__}: {exc}"[:300]
                errors.append(f"{tier.name}: {message}" if len(self.tiers) > 1 else message)
                usage = getattr(exc, "usage", NO_USAGE)
                ran.append((tier.name, None, _since(started), usage, message, None))
                continue
            ran.append((tier.name, verdict.kind, _since(started), scored.usage, None, scored.note))
            if not (standing is not None and _abstained(tier, verdict)):
                standing = _Standing(verdict, tier, tier_policy, len(ran) - 1)
        return self._outcome(standing, ran, errors, policy)

    def _should_run(
        self, tier: Tier, standing: _Standing | None, first_only: bool, any_ran: bool, text: str
    ) -> bool:
        if first_only:
            return not any_ran and not tier.scorer.info.categorical
        if standing is None:
            return True
        if standing.verdict.decisive:
            # A tier that takes a message in a language the routes are not written in reads
            # it whatever the tiers before it made of its spelling (docs/pack-format.md).
            return tier.takes is not None and _takes(tier.takes, text)
        # The LLM is paid only for a near-tie; an unmatched turn stays unmatched.
        return not tier.scorer.info.categorical or standing.verdict.kind != "unmatched"

    def _candidates(
        self, tier: Tier, standing: _Standing | None, incumbent: str | None
    ) -> tuple[str, ...]:
        if standing is None or not tier.scorer.info.categorical:
            return self._names
        return contenders(standing.verdict, standing.policy, incumbent)

    def _prior(
        self,
        index: int,
        tier: Tier,
        candidates: Sequence[str],
        incumbent: str | None,
        policy: Policy,
    ) -> Prior | None:
        """This tier's scores for the incumbent's own text: the conversation's prior.

        None cold, under `conversation: ignore`, for a categorical tier or a near-tie's
        contenders, and for a scorer whose scores are no distribution or that fails on it.
        """
        if incumbent is None or not policy.follows_conversation:
            return None
        if tier.scorer.info.categorical or candidates is not self._names:
            return None
        key = (index, incumbent)
        if key not in self._priors:
            self._priors[key] = self._make_prior(tier, incumbent)
        return self._priors[key]

    def _make_prior(self, tier: Tier, incumbent: str) -> Prior | None:
        text = self._prior_texts.get(incumbent)
        if not text:
            return None
        try:
            scored = measure(tier.scorer, text, self._names)
        except Exception:  # noqa: BLE001 - no prior: the turn is judged alone, as before
            return None
        raw = scored.array if scored.array is not None else scored.scores
        prior = np.array(raw, dtype=np.float64)
        if len(prior) != len(self._names) or not is_distribution(prior):
            return None
        return Prior.of(prior)

    def _judge(
        self,
        tier: Tier,
        scored: Scored,
        candidates: Sequence[str],
        incumbent: str | None,
        tier_policy: Policy,
        prior: Prior | None = None,
    ) -> Verdict:
        """The policy's verdict on the tier's scores (`tier_policy`: the turn's policy with
        the tier's own thresholds, `Tier.policy`)."""
        array = scored.array  # read once: a property
        scores: Sequence[float] | ScoreArray = scored.scores if array is None else array
        if len(scores) != len(candidates):
            raise ValueError(f"{len(scores)} scores for {len(candidates)} routes")
        if candidates is not self._names:  # a near-tie's contenders: the others score 0
            by_name = dict(zip(candidates, scored.scores, strict=True))
            scores = [float(by_name.get(n, 0.0)) for n in self._names]
        info = tier.scorer.info
        return decide_scores(
            self._names, scores, incumbent, tier_policy, info.floor, info.categorical,
            info.temperature, prior,
        )  # fmt: skip

    def _outcome(
        self,
        standing: _Standing | None,
        ran: list[_Ran],
        errors: list[str],
        policy: Policy,
    ) -> Outcome:
        error = "; ".join(errors) if errors else None
        decided = -1 if standing is None else standing.record
        # Each record made once, knowing whether its verdict stood (one tier: no loop).
        if len(ran) == 1:
            records: tuple[TierRecord, ...] = (_record(ran[0], decided == 0),)
        else:
            records = tuple(_record(r, i == decided) for i, r in enumerate(ran))
        if standing is None:
            first = self.tiers[0]
            return Outcome(None, first, first.policy(policy), records, error)
        return Outcome(standing.verdict, standing.tier, standing.policy, records, error)


# `TierRecord(...)`, filled in as a draft (routing_core._records): one per tier per turn.
_tier_record: Callable[..., TierRecord] = builder(TierRecord)


def _record(ran: _Ran, decided: bool) -> TierRecord:
    name, kind, elapsed, usage, error, note = ran
    return _tier_record(name, decided, kind, elapsed, usage, error, note)


def contenders(verdict: Verdict, policy: Policy, incumbent: str | None) -> tuple[str, ...]:
    """The routes a near-tie is between: alive and within the margin of the top, capped as a
    menu is, plus the incumbent when it is alive."""
    alive = [r for r in verdict.ranked if r.route in verdict.alive]
    if not alive:
        return ()
    top = alive[0].score
    near = [r.route for r in alive if gap(top, r.score) < policy.near_tie_margin]
    chosen = list(dict.fromkeys([alive[0].route, *near]))[: max(2, policy.menu_size)]
    if incumbent is not None and incumbent in verdict.alive and incumbent not in chosen:
        chosen.append(incumbent)
    return tuple(chosen)


def _abstained(tier: Tier, verdict: Verdict) -> bool:
    """A categorical tier that picked nothing leaves the verdict before it standing."""
    return tier.scorer.info.categorical and verdict.kind == "unmatched"


def _takes(takes: Callable[[str], bool], text: str) -> bool:
    """Whether a tier takes the message; a test that fails takes nothing: the decisive
    verdict before it stands, and the turn never raises (docs/pack-format.md, Failures)."""
    try:
        return bool(takes(text))
    except Exception:  # noqa: BLE001 - the standing verdict is a decision already
        return False


def _since(started: int) -> int:
    return (time.perf_counter_ns() - started) // 1000
