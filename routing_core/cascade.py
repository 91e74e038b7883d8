"""Tier 2 as a cascade: scorers tried cheapest first, each only while the verdict is open.

A tier runs when no tier before it was decisive. A categorical tier (the LLM) runs only on a
remaining near-tie, and only over its contenders: the routes within the margin of the top,
plus the incumbent. Its "no pick" is an abstention: the verdict before it stands, as does
the verdict before a tier that fails. Every tier that ran leaves a `TierRecord` (its verdict,
time, tokens, error); the one whose verdict the decision stands on is marked `decided`.

Thresholds: a tier may declare its own floor and near-tie margin (in its scores' units);
they replace the policy's for that tier, and the decision records the policy it used.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from routing_core._types import ScoreArray
from routing_core.conversation import Prior, is_distribution
from routing_core.decision import TierRecord
from routing_core.policy import Policy, Verdict, decide_scores, gap
from routing_core.scorers.base import NO_USAGE, Scored, Tier, Usage, measure


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the cascade concluded: the standing verdict (None: every tier failed) and records."""

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


@dataclass(frozen=True, slots=True)
class _Standing:
    verdict: Verdict
    tier: Tier
    policy: Policy
    index: int


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
        records: list[TierRecord] = []
        errors: list[str] = []
        for index, tier in enumerate(self.tiers):
            if not self._should_run(tier, standing, first_only, bool(records)):
                break
            candidates = self._candidates(tier, standing, incumbent)
            started = time.perf_counter_ns()
            try:
                scored = measure(tier.scorer, text, candidates)
                prior = self._prior(index, tier, candidates, incumbent, policy)
                verdict = self._judge(tier, scored, candidates, incumbent, policy, prior)
            except Exception as exc:  # noqa: BLE001 - a failing tier is recorded, never raised
                message = f"{type(exc).__name__}: {exc}"[:300]
                errors.append(f"{tier.name}: {message}" if len(self.tiers) > 1 else message)
                usage = getattr(exc, "usage", NO_USAGE)
                records.append(TierRecord(tier.name, False, None, _since(started), usage, message))
                continue
            records.append(
                TierRecord(
                    tier.name, False, verdict.kind, _since(started), scored.usage, None, scored.note
                )
            )
            if not (standing is not None and _abstained(tier, verdict)):
                standing = _Standing(verdict, tier, tier.policy(policy), len(records) - 1)
        return self._outcome(standing, records, errors, policy)

    def _should_run(
        self, tier: Tier, standing: _Standing | None, first_only: bool, any_ran: bool
    ) -> bool:
        if first_only:
            return not any_ran and not tier.scorer.info.categorical
        if standing is None:
            return True
        if standing.verdict.decisive:
            return False
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
        policy: Policy,
        prior: Prior | None = None,
    ) -> Verdict:
        if len(scored) != len(candidates):
            raise ValueError(f"{len(scored)} scores for {len(candidates)} routes")
        scores: Sequence[float] | ScoreArray = (
            scored.scores if scored.array is None else scored.array
        )
        if candidates is not self._names:  # a near-tie's contenders: the others score 0
            by_name = dict(zip(candidates, scored.scores, strict=True))
            scores = [float(by_name.get(n, 0.0)) for n in self._names]
        info = tier.scorer.info
        return decide_scores(
            self._names, scores, incumbent, tier.policy(policy), info.floor, info.categorical,
            info.temperature, prior,
        )  # fmt: skip

    def _outcome(
        self,
        standing: _Standing | None,
        records: list[TierRecord],
        errors: list[str],
        policy: Policy,
    ) -> Outcome:
        error = "; ".join(errors) if errors else None
        if standing is None:
            first = self.tiers[0]
            return Outcome(None, first, first.policy(policy), tuple(records), error)
        r = records[standing.index]  # built by hand: dataclasses.replace costs more, every turn
        records[standing.index] = TierRecord(
            r.name, True, r.verdict, r.elapsed_us, r.usage, r.error, r.note
        )
        return Outcome(standing.verdict, standing.tier, standing.policy, tuple(records), error)


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


def _since(started: int) -> int:
    return (time.perf_counter_ns() - started) // 1000
