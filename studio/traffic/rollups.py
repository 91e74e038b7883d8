"""Hourly rollups of stored turns: what the Traffic page counts, kept as events arrive.

The page shows turns per hour or day and their shares by verdict, by who decided, by route and
by scoring tier. Counting those from the events themselves costs a read of every turn of the
period (a million turns: 22 s); a `TrafficHour` row holds the count of one UTC hour with one
outcome, so the page reads at most hours × outcomes rows whatever the traffic.

- Ingest adds its batch's counts in the transaction that stores the batch, as one upsert that
  adds to the stored count in the database (never read, add, write back): two ingests into the
  same row at once both count.
- Retention takes off what it deletes: whole hours go, and the turns of a cut hour are counted
  off before they are deleted, so rollups and events agree (docs/decisions.md, "Traffic rollups").
- `rebuild` recounts from the events (the data migration that introduced rollups, and the
  `traffic_rollups` command after a repair).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, F
from django.db.models.functions import TruncHour

from studio.models import Event, TrafficHour

HOUR = timedelta(hours=1)
# What the page counts turns by, besides the hour.
KEY = ("verdict", "by", "route", "tier", "language")

Key = tuple[int, datetime, str, str, str, str, str]  # profile, hour, and KEY


def floor_hour(at: datetime) -> datetime:
    """The start of the UTC hour `at` is in."""
    return at.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def count_turns(rows: Iterable[Event]) -> None:
    """Add stored events to their hours' rollups; call inside the transaction that stores them."""
    counts = Counter(
        (r.profile_id, floor_hour(r.received), *(getattr(r, k) for k in KEY)) for r in rows
    )
    add_counts(counts)


def has_turns(profile_id: int) -> bool:
    """Whether any turn of the profile is stored, read from its hours (they and the events
    agree, retention included), so that the Traffic page still reads no turn."""
    return TrafficHour.objects.filter(profile_id=profile_id, turns__gt=0).exists()


def add_counts(counts: Counter[Key]) -> None:
    """Upsert `counts`, adding to what is stored (INSERT … ON CONFLICT DO UPDATE, in SQLite
    and PostgreSQL alike). Rows go in key order, so that two batches touching the same rows
    lock them in the same order and cannot deadlock."""
    if not counts:
        return
    table, q = TrafficHour._meta.db_table, connection.ops.quote_name
    columns = ("profile_id", "hour", *KEY)
    names = ", ".join(q(c) for c in columns)
    keys = sorted(counts)
    values = ", ".join(["(" + ", ".join(["%s"] * (len(columns) + 1)) + ")"] * len(keys))
    params: list[Any] = []
    for key in keys:
        profile_id, hour, *rest = key
        params += [profile_id, connection.ops.adapt_datetimefield_value(hour), *rest, counts[key]]
    sql = (
        f"INSERT INTO {q(table)} ({names}, {q('turns')}) VALUES {values} "
        f"ON CONFLICT ({names}) DO UPDATE SET {q('turns')} = {q(table)}.{q('turns')} + "
        f"EXCLUDED.{q('turns')}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def forget_before(profile_id: int, cutoff: datetime) -> None:
    """Take off the rollups what deleting the profile's events older than `cutoff` removes:
    the hours before the cutoff's hour, and the turns of its hour before it. Call inside the
    transaction that deletes them."""
    hour = floor_hour(cutoff)
    cut = Event.objects.filter(profile_id=profile_id, received__gte=hour, received__lt=cutoff)
    for row in cut.values(*KEY).annotate(n=Count("id")).order_by(*KEY):
        n = row.pop("n")
        TrafficHour.objects.filter(profile_id=profile_id, hour=hour, **row).update(
            turns=F("turns") - n
        )
    gone = TrafficHour.objects.filter(profile_id=profile_id, hour__lt=hour)
    gone.delete()
    TrafficHour.objects.filter(profile_id=profile_id, hour=hour, turns__lte=0).delete()


def rebuild(profile_id: int | None = None) -> int:
    """Recount the rollups of one profile (or all) from the stored events; returns the turns
    counted. Meant for when events arrive nowhere else (a migration, a repair): an ingest
    committing meanwhile into a recounted hour may be counted twice or not at all."""
    events = Event.objects.order_by()
    rollups = TrafficHour.objects.all()
    if profile_id is not None:
        events, rollups = (
            events.filter(profile_id=profile_id),
            rollups.filter(profile_id=profile_id),
        )
    grouped = (
        events.annotate(hour=TruncHour("received", tzinfo=UTC))
        .values("profile_id", "hour", *KEY)
        .annotate(n=Count("id"))
        .order_by()
    )
    total = 0
    with transaction.atomic():
        rollups.delete()
        batch: Counter[Key] = Counter()
        for row in grouped.iterator(chunk_size=2000):
            key = (row["profile_id"], floor_hour(row["hour"]), *(row[k] for k in KEY))
            batch[key] += row["n"]
            total += row["n"]
            if len(batch) == 500:
                add_counts(batch)
                batch = Counter()
        add_counts(batch)
    return total
