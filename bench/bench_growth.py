"""A profile that grows by edits: the warm-started model against one learned afresh.

Usage: .venv/bin/python bench/bench_growth.py [--data ../shared/datasets/clinc150]
       [--start 20] [--step 1.25] [--routes N] [--refit-growth X]

Every studio edit after a profile's first model warm-starts from its last one, and a warm start
keeps the earlier model's temperature, floor, margin and view weight (`lexical._warm_starts`
says when it learns afresh instead). This grows CLINC150 from `--start` examples a route to all
of them, each step `--step` times the last, warm-starting each model from the one before (as
the studio does), then learns the full pack afresh, and judges both on `val` (in scope and out
of scope) at the pack's own defaults. Prints, per model: where it was learned afresh, its
fitted thresholds and `fitted_on`, in-scope decision accuracy, out-of-scope recall and menus.
`--routes N` keeps the first N routes (a small profile: `--routes 12 --start 10` starts below
the 200 texts that calibrate). `--refit-growth inf` measures the warm starts as they were
before they refitted (session 10).
Dev data only (val); asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from routing_core import Pack, Router, load_pack  # noqa: E402
from routing_core.scorers import lexical, stored  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets" / "clinc150"))
    parser.add_argument("--start", type=int, default=20)
    parser.add_argument("--step", type=float, default=1.25)
    parser.add_argument("--routes", type=int, default=None, help="the first N routes only")
    parser.add_argument("--refit-growth", type=float, default=lexical.REFIT_GROWTH)
    args = parser.parse_args()
    lexical.REFIT_GROWTH = args.refit_growth
    data = Path(args.data)
    routes = json.loads((data / "routes.json").read_text())[: args.routes]
    names = {route["name"] for route in routes}
    judged = [
        case
        for case in map(json.loads, (data / "val.jsonl").read_text().splitlines())
        if case["expected"] is None or case["expected"] in names
    ]
    most = max(len(route["examples"]) for route in routes)
    size, previous = args.start, None
    while True:
        pack = _pack(routes, size)
        lexical._LEARNED.clear()
        previous = stored.with_model(pack, previous=previous)
        model = previous.scorer.model  # type: ignore[union-attr]
        print(f"  {size:4d} a route: fitted_on {model.fitted_on}")
        if size >= most:
            break
        size = min(most, int(size * args.step) + 1)
    lexical._LEARNED.clear()
    afresh = stored.with_model(_pack(routes, most))
    for name, built in (("grown by warm starts", previous), ("learned afresh", afresh)):
        print(f"{name}: {_judged(built, judged)}")


def _pack(routes: list[dict], size: int) -> Pack:
    kept = [{"name": r["name"], "examples": r["examples"][:size]} for r in routes]
    return load_pack({"profile": {"slug": "grown", "name": "Grown"}, "routes": kept})


def _judged(pack: Pack, judged: list[dict]) -> str:
    model = pack.scorer.model  # type: ignore[union-attr]
    router = Router(pack)
    right = refused = menus = in_scope = 0
    for case in judged:
        decision = router.route(case["text"])
        if case["expected"] is None:
            refused += decision.verdict == "unmatched"
            continue
        in_scope += 1
        right += decision.route == case["expected"] and decision.verdict == "move"
        menus += decision.verdict == "menu"
    out = len(judged) - in_scope
    view = f"{model.semantic.weight:.3f}" if model.semantic else "none"
    return (
        f"T {model.temperature:.3f}, floor {model.floor}, margin {model.margin}, view"
        f" weight {view}, fitted_on {model.fitted_on}; in scope {right / in_scope:.2%},"
        f" out-of-scope recall {refused / max(out, 1):.1%}, menus {menus / in_scope:.2%}"
    )


if __name__ == "__main__":
    main()
