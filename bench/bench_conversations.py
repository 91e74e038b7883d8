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

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from routing_core import Router, load_pack  # noqa: E402
from routing_core.build import build_pack_file  # noqa: E402
from routing_core.cases import Case, load_cases  # noqa: E402
from routing_core.conversation import carries_no_topic, prior_text  # noqa: E402
from routing_core.evaluate import EvalReport, evaluate  # noqa: E402
from routing_core.policy import Policy, decide_scores  # noqa: E402


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
    print("  the features alone, on the same turns' scores (the paths above differ by verdict):")
    for label, (p50, p99) in _feature_cost(router, cases).items():
        print(f"  {label:<34} p50 {p50:7.1f} µs   p99 {p99:8.1f} µs")
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
    times = []
    for _ in range(repeats):
        for text, incumbent in turns:
            t0 = time.thread_time_ns()
            router.route(text, incumbent, policy=policy)
            times.append((time.thread_time_ns() - t0) / 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99)]


def _feature_cost(router: Router, cases: list[Case]) -> dict[str, tuple[float, float]]:
    """CPU µs of what following the conversation adds to a turn: the no-topic check, and
    the verdict with the incumbent's prior against the verdict without it."""
    names = router.pack.route_names
    prior_of = {
        name: np.array(router.scorer.score(prior_text(name, r.description), names), dtype=float)
        for name, r in ((r.name, r) for r in router.pack.routes)
    }
    turns = [
        (case.text, before.expected, np.array(router.scorer.score(case.text, names)))
        for before, case in zip(cases, cases[1:], strict=False)
        if case.conversation == before.conversation and before.expected is not None
    ]
    policy, floor = router.pack.policy, router.scorer.info.floor
    timed: dict[str, list[float]] = {
        "no-topic check": [],
        "verdict alone": [],
        "verdict + prior": [],
    }
    for text, incumbent, scores in turns * 3:
        prior = prior_of[incumbent]
        t0 = time.thread_time_ns()
        carries_no_topic(text)
        t1 = time.thread_time_ns()
        decide_scores(names, scores, incumbent, policy, floor)
        t2 = time.thread_time_ns()
        decide_scores(names, scores, incumbent, policy, floor, prior=prior)
        t3 = time.thread_time_ns()
        for label, spent in zip(timed, (t1 - t0, t2 - t1, t3 - t2), strict=True):
            timed[label].append(spent / 1000)
    return {k: (statistics.median(v), sorted(v)[int(len(v) * 0.99)]) for k, v in timed.items()}


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
