"""route() at 2,000 routes, pass by pass: CPU p50 / p99 / max and what the collector did.

Usage: .venv/bin/python bench/bench_turn.py [--pack clinc|among|generated] [--gc freeze|off]
       [--passes 3] [--save /tmp/pack.json | --load /tmp/pack.json | --pack-file pack.json]
       [--conversation]

`clinc`: the real CLINC150 pack; `among`: CLINC150's 150 routes plus 1,850 generated ones
(`bench_scale.py`'s `clinc+1850x25` row), both routed with 2,000 CLINC150 test messages;
`generated`: 2,000 generated routes x 25 examples with their own (longer) messages. Each pass
routes every message once and prints the CPU time of the call (`thread_time`) at p50 / p99 /
max, and the garbage collections that ran during the pass (count and longest, per
generation, from `gc.callbacks`). `--gc freeze` calls `gc.freeze()` after loading (what an
embedder can do); `--gc off` disables the collector during the passes. The scale target's p99
question (docs/lab/benchmarks.md): compare the default with `--gc freeze`, and with
`OPENBLAS_NUM_THREADS=1` in the environment. `--conversation` measures instead what following
the conversation costs: each message routed as a first turn (no incumbent), mid-conversation
(an incumbent drawn from the pack's routes, the default policy), and mid-conversation with
`conversation: ignore`, block by block (100 messages routed by one variant, then by the
next; each variant first in turn), so that the machine's load falls on all three alike and no
call finds its message's terms still cached from the call before; it prints each
variant's p50 / p99 and the differences of the p50s; then, paired, the median of each
message's own extra cost mid-conversation over a first turn (both calls within a few hundred
microseconds, so a drift of the host's speed between blocks cancels out). `--pack-file` routes with a pack written
by `routing-core build` (the product's path); `--pack clinc` builds the same pack in process
(`with_model` on CLINC150's routes: the same learned model, only the slug differs). A pack
saved (`--save`) by an older version keeps the model it was built with, which may lack what
later versions learn (the semantic view): rebuild it before comparing. Prints figures;
asserts nothing.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_scale import generated  # noqa: E402

from routing_core import Router, dump_pack, load_pack  # noqa: E402
from routing_core.scorers.stored import with_model  # noqa: E402


def pack_and_messages(data: Path, kind: str, build: bool = True) -> tuple[Any, list[str]]:
    """The pack to route on (with its model; None when not `build`) and the messages."""
    lines = (data / "clinc150" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    clinc_messages = [json.loads(line)["text"] for line in lines[:2000]]
    real = json.loads((data / "clinc150" / "routes.json").read_text(encoding="utf-8"))
    if kind == "clinc":
        routes, messages = real, clinc_messages
    elif kind == "among":
        routes, messages = real + generated(data, 1850, 25, beside=real)[0], clinc_messages
    else:
        routes, pairs = generated(data, 2000, 25)
        messages = [m for _, m in pairs[:2000]]
    if not build:
        return None, messages
    plain = load_pack({"profile": {"slug": "turn", "name": "turn"}, "routes": routes})
    return with_model(plain), messages


def one_pass(router: Router, messages: list[str]) -> str:
    """Route every message once; the CPU percentiles and the collections of the pass."""
    collections: dict[int, list[float]] = {}
    started: list[int] = [0]

    def watch(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter_ns()
        else:
            spent = (time.perf_counter_ns() - started[0]) / 1000
            collections.setdefault(info["generation"], []).append(spent)

    gc.callbacks.append(watch)
    costs = []
    for message in messages:
        start = time.thread_time_ns()
        router.route(message)
        costs.append((time.thread_time_ns() - start) / 1000)
    gc.callbacks.remove(watch)
    costs.sort()
    p50, p99 = costs[len(costs) // 2], costs[int(0.99 * len(costs))]
    seen = ", ".join(
        f"gen{g} {len(t)}x (longest {max(t):,.0f} µs)" for g, t in sorted(collections.items())
    )
    return f"{p50:.0f} / {p99:.0f} / {costs[-1]:,.0f} µs; collections: {seen or 'none'}"


# Messages routed in a row by one variant before the next variant routes them.
BLOCK = 100


def conversation_pass(router: Router, messages: list[str], incumbents: list[str]) -> str:
    """CPU p50 / p99 of route() as a first turn, mid-conversation, and mid-conversation
    ignoring it."""
    ignore = router.policy_with(conversation="ignore")
    costs: dict[str, list[float]] = {"first turn": [], "mid, follow": [], "mid, ignore": []}
    variants = [
        ("first turn", False, None),
        ("mid, follow", True, None),
        ("mid, ignore", True, ignore),
    ]
    for number, begin in enumerate(range(0, len(messages), BLOCK)):
        block = range(begin, min(begin + BLOCK, len(messages)))
        # Block by block, each variant first in turn, so that the machine's load falls on
        # all three alike. Never the same message twice in a row: the scorer keeps the last
        # message's terms (for `explain`), and a second call would find them computed and
        # measure a cheaper turn than any real one (a third of the calls paid full price,
        # and the p50 of that mixture moved by whole microseconds for nothing).
        shift = number % len(variants)
        for label, follows, policy in variants[shift:] + variants[:shift]:
            for index in block:
                incumbent = incumbents[index] if follows else None
                start = time.thread_time_ns()
                router.route(messages[index], incumbent, policy=policy)
                costs[label].append((time.thread_time_ns() - start) / 1000)
    p50 = {label: _percentile(c, 0.5) for label, c in costs.items()}
    p99 = {label: _percentile(c, 0.99) for label, c in costs.items()}
    shown = " / ".join(f"{label} {p50[label]:.1f} / {p99[label]:.0f}" for label in costs)
    extra = p50["mid, follow"] - p50["first turn"]
    features = p50["mid, follow"] - p50["mid, ignore"]
    return (
        f"p50 / p99: {shown} µs; mid-conversation minus first turn {extra:+.1f} µs (p50), "
        f"following minus ignoring the conversation {features:+.1f} µs"
    )


def paired_pass(router: Router, messages: list[str], incumbents: list[str]) -> str:
    """The median of each message's own extra cost mid-conversation over a first turn.

    A difference of two p50s also carries whatever the host's speed did between the blocks
    (on a shared VM it drifts by a third within a minute). Here each message is routed both
    ways within a few hundred microseconds, in alternating order, each call right after the
    previous message (untimed), so neither finds its terms cached from the call before.
    """
    differences: list[float] = []
    for index, message in enumerate(messages):
        first = _timed(router, messages[index - 1], message, None)
        mid = _timed(router, messages[index - 1], message, incumbents[index])
        if index % 2:
            mid = _timed(router, messages[index - 1], message, incumbents[index])
            first = _timed(router, messages[index - 1], message, None)
        differences.append(mid - first)
    median = _percentile(differences, 0.5)
    low, high = _percentile(differences, 0.25), _percentile(differences, 0.75)
    return f"each message's own extra: median {median:+.1f} µs (quartiles {low:+.1f} / {high:+.1f})"


def _timed(router: Router, before: str, message: str, incumbent: str | None) -> float:
    router.route(before)
    start = time.thread_time_ns()
    router.route(message, incumbent)
    return (time.thread_time_ns() - start) / 1000


def _percentile(costs: list[float], share: float) -> float:
    ordered = sorted(costs)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--pack", choices=("clinc", "among", "generated"), default="among")
    parser.add_argument("--gc", choices=("default", "freeze", "off"), default="default")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--save", help="write the built pack and messages here, then stop")
    parser.add_argument("--load", help="a pack and messages written by --save")
    parser.add_argument(
        "--pack-file",
        help="a pack written by `routing-core build` (or a studio publish), routed with "
        "CLINC150's first 2,000 test messages instead of the pack --pack builds",
    )
    parser.add_argument("--conversation", action="store_true", help="first vs later turns")
    args = parser.parse_args()
    if args.load:
        saved = json.loads(Path(args.load).read_text(encoding="utf-8"))
        pack, messages = load_pack(saved["pack"]), saved["messages"]
    elif args.pack_file:
        pack = load_pack(Path(args.pack_file).read_text(encoding="utf-8"))
        messages = pack_and_messages(Path(args.data), "clinc", build=False)[1]
    else:
        pack, messages = pack_and_messages(Path(args.data), args.pack)
    if args.save:
        text = json.dumps({"pack": json.loads(dump_pack(pack)), "messages": messages})
        Path(args.save).write_text(text, encoding="utf-8")
        return
    router = Router(load_pack(dump_pack(pack)))
    del pack
    if args.gc == "freeze":
        gc.collect()
        gc.freeze()
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    source = args.pack_file or args.load or args.pack
    print(f"{source}, gc {args.gc}, OPENBLAS_NUM_THREADS {threads}, load {os.getloadavg()}")
    print(f"scorer: {router.scorer.info.details}")
    if args.conversation:
        names = router.pack.route_names
        incumbents = [random.Random(number).choice(names) for number in range(len(messages))]
        for number in range(args.passes):
            print(f"pass {number + 1}: {conversation_pass(router, messages, incumbents)}")
            print(f"pass {number + 1}, paired: {paired_pass(router, messages, incumbents)}")
        print(f"load average after: {os.getloadavg()}")
        return
    for number in range(args.passes):
        if args.gc == "off":
            gc.disable()
        print(f"pass {number + 1}: route() CPU p50 / p99 / max {one_pass(router, messages)}")
        gc.enable()
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
