"""The Traffic page's figures, read from stored decision events (the review inbox: review.py).

A period is the last `days` calendar days in the viewer's time zone; "before" is the period just ahead of it, so every share comes
with its change. Shares count turns: unmatched, menu, who decided (`by`), and where they went.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta

from django.db.models import Count, QuerySet
from django.utils import timezone

from routing_core.languages import NAMES
from studio.models import Event, Profile

BY_LABELS = {
    "rule": "a rule",
    "scorer": "the scorer",
    "continuity": "stayed on course",
    "menu": "a menu",
    "decider": "the LLM decider",
    "default": "the default route",
    "none": "nobody (no menu under rails)",
}

# A turn's stored language code in words; "" is a message too short to tell, or none sent.
LANGUAGE_LABELS = {**NAMES, "": "unclear (short, or no text sent)"}


@dataclass(frozen=True)
class Share:
    """One slice of traffic now and in the period before."""

    label: str
    now: int
    before: int
    total_now: int
    total_before: int

    @property
    def share(self) -> float:
        return self.now / self.total_now if self.total_now else 0.0

    @property
    def share_before(self) -> float:
        return self.before / self.total_before if self.total_before else 0.0

    @property
    def change(self) -> float:
        """Percentage points since the period before."""
        return self.share - self.share_before


@dataclass(frozen=True)
class Period:
    """Traffic of one period beside the one before it."""

    days: int
    start: datetime
    end: datetime
    total: int
    total_before: int
    buckets: list[tuple[datetime, int]]
    outcomes: list[Share] = field(default_factory=list)
    by: list[Share] = field(default_factory=list)
    routes: list[Share] = field(default_factory=list)
    tiers: list[Share] = field(default_factory=list)
    languages: list[Share] = field(default_factory=list)


def period(profile: Profile, days: int = 7, now: datetime | None = None) -> Period:
    """Counts for the last `days` calendar days (today included) and the `days` before them;
    one day is the last 24 whole hours. Days and hours are the active time zone's (the viewer's)."""
    edges = _edges(days, now or timezone.now())
    start, end = edges[0], edges[-1]
    before = start - (end - start)
    events = Event.objects.filter(profile=profile).order_by()
    current = events.filter(received__gte=start, received__lt=end)
    previous = events.filter(received__gte=before, received__lt=start)
    total, total_before = current.count(), previous.count()

    def shares(column: str, labels: dict[str, str] | None = None, top: int = 12) -> list[Share]:
        now_counts, before_counts = _counts(current, column), _counts(previous, column)
        keys = sorted(set(now_counts) | set(before_counts), key=lambda k: -now_counts.get(k, 0))
        return [
            Share((labels or {}).get(k, k or "no route (a menu, or nothing matched)"), now_counts.get(k, 0),
                  before_counts.get(k, 0), total, total_before)
            for k in keys[:top]
        ]  # fmt: skip

    outcome = {"unmatched": "nothing matched", "menu": "a menu was offered"}
    return Period(
        days=days,
        start=start,
        end=end,
        total=total,
        total_before=total_before,
        buckets=_buckets(current, edges),
        outcomes=[s for s in shares("verdict", outcome) if s.label in outcome.values()],
        by=shares("by", BY_LABELS),
        routes=shares("route"),
        tiers=shares("tier", {"": "no scoring tier (a rule, or none stood)"}),
        languages=shares("language", LANGUAGE_LABELS),
    )


def _counts(events: QuerySet[Event], column: str) -> dict[str, int]:
    rows = events.values(column).annotate(n=Count("id")).order_by()
    return {row[column]: row["n"] for row in rows}


def _edges(days: int, now: datetime) -> list[datetime]:
    """The bars' boundaries, oldest first: whole hours (one day) or midnights in the active time
    zone, the last bar being the hour or day `now` is in, so a bar labelled "Wed 02" holds
    Wednesday's turns."""
    local = timezone.localtime(now)
    if days <= 1:
        # Whole hours stepped in absolute time: a day with a clock change still has 24 bars.
        hour = local.replace(minute=0, second=0, microsecond=0).astimezone(UTC)
        return [timezone.localtime(hour + timedelta(hours=i)) for i in range(-23, 2)]
    today, zone = local.date(), local.tzinfo
    return [
        datetime.combine(today + timedelta(days=i), time(), tzinfo=zone) for i in range(1 - days, 2)
    ]


def _buckets(events: QuerySet[Event], edges: list[datetime]) -> list[tuple[datetime, int]]:
    """Turns between each pair of edges, oldest first, empty ones included."""
    counts: Counter[int] = Counter()
    for received in events.values_list("received", flat=True).iterator(chunk_size=5000):
        counts[bisect_right(edges, received) - 1] += 1
    return [(at, counts[i]) for i, at in enumerate(edges[:-1])]
