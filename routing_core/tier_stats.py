"""Per-tier accounting for evaluation: which tier decided each turn, and what each one cost."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from routing_core.decision import Decision
from routing_core.scorers.base import NO_USAGE, Usage

RULE = "rule"
NO_TIER = "(none)"  # every tier failed: the turn fell back without a verdict


@dataclass(frozen=True, slots=True)
class TierStats:
    """One tier over an evaluation: how often it ran and decided, its latency and its tokens."""

    ran: int
    decided: int
    errors: int
    latency_us: dict[str, float]
    usage: Usage

    def to_dict(self, cases: int) -> dict[str, Any]:
        """The JSON form; `share` is the fraction of all cases this tier decided."""
        return {
            "ran": self.ran,
            "decided": self.decided,
            "share": round(self.decided / cases, 4) if cases else None,
            "errors": self.errors,
            "latency_us": {k: round(v, 1) for k, v in self.latency_us.items()},
            "tokens": self.usage.to_event(),
        }


def decided_by(decision: Decision) -> str:
    """The tier a decision stands on: `rule`, a scorer tier's name, `decider`, or `(none)`."""
    if decision.by == RULE:
        return RULE
    return next((t.name for t in decision.tiers if t.decided), NO_TIER)


def tier_stats(decisions: Iterable[Decision]) -> tuple[dict[str, TierStats], dict[str, int]]:
    """Per tier (in the order tiers first ran): counts, latency and tokens; and who decided."""
    runs: dict[str, list[int]] = {}
    decided: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    usage: dict[str, Usage] = {}
    by: Counter[str] = Counter()
    for decision in decisions:
        by[decided_by(decision)] += 1
        for record in decision.tiers:
            runs.setdefault(record.name, []).append(record.elapsed_us)
            decided[record.name] += record.decided
            errors[record.name] += record.error is not None
            usage[record.name] = usage.get(record.name, NO_USAGE) + record.usage
    stats = {
        name: TierStats(len(times), decided[name], errors[name], _latency(times), usage[name])
        for name, times in runs.items()
    }
    return stats, dict(by.most_common())


def _latency(times: list[int]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50": _nearest_rank(ordered, 50),
        "p99": _nearest_rank(ordered, 99),
        "mean": statistics.fmean(ordered) if ordered else 0.0,
    }


def _nearest_rank(ordered: list[int], pct: float) -> float:
    if not ordered:
        return 0.0
    rank = max(1, -(-len(ordered) * pct // 100))
    return float(ordered[int(rank) - 1])
