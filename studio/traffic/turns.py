"""The Traffic page's figures, read from the hourly rollups of stored turns (rollups.py; the
review inbox: review.py).

A period is the last `days` calendar days in the viewer's time zone; "before" is the period just ahead of it, so every share comes
with its change. Shares count turns: unmatched, menu, who decided (`by`), and where they went.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any

from django.db.models import Q, QuerySet, Sum
from django.utils import timezone

from routing_core.languages import NAMES
from studio.models import Event, Profile, TrafficHour
from studio.traffic.rollups import HOUR, KEY, floor_hour

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
    one day is the last 24 whole hours. Days and hours are the active time zone's (the viewer's).

    Read from the hourly rollups (studio.traffic.rollups), so the cost follows the hours and
    outcomes of the period, not its turns. A zone off UTC by a part of an hour cuts some UTC
    hours at a bar's edge: those hours alone are counted from their events, by index."""
    edges = _edges(days, now or timezone.now())
    start, end = edges[0], edges[-1]
    before = start - (end - start)
    tally = _Tally(edges, start)
    cut = sorted({floor_hour(b) for b in (before, *edges) if b != floor_hour(b)})
    hours = TrafficHour.objects.filter(profile=profile, hour__gte=floor_hour(before), hour__lt=end)
    hours = hours.exclude(hour__in=cut).order_by()
    for row in hours.values("hour").annotate(n=Sum("turns")):
        tally.add_hour(row["hour"], row["n"])
    was = Q(hour__lt=start)
    for column in KEY:
        rows = hours.values(column).annotate(
            now=Sum("turns", filter=~was, default=0), before=Sum("turns", filter=was, default=0)
        )
        for row in rows:
            tally.add_share(column, row[column], row["now"], row["before"])
    if cut:
        tally.add_events(_turns_in(profile, cut, before, end))
    total, total_before = tally.totals()

    def shares(column: str, labels: dict[str, str] | None = None, top: int = 12) -> list[Share]:
        now_counts, before_counts = tally.now[column], tally.before[column]
        keys = sorted(
            set(now_counts) | set(before_counts),
            key=lambda k: (-now_counts[k], -before_counts[k], k),
        )
        return [
            Share((labels or {}).get(k, k or "no route (a menu, or nothing matched)"), now_counts[k],
                  before_counts[k], total, total_before)
            for k in keys[:top]
        ]  # fmt: skip

    outcome = {"unmatched": "nothing matched", "menu": "a menu was offered"}
    return Period(
        days=days,
        start=start,
        end=end,
        total=total,
        total_before=total_before,
        buckets=tally.buckets(),
        outcomes=[s for s in shares("verdict", outcome) if s.label in outcome.values()],
        by=shares("by", BY_LABELS),
        routes=shares("route"),
        tiers=shares("tier", {"": "no scoring tier (a rule, or none stood)"}),
        languages=shares("language", LANGUAGE_LABELS),
    )


class _Tally:
    """Counts of one period and the one before, per bar and per outcome column."""

    def __init__(self, edges: list[datetime], start: datetime) -> None:
        self.edges, self.start = edges, start
        self.bars: Counter[int] = Counter()
        self.total_before = 0
        self.now: dict[str, Counter[str]] = {c: Counter() for c in KEY}
        self.before: dict[str, Counter[str]] = {c: Counter() for c in KEY}

    def add_hour(self, at: datetime, n: int) -> None:
        """Turns of a time (an hour's start, or a turn's) that falls in one bar or before."""
        if at < self.start:
            self.total_before += n
        else:
            self.bars[bisect_right(self.edges, at) - 1] += n

    def add_share(self, column: str, key: str, now: int, before: int) -> None:
        self.now[column][key] += now
        self.before[column][key] += before

    def add_events(self, rows: Iterable[tuple[Any, ...]]) -> None:
        for received, *values in rows:
            self.add_hour(received, 1)
            counts = self.before if received < self.start else self.now
            for column, value in zip(KEY, values, strict=True):
                counts[column][value] += 1

    def totals(self) -> tuple[int, int]:
        return sum(self.bars.values()), self.total_before

    def buckets(self) -> list[tuple[datetime, int]]:
        return [(at, self.bars[i]) for i, at in enumerate(self.edges[:-1])]


def _turns_in(
    profile: Profile, hours: list[datetime], before: datetime, end: datetime
) -> QuerySet[Event, tuple[Any, ...]]:
    """The turns of the cut hours within [before, end): when, and what the page counts."""
    within = Q()
    for hour in hours:
        within |= Q(received__gte=hour, received__lt=hour + HOUR)
    events = Event.objects.filter(profile=profile, received__gte=before, received__lt=end)
    return events.filter(within).order_by().values_list("received", *KEY)


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
