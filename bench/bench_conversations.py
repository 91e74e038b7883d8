"""Conversations: how the router holds them, on SGD dev (turn, stay and move accuracy).

Usage: .venv/bin/python bench/bench_conversations.py [--data ../shared/datasets] [--pack built.json]

Builds the pack from `sgd-dev/routes.json` as `routing-core build` does (or loads `--pack`),
then runs `sgd-dev/turns.jsonl` as conversations (each turn starts where the previous one
landed) twice: following the conversation (the default) and with `conversation: ignore`,
every turn judged alone (the rule before). Prints, for each: in-scope turn accuracy,
first-turn, stay and move accuracy, pass rate and out-of-scope recall; then how the turns
were decided, and the CPU time of `route()` mid-conversation (p50 / p99, `thread_time`) under
both policies, with the load average beside it. Nothing is tuned here: `sgd-dev` is a
development set, and the defaults are meant for conversations it does not hold (see
docs/decisions.md, "Routing that follows the conversation"). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from routing_core import (  # noqa: E402
    Case,
    EvalReport,
    Policy,
    Router,
    build_pack_file,
    evaluate,
    load_cases,
    load_pack,
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--pack", help="a pack built from sgd-dev/routes.json (else built here)")
    args = parser.parse_args()
    folder = Path(args.data) / "sgd-dev"
    started = time.perf_counter()
    if args.pack:
        pack = load_pack(args.pack)
    else:
        pack = build_pack_file(folder / "routes.json", slug="sgd-dev")
    print(f"pack: {len(pack.routes)} routes, ready in {time.perf_counter() - started:.1f} s")
    router = Router(pack)
    cases = load_cases(folder / "turns.jsonl")
    policies = {
        "follow (the default)": router.pack.policy,
        "ignore (each turn alone, before)": router.policy_with(conversation="ignore"),
    }
    for label, policy in policies.items():
        report = evaluate(router, cases, policy=policy)
        print(f"\n{label}; load average {_load()}")
        print(_figures(report))
    print(f"\nroute() CPU time mid-conversation, measured beside other work; load {_load()}")
    for label, policy in policies.items():
        p50, p99 = _mid_conversation_cost(router, cases, policy)
        print(f"  {label:<34} p50 {p50:7.1f} µs   p99 {p99:8.1f} µs")
    cold = [case.text for case in cases]
    for label, policy in policies.items():
        p50, p99 = _cost([(text, None) for text in cold], router, policy)
        print(f"  {'cold turns, ' + label.split()[0]:<34} p50 {p50:7.1f} µs   p99 {p99:8.1f} µs")
    print(f"load average after: {_load()}")


def _figures(report: EvalReport) -> str:
    talk = report.conversations
    assert talk is not None
    decided = Counter(
        (r.decision.by, r.decision.evidence.source if r.decision.evidence else None)
        for r in report.results
        if r.decision.from_route is not None
    )
    lines = [
        f"  in-scope turn accuracy {_p(talk.turn_accuracy)}   pass rate {_p(report.pass_rate)}"
        f"   out-of-scope recall {_p(report.oos_recall)}",
        f"  first-turn {_p(talk.first_accuracy)}   stay {_p(talk.stay_accuracy)} "
        f"({talk.stay_turns} turns)   move {_p(talk.move_accuracy)} ({talk.move_turns} turns)",
        f"  wrong in-scope turns {len(talk.wrong)}; turns after the first decided by: "
        + ", ".join(f"{by}/{source or '-'} {n}" for (by, source), n in decided.most_common()),
    ]
    return "\n".join(lines)


def _mid_conversation_cost(
    router: Router, cases: list[Case], policy: Policy, repeats: int = 3
) -> tuple[float, float]:
    """CPU µs of route() on every turn after the first, with the expected previous route as
    the incumbent (the same turns under both policies)."""
    turns = [
        (case.text, before.expected)
        for before, case in zip(cases, cases[1:], strict=False)
        if case.conversation == before.conversation and before.expected is not None
    ]
    return _cost(turns, router, policy, repeats)


def _cost(
    turns: list[tuple[str, str | None]], router: Router, policy: Policy, repeats: int = 3
) -> tuple[float, float]:
    times = []
    for _ in range(repeats):
        for text, incumbent in turns:
            t0 = time.thread_time_ns()
            router.route(text, incumbent, policy=policy)
            times.append((time.thread_time_ns() - t0) / 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99)]


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
