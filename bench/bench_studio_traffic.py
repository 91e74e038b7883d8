"""The studio at volume: the Traffic page over 100k and 1M stored turns, and a replay of long
messages (time, peak memory, what it stores), each beside what the code before rollups and
paged replays did on the same rows.

Usage: .venv/bin/python bench/bench_studio_traffic.py [--turns 100000,1000000]
       [--replay 10000] [--chars 4000] [--skip-before]

Synthetic events only (generated here from tests/packs/support.json, no public data), in a
throwaway SQLite file or the database in DATABASE_URL.
- Traffic: turns spread over 60 days with the support routes' outcomes, stored in bulk and
  counted into rollups as ingest counts them; the page (GET /profiles/<slug>/traffic/?days=N,
  the whole URL stack) timed for 1, 7 and 30 days, median of 3; "before": the page's figures
  counted from every turn, as the Traffic page did before rollups (one pass each).
- Replay: `--replay` stored turns of `--chars` characters replayed on version 1 (half of them
  stored with another route, so half change); wall time, the process's peak RSS growth, the
  stored report's size and the rows it added; "before": the earlier job (every change kept in
  memory, 100 messages a group copied into the report).
Prints figures; asserts nothing. Numbers are "measured beside other work": see `uptime`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUTCOMES = [("move", "scorer", "lexical"), ("move", "rule", ""), ("stay", "continuity", ""),
            ("menu", "menu", ""), ("unmatched", "none", "")]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", default="100000,1000000")
    parser.add_argument("--replay", type=int, default=10_000, help="turns to replay")
    parser.add_argument("--chars", type=int, default=4000, help="characters a replayed message")
    parser.add_argument("--skip-before", action="store_true", help="time the new code only")
    args = parser.parse_args()
    _load()
    with tempfile.TemporaryDirectory() as tmp:
        _setup(Path(tmp))
        for n in (int(t) for t in args.turns.split(",") if t):
            _traffic(n, not args.skip_before)
        if args.replay:
            _replay(args.replay, args.chars, not args.skip_before)
    _load()
    return 0


def _load() -> None:
    one, five, _ = os.getloadavg()
    print(f"load average: {one:.2f} {five:.2f}", flush=True)


def _setup(tmp: Path) -> None:
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    print(f"database: {django.db.connection.vendor}", flush=True)


def _profile(slug: str) -> Any:
    from studio.importing.packs import import_pack

    pack = (ROOT / "tests" / "packs" / "support.json").read_text(encoding="utf-8")
    return import_pack(pack, user=None, slug=slug)


# -- the Traffic page -------------------------------------------------------------------------


def _traffic(n: int, before: bool) -> None:
    from studio.models import Event

    profile = _traffic_profile()
    have = Event.objects.filter(profile=profile).count()
    if have < n:
        started = time.perf_counter()
        _store(profile, n - have)
        print(f"stored {n - have:,} synthetic turns in {time.perf_counter() - started:.0f} s")
    for days in (1, 7, 30):
        took = _page(profile, days)
        line = f"Traffic page, {n:,} turns, {days} day(s): {took * 1e3:,.0f} ms (rollups)"
        if before:
            line += f"; before (counting every turn): {_before(profile, days) * 1e3:,.0f} ms"
            line = line.replace("ms (rollups)", "ms (rollups, median of 3)")
        print(line, flush=True)
    _load()


def _traffic_profile() -> Any:
    from studio.models import Profile

    return Profile.objects.filter(slug="bench-traffic").first() or _profile("bench-traffic")


def _store(profile: Any, n: int, chunk: int = 5000) -> None:
    """`n` turns over the last 60 days, stored and counted into rollups as ingest does."""
    from django.db import transaction
    from django.utils import timezone

    from studio.models import Event
    from studio.traffic.rollups import count_turns

    rng, now = random.Random(n), timezone.now()
    routes = list(profile.routes.values_list("name", flat=True))
    for start in range(0, n, chunk):
        rows = []
        for _ in range(min(chunk, n - start)):
            verdict, by, tier = rng.choice(OUTCOMES)
            route = rng.choice(routes) if verdict in ("move", "stay") else ""
            received = now - timedelta(seconds=rng.uniform(0, 60 * 86400))
            rows.append(
                Event(profile=profile, received=received, verdict=verdict, by=by, route=route,
                      tier=tier, message="where is my parcel", event={"verdict": verdict})
            )  # fmt: skip
        with transaction.atomic():
            Event.objects.bulk_create(rows, batch_size=1000)
            count_turns(rows)


def _client() -> Any:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from studio.shared.roles import grant

    user, _ = get_user_model().objects.get_or_create(username="bench-viewer")
    grant(user, "viewer")
    client = Client()
    client.force_login(user)
    return client


def _page(profile: Any, days: int) -> float:
    client = _client()
    url = f"/profiles/{profile.slug}/traffic/?days={days}"
    assert client.get(url).status_code == 200  # a first visit may queue work of its own
    times = []
    for _ in range(3):
        started = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200
    return statistics.median(times)


def _before(profile: Any, days: int) -> float:
    """The whole page with its figures counted as before rollups: every turn of both periods."""
    from unittest import mock

    with mock.patch("studio.traffic.views.period", _old_period):
        return _page(profile, days)


def _old_period(profile: Any, days: int = 7, now: Any = None) -> Any:
    """`studio.traffic.turns.period` as it was before rollups (its counting, unchanged)."""
    from bisect import bisect_right
    from collections import Counter

    from django.db.models import Count
    from django.utils import timezone

    from studio.models import Event
    from studio.traffic.turns import BY_LABELS, Period, Share, _edges

    edges = _edges(days, now or timezone.now())
    start, end = edges[0], edges[-1]
    events = Event.objects.filter(profile=profile).order_by()
    current = events.filter(received__gte=start, received__lt=end)
    previous = events.filter(received__gte=start - (end - start), received__lt=start)
    total, total_before = current.count(), previous.count()

    def shares(column: str, labels: dict[str, str] | None = None) -> list[Share]:
        now_c, before_c = (
            {r[column]: r["n"] for r in q.values(column).annotate(n=Count("id")).order_by()}
            for q in (current, previous)
        )
        keys = sorted(set(now_c) | set(before_c), key=lambda k: -now_c.get(k, 0))
        return [Share((labels or {}).get(k, k or "no route"), now_c.get(k, 0),
                      before_c.get(k, 0), total, total_before) for k in keys[:12]]  # fmt: skip

    counts: Counter[int] = Counter()
    for received in current.values_list("received", flat=True).iterator(chunk_size=5000):
        counts[bisect_right(edges, received) - 1] += 1
    outcome = {"unmatched": "nothing matched", "menu": "a menu was offered"}
    return Period(days, start, end, total, total_before,
                  [(at, counts[i]) for i, at in enumerate(edges[:-1])],
                  [s for s in shares("verdict", outcome) if s.label in outcome.values()],
                  shares("by", BY_LABELS), shares("route"), shares("tier"),
                  shares("language"))  # fmt: skip


# -- a replay of long messages ----------------------------------------------------------------


def _replay(n: int, chars: int, before: bool) -> None:
    from django.db.models import Sum
    from django.db.models.functions import Length

    from routing_core import Router, load_pack
    from studio.models import Event, ReplayRun
    from studio.publishing.versions import publish

    profile = _profile("bench-replay")
    version = publish(profile, user=None)
    router = Router(load_pack(version.pack_json))
    _store_long(profile, router, n, chars)
    stored = Event.objects.filter(profile=profile).aggregate(n=Sum(Length("message")))["n"]
    print(f"replay: {n:,} stored turns of {chars:,} characters ({stored / 1e6:,.0f} MB of text)")
    warm = ReplayRun.objects.create(profile=profile, target=str(version.number), total=200)
    _new_replay(warm)  # the pack loaded and compiled once, as a worker that ran a job before
    run = ReplayRun.objects.create(profile=profile, target=str(version.number), total=n)
    _timed_replay("replay (paged report, changed turns as rows)", run, _new_replay)
    if before:
        _timed_replay("replay before (every change in memory, texts in the report)", run, _old)
    _load()


def _store_long(profile: Any, router: Any, n: int, chars: int) -> None:
    from django.utils import timezone

    from studio.models import Event

    rng, now = random.Random(5), timezone.now()
    words = "please help me with my order parcel refund invoice account card charge".split()
    texts = [" ".join(rng.choice(words) for _ in range(chars // 6))[:chars] for _ in range(50)]
    events = [router.route(t).to_event() for t in texts]
    rows = []
    for i in range(n):
        event = dict(events[i % 50])
        if i % 2:  # stored with another outcome: the replay changes it
            event["route"], event["verdict"] = "human", "move"
        rows.append(
            Event(profile=profile, received=now - timedelta(seconds=i), verdict="move",
                  by="scorer", route=str(event.get("route") or ""), message=texts[i % 50],
                  event=event)
        )  # fmt: skip
        if len(rows) == 2000:
            Event.objects.bulk_create(rows)
            rows = []
    Event.objects.bulk_create(rows)


def _timed_replay(label: str, run: Any, work: Any) -> None:
    """Run `work(run)` in a forked child, so that each replay starts from the same process
    state (caches warmed by a small replay first) and its peak RSS is its own."""
    from django.db import connections

    connections.close_all()  # the child opens its own connection
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        gc.collect()
        _reset_peak()
        base = _status_mb("VmRSS")
        started = time.perf_counter()
        fields = work(run)
        took = time.perf_counter() - started
        peak = _status_mb("VmHWM")
        size = len(json.dumps(fields["report"]).encode())
        run.report, run.status = fields["report"], "done"
        run.save()
        out = {"took": took, "base": base, "peak": peak, "size": size,
               "changed": fields["report"]["changed"]}  # fmt: skip
        with os.fdopen(write, "w") as pipe:
            pipe.write(json.dumps(out))
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        out = json.loads(pipe.read())
    os.waitpid(pid, 0)
    run.refresh_from_db()
    rows = run.changes.count()
    page = _client().get(f"/profiles/{run.profile.slug}/traffic/replays/{run.pk}/")
    assert page.status_code == 200
    print(f"{label}: {out['took']:,.1f} s, peak RSS +{out['peak'] - out['base']:,.0f} MB "
          f"(from {out['base']:,.0f} to {out['peak']:,.0f} MB), report "
          f"{out['size'] / 1e6:,.3f} MB stored, {rows:,} change rows, {out['changed']:,} changed, "
          f"page {len(page.content) / 1e6:,.3f} MB", flush=True)  # fmt: skip


def _reset_peak() -> None:
    """Start the process's peak RSS (VmHWM) over from its RSS now (Linux: clear_refs 5)."""
    Path("/proc/self/clear_refs").write_text("5")


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024  # kB
    return float("nan")


def _new_replay(run: Any) -> dict[str, Any]:
    from studio.traffic.replays import execute_replay

    return execute_replay(run, lambda done, total: None)


def _old(run: Any) -> dict[str, Any]:
    """The replay job as it was: every chunk's changes kept, 100 messages a group stored."""
    from routing_core import Router
    from routing_core.replay import replay_turns, summarise
    from studio.models import Event, ReplayChange
    from studio.traffic.replays import CHUNK, _target_pack

    ReplayChange.objects.filter(run=run).delete()
    router = Router(_target_pack(run))
    rows = (
        Event.objects.filter(profile_id=run.profile_id)
        .order_by("-received", "-pk")
        .values("message", "event")[: run.total]
    )
    parts, chunk = [], []
    for row in rows.iterator(chunk_size=CHUNK):
        chunk.append(row)
        if len(chunk) == CHUNK:
            parts.append(replay_turns(router, chunk))
            chunk = []
    parts.append(replay_turns(router, chunk))
    stored = summarise(parts).to_dict()
    for group in stored["groups"]:
        group["turns"] = group["turns"][:100]
    return {"done": run.total, "report": stored}


if __name__ == "__main__":
    sys.exit(main())
