"""How long "find a fix" takes on a big suite: CLINC150's pack, its val split as the suite.

Usage: .venv/bin/python bench/bench_repair.py [--data ../shared/datasets/clinc150] [--cases 3100]

The pack is built from `routes.json` (150 routes); the suite is the first `--cases` lines of
`val.jsonl` (in-scope and out-of-scope). For the first failing case of each kind (a wrong route,
an out-of-scope message that was routed, a triage label the cases are given) it runs
`find_repair` and prints CPU time (`time.process_time`), the candidates tried, and the load
average beside it. Each candidate is one build of the router and one run of the whole suite,
so the time is about (candidates + 1) x one suite run: `MAX_CANDIDATES` bounds it. Prints
figures; asserts nothing. Dev data only (val).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from routing_core import Router, build_pack_file, evaluate, load_cases
    from routing_core.repair import MAX_CANDIDATES, find_repair

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets" / "clinc150"))
    parser.add_argument("--cases", type=int, default=3100)
    args = parser.parse_args()
    data = Path(args.data)
    pack = build_pack_file(data / "routes.json", slug="clinc150", name="CLINC150")
    cases = load_cases(data / "val.jsonl")[: args.cases]
    started = time.process_time()
    results = evaluate(Router(pack), cases).results
    suite_s = time.process_time() - started
    print(f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, load {_load()}")
    print(f"{len(pack.routes)} routes, {len(cases)} cases; one suite run {suite_s:.2f} s CPU")
    print(f"MAX_CANDIDATES = {MAX_CANDIDATES}")
    for kind, index, case in _failing(results, cases):
        started = time.process_time()
        report = find_repair(pack, [*cases[:index], case, *cases[index + 1 :]], index)
        spent = time.process_time() - started
        fix = report.fix.describe() if report.fix else f"none ({report.reason})"
        print(
            f"{kind:<13} {len(report.attempts):>2} tried  {spent:6.2f} s CPU  "
            f"load {_load()}  fix: {fix}"
        )
    return 0


def _failing(results, cases):  # type: ignore[no-untyped-def]
    """The first failing in-scope and out-of-scope cases, and the first passing in-scope case
    made to expect the other triage label."""
    wrong = next(i for i, r in enumerate(results) if r.failures and r.case.expected)
    oos = next(i for i, r in enumerate(results) if r.failures and r.case.expected is None)
    right = next(i for i, r in enumerate(results) if not r.failures and r.case.expected)
    label = results[right].decision.triage
    other = "action" if label is None or label.label != "action" else "knowledge"
    triage = dataclasses.replace(cases[right], expected_triage=other)
    return [
        ("wrong route", wrong, cases[wrong]),
        ("out of scope", oos, cases[oos]),
        ("triage label", right, triage),
    ]


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    raise SystemExit(main())
