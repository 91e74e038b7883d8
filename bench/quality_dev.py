"""Development splits for the lexical scorer's quality (never `test`): top-1 of the scorer alone.

Usage:
    .venv/bin/python bench/quality_dev.py [--set NAME=VALUE ...] [SPLIT ...]

Splits (all from `train`/`val`, so that choices made on them leave `test` unread):
    c10, c20    CLINC150, first 10 / 20 examples per route, judged on val (in-scope)
    b10, b20    Banking77, first 10 / 20 per route, judged on the training examples left out
    h10         HWU64, first 10 per route, judged on the training examples left out (a dev
                stand-in for the fixed HWU64 10-shot subset, whose only judged split is test)
    cval        CLINC150 full routes.json, judged on val (in-scope)
    cf1, bf1, hf1   fold 1 of 3 of the training splits (every third example of each route
                held out, by position), CLINC150 / Banking77 / HWU64
    cf2 ... hf3     folds 2 and 3 of the same (every third example from the 2nd / 3rd on)
    u3          the union of the three sets, 291 routes (names prefixed c_ / b_ / h_): every
                CLINC150 training example and folds 2-3 of Banking77's and HWU64's, judged on
                CLINC150 val (in-scope) plus their fold 1. Past 200 routes, so it is a real
                data set on the candidate learner's path (`_candidates.py`)
    u25         u3 with the first 25 training examples per route (7,270 texts), judged the same
    u3b, u25b   the same with fold 2 of Banking77 and HWU64 held out instead (a second look
                at a choice made on u3 / u25)
    cs15, bs15, hs15   small profiles: every 15th / 7th / 6th route (10-11 routes) with their
                first 15 examples (160-176 texts: thresholds by cross-validation, no held-out
                calibration), judged on CLINC150 val or the examples left out
    cs10, bs10  every 10th / 5th route (15-16 routes), first 10 examples each (165-176 texts)

`--set _model.NAME=VALUE` overrides a module constant of `routing_core.scorers` for this run
(a variant measured before it is written as a rule). Prints one line per split: top-1, the
build's CPU, the load average and macro recall (each route's top-1, averaged over routes: a
figure class-balance variants can be judged on); asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import time
from collections import Counter
from pathlib import Path

import numpy as np

from routing_core.scorers import RouteText, lexical
from routing_core.scorers.lexical import LexicalScorer

DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets"
Judged = list[tuple[str, str]]


def _routes(name: str) -> list[dict]:
    return json.loads((DATA / name / "routes.json").read_text())


def _val(name: str) -> Judged:
    rows = [json.loads(line) for line in (DATA / name / "val.jsonl").read_text().splitlines()]
    return [(r["text"], r["expected"]) for r in rows if r["expected"] is not None]


def _shots(name: str, k: int, judge_val: bool) -> tuple[list[RouteText], Judged]:
    routes = _routes(name)
    train = [RouteText(r["name"], "", tuple(r["examples"][:k])) for r in routes]
    if judge_val:
        return train, _val(name)
    return train, [(t, r["name"]) for r in routes for t in r["examples"][k:]]


def _fold(name: str, fold: int = 0) -> tuple[list[RouteText], Judged]:
    routes = _routes(name)
    train = [
        RouteText(r["name"], "", tuple(t for i, t in enumerate(r["examples"]) if i % 3 != fold))
        for r in routes
    ]
    judged = [(t, r["name"]) for r in routes for i, t in enumerate(r["examples"]) if i % 3 == fold]
    return train, judged


def _full_val(name: str) -> tuple[list[RouteText], Judged]:
    routes = _routes(name)
    return [RouteText(r["name"], "", tuple(r["examples"])) for r in routes], _val(name)


def _union(per_route: int | None, fold: int = 0) -> tuple[list[RouteText], Judged]:
    """CLINC150 + Banking77 + HWU64 as one 291-route pack (see u3 in the module docstring)."""
    train: list[RouteText] = []
    judged: Judged = []
    for name in ("clinc150", "banking77", "hwu64"):
        routes, held = _full_val(name) if name == "clinc150" else _fold(name, fold)
        prefix = f"{name[0]}_"
        train += [RouteText(prefix + r.name, "", r.examples[:per_route]) for r in routes]
        judged += [(text, prefix + expected) for text, expected in held]
    return train, judged


def _small(name: str, every: int, shots: int) -> tuple[list[RouteText], Judged]:
    """A small profile: every `every`-th route, its first `shots` examples; judged on the
    val messages of those routes (CLINC150) or their training examples left out."""
    routes = _routes(name)[::every]
    train = [RouteText(r["name"], "", tuple(r["examples"][:shots])) for r in routes]
    if name == "clinc150":
        names = {r["name"] for r in routes}
        return train, [(t, e) for t, e in _val(name) if e in names]
    return train, [(t, r["name"]) for r in routes for t in r["examples"][shots:]]


SPLITS = {
    "c10": lambda: _shots("clinc150", 10, True),
    "c20": lambda: _shots("clinc150", 20, True),
    "b10": lambda: _shots("banking77", 10, False),
    "b20": lambda: _shots("banking77", 20, False),
    "h10": lambda: _shots("hwu64", 10, False),
    "cval": lambda: _full_val("clinc150"),
    "cf1": lambda: _fold("clinc150"),
    "bf1": lambda: _fold("banking77"),
    "hf1": lambda: _fold("hwu64"),
    "cf2": lambda: _fold("clinc150", 1),
    "bf2": lambda: _fold("banking77", 1),
    "hf2": lambda: _fold("hwu64", 1),
    "cf3": lambda: _fold("clinc150", 2),
    "bf3": lambda: _fold("banking77", 2),
    "hf3": lambda: _fold("hwu64", 2),
    "cs15": lambda: _small("clinc150", 15, 15),
    "bs15": lambda: _small("banking77", 7, 15),
    "hs15": lambda: _small("hwu64", 6, 15),
    "cs10": lambda: _small("clinc150", 10, 10),
    "bs10": lambda: _small("banking77", 5, 10),
    "u3": lambda: _union(None),
    "u25": lambda: _union(25),
    "u3b": lambda: _union(None, 1),
    "u25b": lambda: _union(25, 1),
}


def top1(train: list[RouteText], judged: Judged) -> tuple[float, float, float]:
    """Top-1 over the judged messages (an unscored one is a miss), macro recall (the mean over
    routes of each route's top-1: a per-route balanced figure) and the build's CPU time."""
    lexical._LEARNED.clear()
    start = time.process_time()
    scorer = LexicalScorer.build(train)
    cpu = time.process_time() - start
    names = [r.name for r in train]
    right: Counter[str] = Counter()
    judged_of: Counter[str] = Counter()
    for text, expected in judged:
        scores = np.asarray(scorer.score(text, names))
        best = int(scores.argmax())
        judged_of[expected] += 1
        right[expected] += bool(scores[best] > 0 and names[best] == expected)
    macro = float(np.mean([right[name] / n for name, n in judged_of.items()]))
    return sum(right.values()) / len(judged), macro, cpu


def set_constants(items: list[str]) -> None:
    """Apply `module.NAME=VALUE` overrides of routing_core.scorers constants (this process)."""
    for item in items:
        target, value = item.split("=", 1)
        module, name = target.rsplit(".", 1)
        setattr(importlib.import_module(f"routing_core.scorers.{module}"), name, eval(value))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", action="append", default=[], help="module.NAME=VALUE")
    parser.add_argument("splits", nargs="*", default=["c10", "b10", "h10", "c20", "b20"])
    args = parser.parse_args()
    set_constants(args.set)
    for split in args.splits:
        accuracy, macro, cpu = top1(*SPLITS[split]())
        load = os.getloadavg()[0]
        print(
            f"{split} {accuracy:.2%} build {cpu:.2f} s CPU (load {load:.1f}) macro {macro:.2%}"
            f" {' '.join(args.set)}"
        )


if __name__ == "__main__":
    main()
