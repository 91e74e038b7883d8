"""A rollout's figures from reported turns, and the check of its conditions on the job queue.

Agents report every turn of a rollout with which pack served it and, in shadow, the
candidate's route and verdict (docs/event-schema.md). A check (`RolloutCheck`, queued as turns
arrive, one at a time per rollout) reads them:

- canary: the candidate's turns against the live pack's turns of the same rollout;
- shadow: the live pack's verdicts against the candidate's on the very same turns (re-asks
  cannot be compared: the candidate never answered anyone).

Conditions are judged once the candidate has served (canary) or scored (shadow) at least the
set number of turns: a rise above a limit halts the rollout, and none promotes it or asks a
publisher to, as the rollout says. The figures that decided go to the audit trail.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError
from django.db.models import Count, F, Q, QuerySet
from django.db.models.functions import TruncHour

from studio.jobs import Reporter, retry_locked, start_job
from studio.models import (
    SERVED,
    Event,
    JobStatus,
    OnHold,
    Rollout,
    RolloutCheck,
    RolloutMode,
    RolloutStatus,
)
from studio.publishing.rollouts import ask_to_promote, halt, promote_candidate, record_figures
from studio.shared.errors import Conflict

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Arm:
    """One side's counts: turns, unmatched turns, turns the user re-asked after (None: unknown)."""

    turns: int
    unmatched: int
    reasked: int | None

    def rate(self, count: int | None) -> float | None:
        """`count` as points of percentage of the turns (None without turns or count)."""
        if count is None or not self.turns:
            return None
        return round(100 * count / self.turns, 2)

    def as_dict(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "unmatched": self.unmatched,
            "unmatched_rate": self.rate(self.unmatched),
            "reasked": self.reasked,
            "reask_rate": self.rate(self.reasked),
        }


def figures(rollout: Rollout) -> dict[str, Any]:
    """Live against candidate so far, and in shadow the disagreements: what a check judges."""
    events = Event.objects.filter(rollout=rollout)
    if rollout.mode == RolloutMode.SHADOW:
        live, candidate = _shadow_arms(events)
        disagree = events.exclude(route=F("shadow_route"), verdict=F("shadow_verdict")).count()
    else:
        live, candidate = _arm(events.filter(arm="live")), _arm(events.filter(arm="candidate"))
        disagree = None
    return {
        "live": live.as_dict(),
        "candidate": candidate.as_dict(),
        "disagreements": disagree,
        "disagreement_rate": live.rate(disagree),
        "unmatched_rise": _rise(live.rate(live.unmatched), candidate.rate(candidate.unmatched)),
        "reask_rise": _rise(live.rate(live.reasked), candidate.rate(candidate.reasked)),
    }


def _arm(events: QuerySet[Event]) -> Arm:
    counts = events.aggregate(
        turns=Count("pk"),
        unmatched=Count("pk", filter=Q(verdict="unmatched")),
        reasked=Count("pk", filter=Q(reasked=True)),
    )
    return Arm(counts["turns"], counts["unmatched"], counts["reasked"])


def _shadow_arms(events: QuerySet[Event]) -> tuple[Arm, Arm]:
    counts = events.aggregate(
        turns=Count("pk"),
        live=Count("pk", filter=Q(verdict="unmatched")),
        candidate=Count("pk", filter=Q(shadow_verdict="unmatched")),
        reasked=Count("pk", filter=Q(reasked=True)),
    )
    turns = counts["turns"]
    return Arm(turns, counts["live"], counts["reasked"]), Arm(turns, counts["candidate"], None)


def _rise(live: float | None, candidate: float | None) -> float | None:
    return None if live is None or candidate is None else round(candidate - live, 2)


def verdict(rollout: Rollout, found: dict[str, Any]) -> tuple[str, str]:
    """What the conditions say of `found`: ("wait" | "halt" | "hold", the reason in words)."""
    turns = found["candidate"]["turns"]
    if turns < rollout.min_turns:
        return "wait", f"{turns} of the {rollout.min_turns} turns to judge on"
    broken = _broken(rollout, found)
    if broken:
        return "halt", broken
    return "hold", f"every condition held over {turns} turns"


def _broken(rollout: Rollout, found: dict[str, Any]) -> str | None:
    limits = (
        ("unmatched rate", rollout.max_unmatched_rise, found["unmatched_rise"], "unmatched_rate"),
        ("re-asks", rollout.max_reask_rise, found["reask_rise"], "reask_rate"),
    )
    for name, limit, rise, key in limits:
        if limit is not None and rise is not None and rise > limit:
            return (
                f"the {name} rose by {rise:g} points (live {found['live'][key]:g}%, "
                f"candidate {found['candidate'][key]:g}%), more than the {limit:g} allowed"
            )
    return None


def execute_check(job: RolloutCheck, progress: Reporter) -> dict[str, Any]:
    """The job's work: judge the rollout on the turns so far and act on the verdict."""
    rollout = Rollout.objects.select_related("environment", "candidate", "live").get(
        pk=job.rollout_id
    )
    if not rollout.is_served:
        return {"outcome": "ended", "figures": rollout.figures}
    found = figures(rollout)
    outcome, reason = verdict(rollout, found)
    try:
        return _act(rollout, outcome, reason, found)
    except Conflict:  # a person, or another check, ended it meanwhile
        return {"outcome": "ended", "figures": found}


def _act(rollout: Rollout, outcome: str, reason: str, found: dict[str, Any]) -> dict[str, Any]:
    if outcome == "halt":
        halt(rollout, reason, found)
        return {"outcome": "halted", "figures": found}
    if outcome == "hold" and rollout.status == RolloutStatus.RUNNING:
        if rollout.on_hold == OnHold.PROMOTE:
            promote_candidate(rollout, reason, found)
            return {"outcome": "promoted", "figures": found}
        ask_to_promote(rollout, reason, found)
        return {"outcome": "asked", "figures": found}
    record_figures(rollout, found)
    return {"outcome": "holding", "figures": found}


def queue_checks(rollout_ids: set[int]) -> None:
    """Queue a check of each served rollout that has none waiting (ingest calls this)."""
    served = Rollout.objects.filter(pk__in=rollout_ids, status__in=SERVED)
    for rollout in served.only("pk", "profile_id"):
        _queue_check(rollout)


def _queue_check(rollout: Rollout) -> None:
    waiting = RolloutCheck.objects.filter(rollout=rollout, status=JobStatus.QUEUED)
    if waiting.exists():
        return  # it will read these turns too
    try:
        job = retry_locked(
            lambda: RolloutCheck.objects.create(profile_id=rollout.profile_id, rollout=rollout)
        )
    except IntegrityError:
        return  # another request queued one just now
    start_job(job)


# -- what the rollout page shows beside the figures ----------------------------------------------


def moves(rollout: Rollout, limit: int = 12) -> list[dict[str, Any]]:
    """The routes that move: in shadow, live route → candidate route on the same turns; in a
    canary, each route's share of the live turns against its share of the candidate's."""
    events = Event.objects.filter(rollout=rollout)
    if rollout.mode == RolloutMode.SHADOW:
        moved = (
            events.exclude(route=F("shadow_route"), verdict=F("shadow_verdict"))
            .values("route", "shadow_route", "shadow_verdict")
            .annotate(n=Count("pk"))
            .order_by("-n")[:limit]
        )
        return [
            {"live": m["route"] or "none", "candidate": m["shadow_route"] or "none", "n": m["n"]}
            for m in moved
        ]
    shares: dict[str, dict[str, int]] = {}
    for m in events.values("arm", "route").annotate(n=Count("pk")):
        shares.setdefault(m["route"] or "none", {})[m["arm"]] = m["n"]
    totals = {
        arm: sum(s.get(arm, 0) for s in shares.values()) or 1 for arm in ("live", "candidate")
    }
    rows: list[dict[str, Any]] = [
        {
            "route": route,
            "live": round(100 * s.get("live", 0) / totals["live"], 1),
            "candidate": round(100 * s.get("candidate", 0) / totals["candidate"], 1),
        }
        for route, s in shares.items()
    ]
    return sorted(rows, key=lambda r: -abs(r["candidate"] - r["live"]))[:limit]


def samples(rollout: Rollout, limit: int = 10) -> list[Event]:
    """Recent turns where the candidate decided otherwise (shadow) or was re-asked (canary),
    with their messages as stored: redacted, or none when the profile keeps no text."""
    events = Event.objects.filter(rollout=rollout)
    if rollout.mode == RolloutMode.SHADOW:
        events = events.exclude(route=F("shadow_route"), verdict=F("shadow_verdict"))
    else:
        events = events.filter(arm="candidate").filter(Q(reasked=True) | Q(verdict="unmatched"))
    return list(events.order_by("-received", "-pk")[:limit])


def over_time(rollout: Rollout) -> list[dict[str, Any]]:
    """Per hour: each side's turns and unmatched rate (live against candidate over time)."""
    events = Event.objects.filter(rollout=rollout).annotate(hour=TruncHour("received"))
    side = "shadow_verdict" if rollout.mode == RolloutMode.SHADOW else "verdict"
    rows: dict[Any, dict[str, Any]] = {}
    for arm in ("live", "candidate"):
        chosen = events if rollout.mode == RolloutMode.SHADOW else events.filter(arm=arm)
        field = side if arm == "candidate" else "verdict"
        for h in chosen.values("hour").annotate(
            n=Count("pk"), unmatched=Count("pk", filter=Q(**{field: "unmatched"}))
        ):
            row = rows.setdefault(h["hour"], {"hour": h["hour"]})
            row[arm] = {"turns": h["n"], "rate": round(100 * h["unmatched"] / h["n"], 1)}
    return [rows[h] for h in sorted(rows)]
