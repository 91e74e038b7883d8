"""Pack pulls per second against gunicorn on loopback: plain, gzip, zstd and 304s.

Publishes a CLINC150-size pack (150 routes, 15,000 examples: `routing-core build` on the data
set's routes.json) into a scratch SQLite database (or, with --database-url, a PostgreSQL
database it drops and creates), starts gunicorn, and has CONCURRENCY clients pull
`/api/profiles/clinc/packs/production` for DURATION seconds each way. The default client is
Python (http.client, a connection per request as gunicorn's sync workers close them) on the
same cores as the server; `--wrk` uses Debian's `wrk` (C, one thread), which leaves the server
most of the CPU. Figures are "measured beside" whatever else the machine runs. `--serve` runs
gunicorn as `make serve` does (2 × cores + 1 workers, each recycled after ~10,000 requests,
forked from a preloaded master, logs at INFO, persistent database connections);
`--no-preload` as it ran before (no `--preload`, recycled after ~1,000), for before/after pairs.

Because the machine is shared, each row also gives the server's CPU per request: the CPU time
gunicorn's processes and (with PostgreSQL) the database's backends for the bench database used
during the row, divided by the requests answered. Unlike req/s, it hardly depends on how much
of the cores other work leaves the server.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_pulls.py [--data ../shared/datasets]
        [--concurrency 4] [--duration 10] [--workers 2] [--port 8102]
        [--database-url postgres://postgres@127.0.0.1:5432/bench_pulls] [--wrk] [--serve]
        [--no-preload]
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SETUP = """
from django.contrib.auth import get_user_model
from studio.importing.packs import import_pack
from studio.publishing.versions import promote, publish
from studio.shared.tokens import create_read_token
user = get_user_model().objects.create_user("bench", password="bench")
profile = import_pack(open({pack!r}, "rb").read(), user=user, slug="clinc")
version = publish(profile, user=user, note="bench")
promote(version, "production", user=user)
print(create_read_token(profile, "bench", user=user)[1])
print(version.checksum, len(version.pack_json))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--port", type=int, default=8102)
    parser.add_argument("--database-url", help="a PostgreSQL database to drop and create")
    parser.add_argument("--wrk", action="store_true", help="load with wrk instead of Python")
    parser.add_argument("--serve", action="store_true", help="gunicorn as `make serve` runs it")
    parser.add_argument("--only", help="rows to run, e.g. 'zstd,304' (default: all four)")
    parser.add_argument(
        "--no-preload", action="store_true", help="--serve as before: no --preload, 1,000"
    )
    args = parser.parse_args()
    if args.serve:
        args.workers = 2 * (os.cpu_count() or 1) + 1
    load = _wrk if args.wrk else _load
    with tempfile.TemporaryDirectory() as scratch:
        env = _env(Path(scratch), args.database_url, args.serve)
        token, checksum, size = _publish(Path(args.data) / "clinc150" / "routes.json", scratch, env)
        preload = args.serve and not args.no_preload
        max_requests = 1000 if args.no_preload else 10_000
        server = _gunicorn(args.port, args.workers, env, args.serve, preload, max_requests)
        try:
            print(f"pack: {size / 1e6:.2f} MB of JSON; load average {os.getloadavg()[0]:.2f}")
            print(
                f"concurrency {args.concurrency}, {args.duration:.0f} s each, {args.workers} workers"
                f", {'wrk' if args.wrk else 'Python'} client, {env['DATABASE_URL'].split(':')[0]}"
            )
            print("| request | req/s | p50 ms | p99 ms | bytes/response | server CPU µs/request |")
            print("|---|---|---|---|---|---|")
            for label, headers in (
                ("200, identity", {}),
                ("200, gzip", {"Accept-Encoding": "gzip"}),
                ("200, zstd", {"Accept-Encoding": "zstd, gzip"}),
                ("304 (If-None-Match)", {"If-None-Match": f'"{checksum}"'}),
            ):
                if args.only and not any(word in label for word in args.only.split(",")):
                    continue
                database = env["DATABASE_URL"].rpartition("/")[2]
                with ServerCpu(server.pid, database) as cpu:
                    rate, p50, p99, nbytes = load(
                        args.port, token, headers, args.concurrency, args.duration
                    )
                per_request = cpu.seconds / max(1.0, rate * args.duration) * 1e6
                print(
                    f"| {label} | {rate:,.0f} | {p50:.1f} | {p99:.1f} | {nbytes:,} "
                    f"| {per_request:,.0f} |"
                )
            print(f"load average after: {os.getloadavg()[0]:.2f}")
        finally:
            server.terminate()
            server.wait(timeout=30)


def _env(scratch: Path, database_url: str | None, serve: bool) -> dict[str, str]:
    if database_url:
        _fresh_database(database_url)
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": database_url or f"sqlite:///{scratch / 'bench.sqlite3'}",
        "DEBUG": "False",
        "SECRET_KEY": "bench-" + "x" * 50,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "False",
        "SECURE_COOKIES": "False",
        "LOG_LEVEL": "INFO" if serve else "WARNING",
        # `make serve` keeps each worker's connection (DB_CONN_MAX_AGE=600 unless set).
        "DB_CONN_MAX_AGE": os.environ.get("DB_CONN_MAX_AGE", "600" if serve else "0"),
        "STUDIO_RATE_PACK_PULL": "100000000/m",
        "STUDIO_MAX_IMPORT_BYTES": str(64 * 1024 * 1024),
    }


def _publish(routes: Path, scratch: str, env: dict[str, str]) -> tuple[str, str, int]:
    pack = Path(scratch) / "clinc.json"
    python = sys.executable
    build = [python, "-m", "routing_core.cli", "build", str(routes), "--slug", "clinc"]
    subprocess.run([*build, "-o", str(pack)], check=True, env=env, cwd=ROOT)
    subprocess.run([python, "manage.py", "migrate", "-v", "0"], check=True, env=env, cwd=ROOT)
    out = subprocess.run(
        [python, "manage.py", "shell", "-v", "0", "-c", SETUP.format(pack=str(pack))],
        check=True,
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.split()
    return out[0], out[1], int(out[2])


def _fresh_database(url: str) -> None:
    import psycopg

    base, _, name = url.rpartition("/")
    if not re.fullmatch(r"[a-z0-9_]+", name):
        raise SystemExit(f"use a plain database name, not {name!r}")
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")


def _gunicorn(
    port: int, workers: int, env: dict[str, str], serve: bool, preload: bool, max_requests: int
) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "gunicorn", "studio.shared.wsgi", "--workers", str(workers)]
    command += ["--bind", f"127.0.0.1:{port}", "--timeout", "30"]
    if serve:
        command += [
            "--max-requests",
            str(max_requests),
            "--max-requests-jitter",
            str(max_requests // 10),
        ]
    if preload:
        command.append("--preload")
    server = subprocess.Popen(command, env=env, cwd=ROOT, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return server
        except OSError:
            time.sleep(0.2)
    server.terminate()
    raise SystemExit("gunicorn did not start")


class ServerCpu:
    """CPU seconds the server used meanwhile: gunicorn's master, its workers, and the
    PostgreSQL backends connected to the bench database.

    Workers are recycled every ~1,000 requests and their backends end with them, so the
    processes are sampled every 0.2 s: each one counts from its first reading (0 for one born
    meanwhile, so a new worker's start-up counts) to its last.
    """

    def __init__(self, master: int, database: str) -> None:
        self.master, self.database = master, database
        self._first: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self.seconds = 0.0

    def __enter__(self) -> ServerCpu:
        self._first = self._read()
        self._last = dict(self._first)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._last.update(self._read())
        self.seconds = sum(v - self._first.get(p, 0.0) for p, v in self._last.items())

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            self._last.update(self._read())

    def _read(self) -> dict[int, float]:
        found: dict[int, float] = {}
        tick = os.sysconf("SC_CLK_TCK")
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue  # (this process names the database on its command line)
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                pid, parent = int(entry.name), int(stat[1])
                mine = pid == self.master or parent == self.master
                if mine or self.database.encode() in (entry / "cmdline").read_bytes():
                    found[pid] = (int(stat[11]) + int(stat[12])) / tick
            except (OSError, ValueError, IndexError):
                continue
        return found


def _load(
    port: int, token: str, headers: dict[str, str], concurrency: int, duration: float
) -> tuple[float, float, float, int]:
    latencies: list[float] = []
    sizes: list[int] = []
    errors: list[str] = []
    stop = time.monotonic() + duration
    path = "/api/profiles/clinc/packs/production"
    sent = {"Authorization": f"Bearer {token}", **headers}

    def client() -> None:
        while time.monotonic() < stop:
            t0 = time.perf_counter()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", path, headers=sent)
            response = conn.getresponse()
            body = response.read()
            conn.close()
            latencies.append(time.perf_counter() - t0)
            sizes.append(len(body))
            if response.status not in (200, 304):
                errors.append(str(response.status))

    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    if errors:
        raise SystemExit(f"unexpected statuses: {sorted(set(errors))}")
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return (
        len(latencies) / elapsed,
        statistics.median(ordered) * 1000,
        p99 * 1000,
        int(statistics.median(sizes)),
    )


def _wrk(
    port: int, token: str, headers: dict[str, str], concurrency: int, duration: float
) -> tuple[float, float, float, int]:
    """The same load from `wrk` (one thread, `concurrency` connections): a C client that takes
    little of the cores the server shares with it."""
    wrk = shutil.which("wrk")
    if wrk is None:
        raise SystemExit("wrk is not installed (apt-get install -y wrk)")
    command = [
        wrk,
        "-t1",
        f"-c{concurrency}",
        f"-d{duration:.0f}s",
        "--latency",
        "--timeout",
        "30s",
    ]
    for name, value in {"Authorization": f"Bearer {token}", **headers}.items():
        command += ["-H", f"{name}: {value}"]
    command.append(f"http://127.0.0.1:{port}/api/profiles/clinc/packs/production")
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    if "Non-2xx or 3xx" in out or "Socket errors" in out:
        raise SystemExit(f"wrk saw errors:\n{out}")
    done = re.search(r"(\d+) requests in ([\d.]+)(m?s), ([\d.]+)([KMG]?B) read", out)
    assert done is not None, out
    seconds = float(done.group(2)) * (0.001 if done.group(3) == "ms" else 1.0)
    scale = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}[done.group(5)]
    count = int(done.group(1))
    return (
        count / seconds,
        _wrk_ms(out, "50%"),
        _wrk_ms(out, "99%"),
        int(float(done.group(4)) * scale / max(1, count)),
    )


def _wrk_ms(out: str, percentile: str) -> float:
    found = re.search(rf"{percentile}\s+([\d.]+)(us|ms|s)", out)
    assert found is not None, out
    return float(found.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[found.group(2)]


if __name__ == "__main__":
    main()
