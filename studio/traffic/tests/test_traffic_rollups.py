"""The Traffic page reads hourly rollups: the same figures as counting the turns, at a cost
that does not follow the turns; ingest and retention keep the rollups equal to a recount."""

from __future__ import annotations

import random
import threading
import zoneinfo
from bisect import bisect_right
from collections import Counter
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from studio.agents.events import EventBatchIn, expire_events, ingest
from studio.models import Event, Profile, TrafficHour, TrafficSettings
from studio.traffic.rollups import KEY, count_turns, rebuild
from studio.traffic.turns import _edges, period

NOW = datetime(2026, 12, 2, 15, 40, 12, tzinfo=UTC)
VERDICTS = [("move", "scorer", "billing", "lexical"), ("move", "rule", "human", ""),
            ("stay", "continuity", "shipping", ""), ("menu", "menu", "", ""),
            ("unmatched", "none", "", ""), ("move", "scorer", "shipping", "embedding")]  # fmt: skip


def synthetic(
    profile: Profile, n: int, seed: int = 7, days: float = 61, text_every: int = 1
) -> list[Event]:
    """`n` turns spread over the `days` before NOW, stored and counted as ingest counts them;
    one in `text_every` keeps its message text."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        verdict, by, route, tier = rng.choice(VERDICTS)
        received = NOW - timedelta(seconds=rng.uniform(0, days * 86400))
        rows.append(
            Event(profile=profile, received=received, verdict=verdict, by=by, route=route,
                  tier=tier, language=rng.choice(["en", "fr", ""]),
                  message=None if i % text_every else "hello", event={})
        )  # fmt: skip
    Event.objects.bulk_create(rows, batch_size=500)
    count_turns(rows)
    return rows


def recount(profile: Profile, days: int, now: datetime) -> dict[str, Any]:
    """The page's figures counted from every turn: what the Traffic page computed before
    rollups, kept here as the reference."""
    edges = _edges(days, now)
    start, end = edges[0], edges[-1]
    before = start - (end - start)
    bars: Counter[int] = Counter()
    shares: dict[str, Counter[tuple[str, str]]] = {k: Counter() for k in KEY}
    total = total_before = 0
    for e in Event.objects.filter(profile=profile, received__gte=before, received__lt=end):
        when = "now" if e.received >= start else "before"
        if when == "now":
            total += 1
            bars[bisect_right(edges, e.received) - 1] += 1
        else:
            total_before += 1
        for k in KEY:
            shares[k][(getattr(e, k), when)] += 1
    return {
        "total": (total, total_before),
        "buckets": [(at, bars[i]) for i, at in enumerate(edges[:-1])],
        **{k: {v: (c[(v, "now")], c[(v, "before")]) for v, _ in c} for k, c in shares.items()},
    }


def figures(profile: Profile, days: int, now: datetime) -> dict[str, Any]:
    p = period(profile, days, now=now)
    got: dict[str, Any] = {"total": (p.total, p.total_before), "buckets": p.buckets}
    for column, rows in (("by", p.by), ("route", p.routes), ("tier", p.tiers),
                         ("language", p.languages)):  # fmt: skip
        got[column] = {s.label: (s.now, s.before) for s in rows}
    got["verdict"] = {s.label: (s.now, s.before) for s in p.outcomes}
    return got


def expected(profile: Profile, days: int, now: datetime) -> dict[str, Any]:
    """The reference, labelled as the page labels it."""
    from studio.traffic.turns import BY_LABELS, LANGUAGE_LABELS

    ref = recount(profile, days, now)
    none = "no route (a menu, or nothing matched)"
    outcome = {"unmatched": "nothing matched", "menu": "a menu was offered"}
    return {
        "total": ref["total"],
        "buckets": ref["buckets"],
        "by": {BY_LABELS.get(k, k): v for k, v in ref["by"].items()},
        "route": {k or none: v for k, v in ref["route"].items()},
        "tier": {
            (k or "no scoring tier (a rule, or none stood)"): v for k, v in ref["tier"].items()
        },
        "verdict": {outcome[k]: v for k, v in ref["verdict"].items() if k in outcome},
        "language": {LANGUAGE_LABELS.get(k, k): v for k, v in ref["language"].items()},
    }


@pytest.mark.parametrize("zone", ["UTC", "Pacific/Honolulu", "Asia/Kolkata", "Asia/Kathmandu"])
@pytest.mark.parametrize("days", [1, 7, 30])
def test_the_figures_from_rollups_equal_a_count_of_every_turn(zone, days, profile):
    """Whole-hour zones read rollups alone; +5:30 and +5:45 cut hours at every bar's edge, and
    those hours are counted from their turns: the figures are the same either way."""
    synthetic(profile, 3000)
    with timezone.override(zoneinfo.ZoneInfo(zone)):
        assert figures(profile, days, NOW) == expected(profile, days, NOW)


def _page_queries(client: Any, slug: str, days: int) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("traffic", args=[slug]) + f"?days={days}")
    assert response.status_code == 200
    return [q["sql"] for q in queries.captured_queries]


@pytest.mark.parametrize("days", [1, 7, 30])
def test_the_traffic_page_reads_no_turn_and_a_fixed_number_of_queries(
    days, profile, viewer, client_for
):
    client = client_for(viewer)
    synthetic(profile, 50, days=2)
    _page_queries(client, profile.slug, days)  # a first visit may queue the draft's training
    few = _page_queries(client, profile.slug, days)
    synthetic(profile, 2000, seed=8, days=2)
    many = _page_queries(client, profile.slug, days)

    assert len(many) == len(few)
    reads = [sql for sql in many if '"studio_event"' in sql]
    assert reads == [], reads


def _snapshot(profile: Profile | None = None) -> Counter[tuple[Any, ...]]:
    rows = (
        TrafficHour.objects.all()
        if profile is None
        else TrafficHour.objects.filter(profile=profile)
    )
    return Counter(
        {(r.profile_id, r.hour, *(getattr(r, k) for k in KEY)): r.turns for r in rows if r.turns}
    )


def _recounted() -> Counter[tuple[Any, ...]]:
    rebuild()
    return _snapshot()


def test_ingest_counts_its_batch_into_the_hour_it_arrived(profile):
    records = [
        {"message": "m", "event": {"schema": "route-decision/1", "verdict": v, "by": b,
                                   "route": r or None}}
        for v, b, r, _ in VERDICTS
    ] * 3  # fmt: skip
    ingest(profile, EventBatchIn.model_validate({"events": records}))
    ingest(profile, EventBatchIn.model_validate({"events": records[:4]}))

    counted = _snapshot()
    assert sum(counted.values()) == Event.objects.count() == 22
    assert counted == _recounted()


def test_retention_takes_off_the_rollups_exactly_what_it_deletes(profile):
    TrafficSettings.objects.create(profile=profile, retention_days=7)
    synthetic(profile, 2000, days=12)
    expire_events(now=NOW)  # the cutoff falls at 15:40:12: its hour is cut

    assert Event.objects.filter(received__lt=NOW - timedelta(days=7)).count() == 0
    kept = _snapshot()
    assert sum(kept.values()) == Event.objects.count()
    assert kept == _recounted()


def test_deleting_a_profile_deletes_its_rollups(profile):
    synthetic(profile, 20, days=1)
    profile.delete()
    assert TrafficHour.objects.count() == 0


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_simultaneous_ingests_into_the_same_hour_lose_no_count(profile):
    """Eight batches at once, all into the same rows: an add in the database, never a read
    and write back, so every turn counts."""
    records = [
        {"message": "m", "event": {"schema": "route-decision/1", "verdict": "move",
                                   "by": "scorer", "route": "billing"}},
        {"message": "m", "event": {"schema": "route-decision/1", "verdict": "menu", "by": "menu"}},
    ] * 50  # fmt: skip
    batch = EventBatchIn.model_validate({"events": records})
    barrier, errors = threading.Barrier(8), []

    def send() -> None:
        try:
            barrier.wait()
            for _ in range(5):
                ingest(Profile.objects.get(pk=profile.pk), batch)
        except Exception as exc:  # noqa: BLE001 - the test asserts there was none
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)

    assert errors == []
    counted = _snapshot(profile)
    assert sum(counted.values()) == Event.objects.filter(profile=profile).count() == 8 * 5 * 100
    assert counted == _recounted()


# -- the review inbox reads by index ------------------------------------------------------------


def _plans(queries: list[str]) -> list[tuple[str, str]]:
    """(query, plan) of every captured query that reads studio_event, planned with table
    scans made as dear as the database allows, so that a plan still scanning has no index."""
    plans = []
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Estimates from the rows, not defaults, and indexes rid of the rows that earlier
            # tests' rolled-back transactions left behind.
            cursor.execute("VACUUM ANALYZE studio_event")
            cursor.execute("SET enable_seqscan = off")
        for sql in queries:
            if '"studio_event"' not in sql or not sql.lstrip().startswith("SELECT"):
                continue
            if connection.vendor == "postgresql":
                cursor.execute("EXPLAIN " + sql)
            else:
                cursor.execute("EXPLAIN QUERY PLAN " + sql)
            plans.append((sql, "\n".join(str(row[-1]) for row in cursor.fetchall())))
        if connection.vendor == "postgresql":
            cursor.execute("RESET enable_seqscan")
    return plans


@pytest.mark.django_db(transaction=True)  # VACUUM runs outside a transaction
def test_the_review_inbox_reads_turns_by_their_own_indexes(profile, editor, client_for):
    # Most turns without text (a profile that stopped keeping it): the inbox's rows are few,
    # and a read by the profile's index alone would go through all of its turns.
    synthetic(profile, 600, days=2, text_every=15)
    client = client_for(editor)
    event = Event.objects.filter(message__isnull=False).first()
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse("traffic-review", args=[profile.slug])).status_code == 200
        client.post(reverse("traffic-label", args=[profile.slug, event.pk]), {"as": "dismiss"})
    plans = _plans([q["sql"] for q in queries.captured_queries])

    assert plans
    for sql, plan in plans:
        assert "SCAN studio_event" not in plan and "Seq Scan on studio_event" not in plan, (
            sql,
            plan,
        )
    used = "\n".join(plan for _, plan in plans)
    for index in ("event_with_text", "event_open", "event_reviewed"):
        assert index in used, used


def test_the_command_recounts_rollups_after_events_changed_by_hand(profile):
    from io import StringIO

    from django.core.management import call_command

    synthetic(profile, 500, days=3)
    Event.objects.filter(pk__in=Event.objects.values("pk")[:100]).delete()  # not by retention
    TrafficHour.objects.filter(pk__in=TrafficHour.objects.values("pk")[:5]).update(turns=999)
    out = StringIO()

    call_command("traffic_rollups", "--profile", profile.slug, stdout=out)

    assert out.getvalue().strip() == "counted 400 turns into hourly rollups"
    counted = _snapshot()
    assert sum(counted.values()) == 400 and counted == _recounted()


def test_the_migration_counts_the_turns_stored_before_rollups(profile):
    """The backfill's SQL (one INSERT … SELECT per database) writes what a recount writes."""
    import importlib

    backfill = importlib.import_module("studio.migrations.0026_traffic_rollups_backfill").backfill
    synthetic(profile, 1500, days=40)
    recounted = _recounted()
    TrafficHour.objects.all().delete()

    backfill(None, SimpleNamespace(connection=connection))  # all it reads of the editor

    assert _snapshot() == recounted
