"""Instructions per route() turn (callgrind): a CPU cost that does not move with the load.

Usage: .venv/bin/python bench/bench_turn_instructions.py --pack-file PACK [--data DIR]
       [--tree DIR] [--modes first mid server] [--warm]

Routes CLINC150 test messages 300-600 with the pack, counting instructions only around that
loop (`valgrind --tool=callgrind --instr-atstart=no`, switched on and off by a two-function
C helper compiled here), after a warm-up that routed messages 0-300 and met every route as
an incumbent once; `PYTHONHASHSEED=0`, `OPENBLAS_NUM_THREADS=1`. `first`: each message as a
first turn; `mid`: mid-conversation, the incumbent drawn per message by `random.Random(i)`,
the pack's policy; `server`: `POST /v1/route` through the route server's ASGI app called in
process (the app's Python path; the HTTP server's own work is not counted). `--warm`: the
counted messages routed once before, so every word has been seen, as in a server's steady
state; without it the counted messages bring words the warm-up did not (CLINC150's test
split is ordered by intent), whose first reading costs more. Prints instructions per turn
(or request) and the differences. `--tree`: route with the routing_core of another checkout
(to compare two versions with the same script). The method of docs/lab/benchmarks.md, "A
cheaper turn". Needs valgrind with its headers and a C compiler; takes about half a minute
per mode.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_HELPER = """
#include <valgrind/callgrind.h>
void turn_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void turn_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS_AT("turns"); }
"""
FIRST, LAST = 300, 600


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pack-file", required=True, help="a pack written by routing-core build")
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--tree", default=str(ROOT), help="the checkout whose routing_core runs")
    parser.add_argument(
        "--modes", nargs="+", choices=("first", "mid", "server"), default=["first", "mid"]
    )
    parser.add_argument(
        "--warm",
        action="store_true",
        help="route the counted messages once before counting them (every word seen)",
    )
    parser.add_argument("--inner", help=argparse.SUPPRESS)  # the run under valgrind
    parser.add_argument("--helper", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        _route_under_valgrind(args)
        return
    with tempfile.TemporaryDirectory() as work:
        helper = Path(work) / "turn_helper.so"
        source = Path(work) / "turn_helper.c"
        source.write_text(_HELPER, encoding="utf-8")
        subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", helper, source], check=True)
        counts = {mode: _count(args, mode, helper, Path(work)) for mode in args.modes}
    for mode, count in counts.items():
        print(f"{mode}: {count:,} instructions per {'request' if mode == 'server' else 'turn'}")
    if "first" in counts and "mid" in counts:
        print(f"mid minus first: {counts['mid'] - counts['first']:+,}")
    if "first" in counts and "server" in counts:
        print(f"server's request minus first turn: {counts['server'] - counts['first']:+,}")


def _count(args: argparse.Namespace, mode: str, helper: Path, work: Path) -> int:
    """One mode's run under callgrind; the dumped counts of the measured loop, per turn."""
    out = work / f"callgrind.{mode}"
    env = {**os.environ, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1"}
    command = [
        "valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}.%p",
        sys.executable, __file__, "--pack-file", args.pack_file, "--data", args.data,
        "--tree", args.tree, "--inner", mode, "--helper", str(helper),
    ] + (["--warm"] if args.warm else [])  # fmt: skip
    subprocess.run(command, env=env, check=True, capture_output=True)
    for dump in work.glob(f"callgrind.{mode}.*"):
        text = dump.read_text(encoding="utf-8", errors="replace")
        if "Trigger: Client Request: turns" in text:
            totals = next(line for line in text.splitlines() if line.startswith("totals:"))
            return int(totals.split()[1]) // (LAST - FIRST)
    raise RuntimeError(f"no counts dumped for {mode}")


def _route_under_valgrind(args: argparse.Namespace) -> None:
    sys.path.insert(0, args.tree)
    from routing_core import Router, load_pack

    helper = ctypes.CDLL(args.helper)
    if args.inner == "server":
        _serve_under_valgrind(args, helper)
        return
    router = Router(load_pack(json.loads(Path(args.pack_file).read_text(encoding="utf-8"))))
    lines = (Path(args.data) / "clinc150" / "test.jsonl").read_text(encoding="utf-8")
    messages = [json.loads(line)["text"] for line in lines.splitlines()[:LAST]]
    names = list(router.pack.route_names)
    follows = args.inner == "mid"
    incumbents = [random.Random(i).choice(names) if follows else None for i in range(LAST)]
    for name in names:  # every incumbent's prior made before the count
        router.route("ok", name)
        router.route("hello there friend", name)
    for i in range(LAST if args.warm else FIRST):
        router.route(messages[i], incumbents[i])
    helper.turn_start()
    for i in range(FIRST, LAST):
        router.route(messages[i], incumbents[i])
    helper.turn_stop()


def _serve_under_valgrind(args: argparse.Namespace, helper: ctypes.CDLL) -> None:
    """`POST /v1/route` through the route server's ASGI app, in process: what the app's
    Python path costs a request (the HTTP server's own work is not counted)."""
    import asyncio
    import time

    from routing_core.server import ENV_CONFIG, ServeConfig, create_app

    os.environ[ENV_CONFIG] = ServeConfig(pack_file=str(Path(args.pack_file).resolve())).to_env()
    app = create_app()
    app.start()
    while app.holder.state is None:
        time.sleep(0.05)
    lines = (Path(args.data) / "clinc150" / "test.jsonl").read_text(encoding="utf-8")
    bodies = [
        json.dumps({"message": json.loads(line)["text"]}).encode()
        for line in lines.splitlines()[:LAST]
    ]
    scope = {
        "type": "http", "path": "/v1/route", "method": "POST",
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")],
    }  # fmt: skip

    async def request(body: bytes) -> None:
        async def receive() -> dict[str, object]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: object) -> None:
            pass

        await app(scope, receive, send)

    async def run(first: int, last: int) -> None:
        for body in bodies[first:last]:
            await request(body)

    loop = asyncio.new_event_loop()
    loop.run_until_complete(run(0, LAST if args.warm else FIRST))
    helper.turn_start()
    loop.run_until_complete(run(FIRST, LAST))
    helper.turn_stop()
    app.stop()


if __name__ == "__main__":
    main()
