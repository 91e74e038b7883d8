"""The route server against the library: throughput, p99, equality, swaps, the TS client's overhead.

Builds a pack from CLINC150 (`../shared/datasets/clinc150`, read at run time, never committed)
into a scratch folder, then measures, each figure in this one run and printed beside the load
average (the machine is shared: compare the ratios, not the absolute numbers):

1. throughput at concurrency C (8): C processes calling `route()` in process, against the
   server (`--workers`, default the number of cores) driven by C keep-alive connections from a
   load generator (wrk with bench/wrk_route.lua where installed, `apt install wrk`; else a
   process of asyncio on uvloop, raw HTTP/1.1), with p50 / p99 latency and the
   server's CPU time per request; for each server stack compared (`--stacks`: `serve`, what
   `routing-core serve` runs, uvicorn with httptools under its supervisor; `granian`, the same
   app under granian's ASGI interface; `uvicorn`, the app under uvicorn's own httptools
   protocol, which writes an answer's head and body in two calls where `serve` joins them;
   `uvicorn-h11`, uvicorn with its pure-Python parser).
   With `--windows N`, in alternating windows (in process, then each stack, N times, every
   process started once), each ratio taken against the in-process window just before it:
   on a machine whose speed drifts (a shared host) this compares like with like;
2. equality with the library on CLINC150 test (5,500 messages, through `/v1/route/batch`):
   route, verdict and every route's score and relevance to 1e-6;
3. pack swap under load: two packs (CLINC150 and the conformance suite's synthetic150) swapped
   in N times (20) while C threads route; an answer that failed, or whose ranking is not the
   one the library gives on the pack its checksum names, is counted;
4. the TypeScript client's overhead over raw `fetch` (bench/ts_overhead.mjs; needs node and
   `clients/typescript/dist`, built by `make test-typescript`).

    PYTHONPATH=$PWD .venv/bin/python bench/bench_server.py [--data ../shared/datasets]
        [--concurrency 8] [--duration 10] [--workers 2] [--swaps 20] [--stacks serve,granian]
        [--windows 7 --duration 5]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from routing_core import Router, build_pack, dump_pack, load_pack  # noqa: E402
from routing_core.server import ENV_CONFIG, ServeConfig  # noqa: E402
from tests.server.serving import free_port, replace_file, wait_until  # noqa: E402

STACKS = ("serve", "uvicorn", "granian", "uvicorn-h11")


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def say(text: str) -> None:
    print(f"{text}   [{load()}, measured beside other work]", flush=True)


def build_clinc(data: Path, folder: Path) -> tuple[Path, list[str]]:
    """The CLINC150 pack (routes + out-of-scope train rows) and the test messages."""
    clinc = data / "clinc150"
    routes = json.loads((clinc / "routes.json").read_text())
    train = [json.loads(line) for line in (clinc / "train.jsonl").read_text().splitlines() if line]
    oos = [row["text"] for row in train if row["expected"] is None]
    started = time.perf_counter()
    pack = build_pack(routes, slug="clinc150", out_of_scope=oos)
    path = folder / "clinc150.json"
    path.write_text(dump_pack(pack))
    print(
        f"built the CLINC150 pack in {time.perf_counter() - started:.1f} s ({path.stat().st_size:,} bytes)"
    )
    test = [
        json.loads(line)["text"] for line in (clinc / "test.jsonl").read_text().splitlines() if line
    ]
    return path, test


# --- in process -------------------------------------------------------------------------


def _route_windows(
    pack_path: str, messages: list[str], start: Any, duration: float, windows: int, out: Any
) -> None:
    router = Router(load_pack(Path(pack_path).read_bytes()))
    for message in messages[:50]:
        router.route(message)  # warm
    i = 0
    for _ in range(windows):
        try:
            start.wait()
        except threading.BrokenBarrierError:  # the bench stopped early (`close`)
            return
        count, deadline = 0, time.perf_counter() + duration
        cpu = time.process_time()
        while time.perf_counter() < deadline:
            router.route(messages[i % len(messages)])
            i += 1
            count += 1
        out.put((count, time.process_time() - cpu))


class InProcessPool:
    """`processes` processes that load the pack once and then call route() for `duration`
    seconds each time `window()` is called (`windows` times in all)."""

    def __init__(
        self, pack_path: Path, messages: list[str], processes: int, duration: float, windows: int
    ) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.start, self.out, self.duration = ctx.Barrier(processes + 1), ctx.Queue(), duration
        self.workers = [
            ctx.Process(
                target=_route_windows,
                args=(str(pack_path), messages, self.start, duration, windows, self.out),
            )
            for _ in range(processes)
        ]
        for w in self.workers:
            w.start()

    def window(self) -> tuple[float, float]:
        """Turns per second in one window, and the CPU time per turn (µs)."""
        self.start.wait()
        results = [self.out.get() for _ in self.workers]
        total = sum(n for n, _ in results)
        return total / self.duration, sum(c for _, c in results) / total * 1e6

    def close(self) -> None:
        """Stop the workers, also those still waiting for a window the bench will not run
        (it failed part way): the barrier is broken so that they return instead of waiting."""
        self.start.abort()
        for w in self.workers:
            w.join(30)
            if w.is_alive():
                w.terminate()
                w.join()


def in_process(
    pack_path: Path, messages: list[str], processes: int, duration: float
) -> tuple[float, float]:
    """Turns per second of `processes` processes each calling route() for `duration` seconds,
    and their CPU time per turn (µs): one window of a pool started for it."""
    pool = InProcessPool(pack_path, messages, processes, duration, 1)
    try:
        return pool.window()
    finally:
        pool.close()


# --- servers ----------------------------------------------------------------------------


class Running:
    def __init__(self, process: subprocess.Popen[bytes], url: str, log: Path) -> None:
        self.process, self.url, self.log = process, url, log

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start(stack: str, pack_path: Path, workers: int, folder: Path) -> Running:
    """`routing-core serve`, or the same app under another stack."""
    port = free_port()
    env = {**os.environ}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    metrics = folder / f"metrics-{port}"
    metrics.mkdir()
    if stack == "serve":  # what an operator runs
        command = [sys.executable, "-m", "routing_core.cli", "serve", "--pack", str(pack_path)]
        command += ["--port", str(port), "--workers", str(workers), "--log-level", "warning"]
    elif stack == "granian":  # the same app under granian's ASGI interface
        env[ENV_CONFIG] = ServeConfig(pack_file=str(pack_path)).to_env()
        if workers > 1:
            env["PROMETHEUS_MULTIPROC_DIR"] = str(metrics)
        command = [sys.executable, "-m", "granian", "--interface", "asgi", "--factory", "--no-ws"]
        command += f"--port {port} --workers {workers} --log-level warning".split()
        command.append("routing_core.server.app:create_app")
    else:  # the same app under uvicorn's own httptools protocol, or its pure-Python parser
        env[ENV_CONFIG] = ServeConfig(pack_file=str(pack_path)).to_env()
        if workers > 1:
            env["PROMETHEUS_MULTIPROC_DIR"] = str(metrics)
        http = "h11" if stack == "uvicorn-h11" else "httptools"
        command = [sys.executable, "-m", "uvicorn", "--http", http, "--no-access-log", "--factory"]
        command += f"--port {port} --workers {workers} --log-level warning --loop uvloop".split()
        command.append("routing_core.server.app:create_app")
    log = folder / f"{stack}-{port}.log"
    with open(log, "wb") as handle:
        process = subprocess.Popen(
            command, stdout=handle, stderr=subprocess.STDOUT, env=env, cwd=ROOT
        )
    server = Running(process, f"http://127.0.0.1:{port}", log)

    def ready() -> bool:
        assert process.poll() is None, log.read_text()
        try:
            with urllib.request.urlopen(server.url + "/readyz", timeout=2) as answer:
                return bool(answer.status == 200)
        except OSError:
            return False

    wait_until(ready, f"{stack} to be ready", timeout=120)
    return server


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of `pid` and every process under it, from /proc."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    tree, grew = {pid}, True
    while grew:
        grew = False
        for child, parent in parents.items():
            if parent in tree and child not in tree:
                tree.add(child)
                grew = True
    return sum(times.get(p, 0.0) for p in tree)


# --- load -------------------------------------------------------------------------------


async def _client(
    port: int, bodies: list[bytes], deadline: float, latencies: list[float], offset: int
) -> int:
    import uvloop  # noqa: F401 - the loop policy is set by the caller

    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    done, i = 0, offset
    while time.perf_counter() < deadline:
        body = bodies[i % len(bodies)]
        i += 1
        head = (
            f"POST /v1/route HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        began = time.perf_counter()
        writer.write(head + body)
        headers = await reader.readuntil(b"\r\n\r\n")
        status = int(headers[9:12])
        length = 0
        for line in headers.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        await reader.readexactly(length)
        latencies.append(time.perf_counter() - began)
        if status != 200:
            raise RuntimeError(f"HTTP {status}")
        done += 1
    writer.close()
    return done


def _body(message: str, top: int | None) -> str:
    """A request's JSON: the message, and `top` when the ranking is to list only the best."""
    return json.dumps({"message": message} if top is None else {"message": message, "top": top})


def _generate(
    port: int, messages: list[str], concurrency: int, duration: float, out: Any, top: int | None
) -> None:
    import uvloop

    bodies = [_body(m, top).encode() for m in messages]
    latencies: list[float] = []

    async def run() -> int:
        deadline = time.perf_counter() + duration
        counts = await asyncio.gather(
            *(_client(port, bodies, deadline, latencies, k * 97) for k in range(concurrency))
        )
        return sum(counts)

    total = uvloop.run(run())
    out.put((total, latencies))


# The load generator: wrk (C, Debian's package) where installed, else the asyncio one above.
# Both share the two cores with the server; the asyncio generator spent 94 µs of CPU a request
# and wrk 53 (measured beside other work, 3 Dec), CPU the server's figure should not pay for.
WRK_SCRIPT = ROOT / "bench" / "wrk_route.lua"
LOAD = {"generator": "wrk" if shutil.which("wrk") else "python"}


def drive(
    server: Running, messages: list[str], concurrency: int, duration: float, top: int | None = None
) -> tuple[float, float, float, float]:
    """Requests per second, p50 and p99 latency (ms) of `concurrency` connections for
    `duration`, and the server's CPU time per request (µs); `top`: the requests ask the
    ranking to list only that many routes."""
    if LOAD["generator"] == "wrk":
        return _drive_wrk(server, messages, concurrency, duration, top)
    url = server.url
    port = int(url.rsplit(":", 1)[1])
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    warm = ctx.Process(target=_generate, args=(port, messages, concurrency, 1.0, out, top))
    warm.start()
    out.get()
    warm.join()
    process = ctx.Process(target=_generate, args=(port, messages, concurrency, duration, out, top))
    cpu = tree_cpu(server.process.pid)
    process.start()
    total, latencies = out.get()
    cpu = tree_cpu(server.process.pid) - cpu
    process.join()
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1000
    p99 = latencies[int(len(latencies) * 0.99)] * 1000
    return total / duration, p50, p99, cpu / total * 1e6


def _drive_wrk(
    server: Running, messages: list[str], concurrency: int, duration: float, top: int | None
) -> tuple[float, float, float, float]:
    """`drive` with wrk: `concurrency` connections on two threads, the bodies from a file."""
    bodies = Path(server.log).with_suffix(".bodies" if top is None else f".top{top}.bodies")
    if not bodies.exists():
        bodies.write_text("".join(_body(m, top) + "\n" for m in messages))

    def run(seconds: float) -> dict[str, Any]:
        command = ["wrk", "-t2", f"-c{concurrency}", f"-d{max(1, round(seconds))}s"]
        command += ["-s", str(WRK_SCRIPT), server.url, "--", str(bodies)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        if figures["failed"]:
            raise RuntimeError(f"{figures['failed']} requests failed: {done.stdout}")
        return figures

    run(1.0)  # warm-up, not counted
    cpu = tree_cpu(server.process.pid)
    figures = run(duration)
    cpu = tree_cpu(server.process.pid) - cpu
    total = figures["requests"]
    rate = total / figures["seconds"]
    return rate, figures["p50_us"] / 1000, figures["p99_us"] / 1000, cpu / total * 1e6


# --- equality and swaps -----------------------------------------------------------------


def _post(conn: http.client.HTTPConnection, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    answer = conn.getresponse()
    return answer.status, json.loads(answer.read())


def equality(url: str, pack_path: Path, messages: list[str]) -> tuple[int, int]:
    """(cases, differing) over `messages` through the batch endpoint against the library."""
    router = Router(load_pack(pack_path.read_bytes()))
    conn = http.client.HTTPConnection(url.removeprefix("http://"), timeout=120)
    differing = 0
    for i in range(0, len(messages), 256):
        chunk = messages[i : i + 256]
        turns = [{"message": m} for m in chunk]
        status, answer = _post(conn, "/v1/route/batch", {"turns": turns, "exact": True})
        assert status == 200, answer
        for message, got in zip(chunk, answer["decisions"], strict=True):
            want = router.route(message)
            same = (got["route"], got["verdict"]) == (want.route, want.verdict) and all(
                g["route"] == w.route
                and abs(g["score"] - w.score) <= 1e-6
                and abs(g["relevance"] - w.relevance) <= 1e-6
                for g, w in zip(got["exact"]["ranked"], want.ranked, strict=True)
            )
            differing += not same
    return len(messages), differing


def swaps(
    url: str, live: Path, packs: list[Path], messages: list[str], count: int, concurrency: int
) -> dict[str, int]:
    """Swap `packs` into `live` `count` times while `concurrency` threads route; what went wrong."""
    expected: dict[str, list[list[str]]] = {}
    for path in packs:
        router = Router(load_pack(path.read_bytes()))
        expected[router.pack.checksum] = [
            [r.route for r in router.route(m).ranked[:5]] for m in messages
        ]
    tally = {"answers": 0, "failed": 0, "mixed": 0}
    lock = threading.Lock()
    stop = threading.Event()

    def hammer(k: int) -> None:
        conn = http.client.HTTPConnection(url.removeprefix("http://"), timeout=60)
        i = k
        while not stop.is_set():
            i += 1
            try:
                status, body = _post(conn, "/v1/route", {"message": messages[i % len(messages)]})
            except (OSError, http.client.HTTPException):
                status, body = 0, None
                conn = http.client.HTTPConnection(url.removeprefix("http://"), timeout=60)
            with lock:
                tally["answers"] += 1
                if status != 200:
                    tally["failed"] += 1
                elif [r["route"] for r in body["ranked"][:5]] != expected[body["pack"]["checksum"]][
                    i % len(messages)
                ]:
                    tally["mixed"] += 1

    threads = [threading.Thread(target=hammer, args=(k,)) for k in range(concurrency)]
    for t in threads:
        t.start()
    conn = http.client.HTTPConnection(url.removeprefix("http://"), timeout=60)
    checksums = list(expected)
    try:
        for n in range(count):
            target = n % len(packs)
            replace_file(live, packs[target].read_bytes())

            def swapped(t: int = target) -> bool:
                conn.request("GET", "/readyz")
                return bool(json.loads(conn.getresponse().read())["checksum"] == checksums[t])

            wait_until(swapped, f"swap {n + 1}", timeout=120)
    finally:
        stop.set()
        for t in threads:
            t.join()
    return tally


def ts_overhead(url: str, requests: int) -> str:
    script = ROOT / "bench" / "ts_overhead.mjs"
    if (
        not shutil.which("node")
        or not (ROOT / "clients" / "typescript" / "dist" / "index.js").exists()
    ):
        return "skipped: needs node and clients/typescript/dist (make test-typescript builds it)"
    done = subprocess.run(
        ["node", str(script), url, str(requests)], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def alternate(args: argparse.Namespace, pack_path: Path, test: list[str]) -> None:
    """Throughput in alternating windows: in process, then each stack, `args.windows` times;
    each window's ratio against the in-process window just before it, and their median."""
    stacks = args.stacks.split(",")
    pool = InProcessPool(pack_path, test, args.concurrency, args.duration, args.windows)
    folder = Path(tempfile.mkdtemp(prefix="bench-server-windows-"))
    servers = {stack: start(stack, pack_path, args.workers, folder) for stack in stacks}
    # Each stack with whole answers; with --top, the first stack again with short rankings.
    runs = [(stack, stack, None) for stack in stacks]
    if args.top:
        runs.append((f"{stacks[0]}, top {args.top}", stacks[0], args.top))
    ratios: dict[str, list[float]] = {label: [] for label, _, _ in runs}
    p99s: dict[str, list[float]] = {label: [] for label, _, _ in runs}
    try:
        for _, stack, top in runs:  # one warm-up run each, not counted
            drive(servers[stack], test, args.concurrency, 1.0, top)
        for window in range(args.windows):
            base, base_cpu = pool.window()
            say(
                f"window {window + 1}: in process {base:,.0f} turns/s, {base_cpu:,.0f} µs CPU a turn"
            )
            for label, stack, top in runs:
                server = servers[stack]
                rate, p50, p99, cpu = drive(server, test, args.concurrency, args.duration, top)
                ratios[label].append(rate / base)
                p99s[label].append(p99)
                say(
                    f"window {window + 1}: {label} {rate:,.0f} req/s ({rate / base:.0%} of in "
                    f"process), p50 {p50:.2f} ms, p99 {p99:.2f} ms, {cpu:,.0f} µs server CPU a request"
                )
    finally:
        for server in servers.values():
            server.stop()
        pool.close()
        shutil.rmtree(folder, ignore_errors=True)
    for label, _, _ in runs:
        got = sorted(ratios[label])
        say(
            f"{label}, {args.workers} workers, {args.concurrency} connections, {args.windows} "
            f"alternating windows of {args.duration:g} s: median {got[len(got) // 2]:.0%} of in "
            f"process (range {got[0]:.0%}-{got[-1]:.0%}), p99 {min(p99s[label]):.2f}-"
            f"{max(p99s[label]):.2f} ms"
        )
    first = stacks[0]
    for label, _, _ in runs[1:]:  # each other run against the first, window by window
        paired = sorted(a / b for a, b in zip(ratios[first], ratios[label], strict=True))
        ahead = sum(p > 1 for p in paired)
        say(
            f"{first} against {label}: more requests in {ahead} of {len(paired)} windows, "
            f"median {paired[len(paired) // 2] - 1:+.0%} (range {paired[0] - 1:+.0%} to "
            f"{paired[-1] - 1:+.0%})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--swaps", type=int, default=20)
    parser.add_argument("--stacks", default=",".join(STACKS))
    parser.add_argument("--ts-requests", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=1, help="repeat the throughput rows")
    parser.add_argument(
        "--windows",
        type=int,
        default=0,
        help="measure throughput in this many alternating windows of --duration seconds "
        "(in process, then each stack), every process started once; the ratio is taken per "
        "pair of neighbouring windows, so that a machine whose speed drifts compares like "
        "with like (instead of --rounds)",
    )
    parser.add_argument(
        "--generator",
        choices=("wrk", "python"),
        default=LOAD["generator"],
        help="the load generator (default: wrk when installed)",
    )
    parser.add_argument(
        "--top",
        type=int,
        default=0,
        help="with --windows, also drive the first stack with requests whose answers list only "
        "this many routes (`top`): what an agent that reads the decision asks for",
    )
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--only-throughput", action="store_true")
    args = parser.parse_args()
    LOAD["generator"] = args.generator
    print(f"load generator: {args.generator}")
    folder = Path(tempfile.mkdtemp(prefix="bench-server-"))
    try:
        pack_path, test = build_clinc(Path(args.data), folder)
        if args.windows and not args.skip_throughput:
            alternate(args, pack_path, test)
        for _ in range(0 if args.skip_throughput or args.windows else args.rounds):
            base, base_cpu = in_process(pack_path, test, args.concurrency, args.duration)
            say(
                f"in process: {args.concurrency} processes calling route(): {base:,.0f} turns/s, "
                f"{base_cpu:,.0f} µs CPU a turn"
            )
            for stack in args.stacks.split(","):
                server = start(stack, pack_path, args.workers, folder)
                try:
                    rate, p50, p99, cpu = drive(server, test, args.concurrency, args.duration)
                finally:
                    server.stop()
                say(
                    f"{stack}, {args.workers} workers, {args.concurrency} connections: {rate:,.0f} req/s "
                    f"({rate / base:.0%} of in process), p50 {p50:.2f} ms, p99 {p99:.2f} ms, "
                    f"{cpu:,.0f} µs server CPU a request ({base_cpu / cpu:.0%} of in process's efficiency)"
                )
        if args.only_throughput:
            return
        live = folder / "live.json"
        shutil.copy(pack_path, live)
        server = start("serve", live, args.workers, folder)
        try:
            cases, differing = equality(server.url, pack_path, test)
            say(
                f"equality on CLINC150 test: {cases - differing:,} of {cases:,} equal to the library (route, verdict, scores to 1e-6)"
            )
            other = ROOT / "conformance" / "packs" / "synthetic150.json"
            tally = swaps(
                server.url, live, [other, pack_path], test[:500], args.swaps, args.concurrency
            )
            say(
                f"{args.swaps} swaps under load ({args.concurrency} threads): {tally['answers']:,} answers, "
                f"{tally['failed']} failed, {tally['mixed']} mixed"
            )
            say(f"TypeScript client: {ts_overhead(server.url, args.ts_requests)}")
        finally:
            server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
