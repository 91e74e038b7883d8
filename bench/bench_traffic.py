"""Figures for the traffic loop: events ingested per second, replay turns per second, 100M cost.

Usage: .venv/bin/python bench/bench_traffic.py [--turns 50000] [--data ../shared/datasets/clinc150]
       [--price 0.04]   # dollars per vCPU-hour for the projection

- Ingest: the POSTs an EventReporter sends (100 events, split under 1 MB) through the studio's whole URL stack (Django test client:
  token auth, validation, redaction, one bulk insert) into a throwaway SQLite file, or the
  database in DATABASE_URL.
- Replay: CLINC150's test messages routed on a pack built from its routes, logged as events,
  then replayed on a candidate (the same pack with one new rule) in process, and on a local Dask
  cluster of 1 and 2 worker processes (cluster start-up timed apart from the replay).
Prints figures; asserts nothing. Numbers are "measured beside other work": see `uptime`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets" / "clinc150"))
    parser.add_argument("--turns", type=int, default=50_000)
    parser.add_argument("--ingest", type=int, default=20_000, help="events to ingest")
    parser.add_argument("--price", type=float, default=0.04, help="$ per vCPU-hour")
    parser.add_argument("--replay-figures", help="JSON of an earlier run's replay figures")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        pack, candidate, records = _events(Path(args.data), args.turns)
        files = _write(records, Path(tmp), parts=4)
        if args.replay_figures:
            replay = json.loads(args.replay_figures)
        else:
            replay = _replay(candidate, files, len(records))
        print("replay figures:", json.dumps(replay))
        ingest = _ingest(pack, records[: args.ingest], Path(tmp))
    _project(replay, ingest, args.price, records)
    print(f"load average after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    return 0


def _events(data: Path, turns: int) -> tuple[str, str, list[dict]]:
    from routing_core import Router, build_pack_file, dump_pack, load_pack

    built = build_pack_file(data / "routes.json", slug="clinc150", name="CLINC150")
    doc = json.loads(dump_pack(built))
    doc["rules"] = [{"route": doc["routes"][0]["name"], "match": {"keywords": ["card"]}}]
    doc.pop("checksum", None)
    candidate = dump_pack(load_pack(doc))
    router = Router(built)
    texts = [json.loads(line)["text"] for line in (data / "test.jsonl").open(encoding="utf-8")]
    records = []
    for i in range(turns):
        text = texts[i % len(texts)]
        event = router.route(text).to_event()
        records.append(
            {"conversation": f"c{i // 3}", "turn": i % 3, "message": text, "event": event}
        )
    return dump_pack(built), candidate, records


def _write(records: list[dict], tmp: Path, parts: int) -> list[str]:
    size = -(-len(records) // parts)
    paths = []
    for n in range(parts):
        path = tmp / f"events-{n}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records[n * size : (n + 1) * size]))
        paths.append(str(path))
    return paths


def _replay(candidate: str, files: list[str], n: int) -> dict[str, float]:
    from distributed import Client, LocalCluster

    from routing_core.replay_engines import run_dask, run_local

    figures: dict[str, float] = {}
    started = time.perf_counter()
    local = run_local(candidate, files)
    figures["local_s"] = time.perf_counter() - started
    print(f"replay in process: {n} turns in {figures['local_s']:.2f} s = "
          f"{n / figures['local_s']:,.0f} turns/s ({local.changed} change)")  # fmt: skip
    for workers in (1, 2):
        started = time.perf_counter()
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster):  # fmt: skip
            up = time.perf_counter() - started
            started = time.perf_counter()
            report = run_dask(candidate, files, scheduler=cluster.scheduler_address)
            took = time.perf_counter() - started
        assert report.to_dict() == local.to_dict(), "the cluster disagrees with the process"
        figures[f"dask{workers}_s"] = took
        print(f"replay on Dask, {workers} worker process{'es' if workers > 1 else ''}: "
              f"{n / took:,.0f} turns/s ({took:.2f} s; cluster start {up:.1f} s; same flips)")  # fmt: skip
    figures["n"] = n
    return figures


def _ingest(pack: str, records: list[dict], tmp: Path) -> dict[str, float]:
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")
    os.environ.setdefault("STUDIO_RATE_EVENTS", "100000/m")
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from studio.importing.packs import import_pack
    from studio.models import Event, TokenScope
    from studio.shared.tokens import create_read_token

    call_command("migrate", verbosity=0)
    profile = import_pack(pack, user=None, slug=f"bench-{os.getpid()}")
    _, secret = create_read_token(profile, "bench", user=None, scope=TokenScope.EVENTS)
    client, url = Client(), f"/api/profiles/{profile.slug}/events"
    # The bodies EventReporter would send: 100 records a batch, split under its body limit.
    from routing_core.reporting import _bodies

    bodies = [b for i in range(0, len(records), 100) for b, _ in _bodies(records[i : i + 100])]
    started = time.perf_counter()
    for body in bodies:
        response = client.post(url, body, content_type="application/json",
                               HTTP_AUTHORIZATION=f"Bearer {secret}")  # fmt: skip
        assert response.status_code == 202, response.content[:300]
    took = time.perf_counter() - started
    stored = Event.objects.filter(profile=profile).count()
    engine = django.db.connection.vendor
    print(f"ingest ({engine}): {stored} events in {took:.2f} s = {stored / took:,.0f} events/s "
          f"({len(bodies)} POSTs through the API)")  # fmt: skip
    _pulls(profile)
    return {"rate": stored / took, "bytes": sum(len(b) for b in bodies) / max(stored, 1)}


def _pulls(profile: object, n: int = 500) -> None:
    """What recording the agent adds to a 304 pull: the upsert timed alone, and whole 304s."""
    from django.test import Client

    from studio.agents.fleet import forget_writes, record_pull
    from studio.publishing.versions import promote, publish
    from studio.shared.tokens import create_read_token

    promote(publish(profile, user=None), "production", user=None)
    token, secret = create_read_token(profile, "bench-pull", user=None)
    client, url = Client(), f"/api/profiles/{profile.slug}/packs/production"  # type: ignore[attr-defined]
    auth = {
        "HTTP_AUTHORIZATION": f"Bearer {secret}",
        "HTTP_USER_AGENT": "routing-core/0.1.0 python/3.12",
    }
    etag = client.get(url, **auth)["ETag"]
    started = time.perf_counter()
    for _ in range(n):
        assert client.get(url, HTTP_IF_NONE_MATCH=etag, **auth).status_code == 304
    whole = (time.perf_counter() - started) / n
    started = time.perf_counter()
    for _ in range(n):
        forget_writes()
        record_pull(token, "production", "routing-core/0.1.0 python/3.12", 1)
    upsert = (time.perf_counter() - started) / n
    print(f"a 304 pull takes {whole * 1e3:.2f} ms through the API (the agent row written at most "
          f"once a minute); one upsert, when due, {upsert * 1e3:.2f} ms")  # fmt: skip


def _project(
    replay: dict[str, float], ingest: dict[str, float], price: float, records: list[dict]
) -> None:
    per_core = replay["n"] / replay["dask1_s"]
    core_hours = 1e8 / per_core / 3600
    print(f"100 million turns: replay {core_hours:,.1f} vCPU-hours at {per_core:,.0f} turns/s per "
          f"worker = ${core_hours * price:,.2f} at ${price}/vCPU-hour; "
          f"e.g. 32 workers: {core_hours / 32 * 60:,.0f} min")  # fmt: skip
    gb = ingest["bytes"] * 1e8 / 1e9
    print(f"100 million turns: ingest {1e8 / ingest['rate'] / 3600:,.1f} h on one studio process; "
          f"~{gb:,.0f} GB of event JSON as sent ({ingest['bytes']:,.0f} bytes a turn)")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
