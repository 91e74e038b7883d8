"""Quick measure of the lexical scorer alone on the public data sets (no router, no policy).

Usage: .venv/bin/python bench/lexical_quick.py [clinc150 banking77 ...]

Builds the scorer from `../shared/datasets/<name>/routes.json` and prints, per data set:
build time, peak memory of the build (tracemalloc), top-1 accuracy on each in-scope split,
mean log-loss, and p50/p99 latency of `score()` over every message of the last split.
"""

from __future__ import annotations

import json
import math
import sys
import time
import tracemalloc
from pathlib import Path

from routing_core.scorers import RouteText
from routing_core.scorers._terms import word_terms
from routing_core.scorers.lexical import LexicalScorer

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def load_routes(name: str) -> list[RouteText]:
    raw = json.loads((DATASETS / name / "routes.json").read_text())
    return [
        RouteText(
            r["name"],
            r.get("description", ""),
            tuple(r.get("examples", ())),
            tuple(r.get("keywords", ())),
        )
        for r in raw
    ]


def load_cases(name: str, split: str) -> list[dict[str, str | None]]:
    path = DATASETS / name / f"{split}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def build(routes: list[RouteText]) -> tuple[LexicalScorer, float, float]:
    """Build twice from a cold word cache: once timed, once under tracemalloc for the peak."""
    word_terms.cache_clear()
    start = time.perf_counter()
    scorer = LexicalScorer.build(routes)
    seconds = time.perf_counter() - start
    word_terms.cache_clear()
    tracemalloc.start()
    LexicalScorer.build(routes)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return scorer, seconds, peak


def evaluate(scorer: LexicalScorer, names: list[str], cases: list[dict[str, str | None]]):
    hits, loss, latencies = 0, 0.0, []
    for case in cases:
        start = time.perf_counter()
        scores = scorer.score(str(case["text"]), names)
        latencies.append(time.perf_counter() - start)
        if case["expected"] is None:
            continue
        expected = names.index(case["expected"])
        hits += max(range(len(names)), key=scores.__getitem__) == expected
        loss -= math.log(max(scores[expected], 1e-9))
    in_scope = sum(c["expected"] is not None for c in cases)
    return hits / in_scope, loss / in_scope, sorted(latencies)


def percentile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def main(names: list[str]) -> None:
    for name in names or ["clinc150", "banking77"]:
        routes = load_routes(name)
        scorer, seconds, peak = build(routes)
        route_names = [r.name for r in routes]
        terms = scorer.info.details["terms"]
        weights = int(str(terms)) * len(routes) * 4 / 2**20
        print(
            f"{name}: {len(routes)} routes, {terms} terms, build {seconds:.3f} s, "
            f"build peak {peak:.0f} MiB, weights {weights:.0f} MiB"
        )
        splits = [s for s in ("val", "test") if (DATASETS / name / f"{s}.jsonl").exists()]
        for split in splits:
            accuracy, loss, latencies = evaluate(scorer, route_names, load_cases(name, split))
            p50, p99 = percentile(latencies, 0.5) * 1e6, percentile(latencies, 0.99) * 1e6
            print(
                f"  {split:5} top-1 {accuracy:.2%}  log-loss {loss:.3f}  "
                f"score() p50 {p50:.0f} us  p99 {p99:.0f} us"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
