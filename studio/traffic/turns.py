"""The Traffic page's figures and the review queue, read from stored decision events.

A period is the last `days` calendar days in the viewer's time zone; "before" is the period just ahead of it, so every share comes
with its change. Shares count turns: unmatched, menu, who decided (`by`), and where they went.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from routing_core import Router
from studio.models import Event, Profile, Route, TestCase
from studio.shared.drafts import playground_router
from studio.shared.edits import save_item
from studio.shared.errors import Conflict, Refused
from studio.suites import add_test_case

REVIEW_WINDOW = 5000  # the latest turns the review queue looks through
BY_LABELS = {
    "rule": "a rule",
    "scorer": "the scorer",
    "continuity": "stayed on course",
    "menu": "a menu",
    "decider": "the LLM decider",
    "default": "the default route",
    "none": "nobody (no menu under rails)",
}


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


# -- the review queue -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewItem:
    event: Event
    reasons: list[str]


def review_queue(profile: Profile, limit: int = 50) -> list[ReviewItem]:
    """Unreviewed turns with text worth a look, newest first, each with why it is here."""
    margin = profile.near_tie_margin
    recent = list(
        Event.objects.filter(profile=profile, message__isnull=False)
        .defer("event")
        .order_by("-received", "-pk")[:REVIEW_WINDOW]
    )
    nxt = {(e.conversation, e.turn): e for e in recent if e.conversation and e.turn is not None}
    items = []
    for e in recent:
        if e.reviewed_at is not None:
            continue
        reasons = _reasons(e, margin, nxt.get((e.conversation, (e.turn or 0) + 1)))
        if reasons:
            items.append(ReviewItem(e, reasons))
            if len(items) == limit:
                break
    return items


def _reasons(e: Event, margin: float, following: Event | None) -> list[str]:
    reasons = []
    if e.verdict == "unmatched":
        reasons.append("nothing matched")
    if e.verdict == "menu":
        reasons.append("a menu was offered")
    elif e.gap is not None and not e.decisive and e.gap < margin:
        reasons.append("a near tie")
    if (
        e.conversation
        and e.route
        and following is not None
        and following.from_route == e.route
        and following.verdict == "move"
        and following.route != e.route
    ):
        reasons.append("the next turn left this route at once")
    return reasons


def label_turn(event: Event, right_route: str, *, as_example: bool, user: Any) -> TestCase | Route:
    """Record a person's answer for a turn: a new test case, or an example of the route.

    Both are written through `studio.shared.edits` and so land in the audit trail.

    Raises:
        Refused: no message text, an unknown route, or an example for "no route".
    """
    profile = event.profile
    if event.message is None:
        raise Refused([("message", "this turn has no message text to learn from")])
    with transaction.atomic():
        if as_example:
            made: TestCase | Route = _add_example(profile, right_route, event.message, user)
        else:
            decision = _draft_router(profile).route(event.message, event.from_route or None)
            made = add_test_case(profile, decision, event.message, right_route, user=user)
        Event.objects.filter(pk=event.pk).update(
            reviewed_at=timezone.now(), reviewed_by=user, right_route=right_route
        )
    return made


def _draft_router(profile: Profile) -> Router:
    """The draft's router as the playground has it: its own model, else the last one trained.

    The test case keeps the verdict kind, triage and tools the draft gives the turn; a model a
    revision old only matters to the verdict kind, and the suite's next run re-judges it anyway.
    """
    router = playground_router(profile).router
    if router is None:
        raise Refused([("route", "the draft's first model is still training: try again shortly")])
    return router


def _current_route(profile: Profile, name: str) -> Route:
    route = profile.routes.filter(name=name).first()
    if route is None:
        raise Refused([("route", "choose the route this message is an example of")])
    return route


ADD_TRIES = 3  # each try loses only to an edit that was saved meanwhile


def _add_example(profile: Profile, name: str, message: str, user: Any) -> Route:
    """Append the message to the route's examples, on the route as it is now.

    People labelling turns of one route at once each add an example: an edit saved in
    between is merged (read again and the example appended to it), not lost or refused.

    Raises:
        Conflict: the route kept changing under every try.
    """
    for attempt in range(ADD_TRIES):
        route = _current_route(profile, name)
        if message in route.examples:
            return route
        route.examples = [*route.examples, message]
        try:
            with transaction.atomic():
                save_item(route, user=user, expected_revision=route.revision)
        except Conflict:
            if attempt == ADD_TRIES - 1:
                raise
            continue
        return route
    raise AssertionError("unreachable")


def reviewed_count(profile: Profile) -> int:
    return Event.objects.filter(profile=profile).filter(~Q(reviewed_at=None)).count()
