"""Out of scope at defaults on small profiles: 10 and 20 examples a route, no out-of-scope examples.

Usage: .venv/bin/python bench/bench_oos_small.py [--split val|test] [--sets clinc150 banking77 hwu64]
       [--shots 10 20]

Real profiles start with 10-20 examples a route and no out-of-scope examples. Each profile here
is cut from a shared set's training split (every route, and every 5th and 10th route, each with
its first `shots` examples), built with `routing_core.build_pack` (no out-of-scope examples, so
the engine's own defaults apply: the fitted floor and the built-in background of off-topic
text; run the script from a checkout of an earlier commit for "before") and judged by
`Router.route`:

- in scope: that profile's cases of the split (a right decision is a `move` to the right route,
  a wrong one a `move` to another);
  Banking77 has no `val`, so its dev cases are the training examples the profile left out;
- out of scope: CLINC150's out-of-scope cases of the split (`val`: 100, `test`: 1,000), for
  every set's profiles (Banking77 and HWU64 have none of their own; CLINC150's are about
  everything else a person asks an assistant).

With `--unknown`, every fourth route of each profile is left out of it, and that route's
messages of the split are the profile's out-of-scope ones: requests near its routes that no
route was written for, which is what a real bot's out-of-scope messages mostly are (far
fewer ask it about the weather than ask for something next to what it does). It prints their
share left unmatched ("near out-of-scope recall") and moved to a route, beside the
profile's in-scope figures and CLINC150's off-topic ones.

Choose on `--split val` (dev); `test` is for reporting. Prints one line per profile and the
totals per set with the load average; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from routing_core import Router, build_pack  # noqa: E402

DATA = ROOT.parent / "shared" / "datasets"
# (every, offset): all routes, then two smaller profiles of a few dozen and a dozen routes.
SUBSETS = [(1, 0), (5, 0), (10, 1)]


def _cases(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _split_cases(name: str, split: str, routes: list[dict], shots: int) -> list[dict]:
    """The set's in-scope cases of `split`; for a set without `val`, the unused train examples."""
    path = DATA / name / f"{split}.jsonl"
    if path.exists():
        return [c for c in _cases(path) if c["expected"] is not None]
    return [{"text": t, "expected": r["name"]} for r in routes for t in r["examples"][shots:]]


def _decided(router: Router, text: str) -> str | None:
    decision = router.route(text)
    return decision.route if decision.verdict == "move" else None


def run(
    name: str, split: str, shots: int, oos: list[str], unknown: bool = False
) -> tuple[int, ...]:
    """(right, in scope, refused, out of scope, wrong, moved, near unmatched, near, near
    moved) summed over the set's small profiles: a wrong decision is a `move` to another
    route than the expected one, and a moved out-of-scope message one that went to a route
    (neither unmatched nor a menu). The last three are zero without `unknown`."""
    routes = json.loads((DATA / name / "routes.json").read_text())
    cases = _split_cases(name, split, routes, shots)
    totals = [0] * 9
    for every, offset in SUBSETS:
        chosen = routes[offset::every]
        left_out = {r["name"] for r in chosen[3::4]} if unknown else set()
        chosen = [r for r in chosen if r["name"] not in left_out]
        kept = [{"name": r["name"], "examples": r["examples"][:shots]} for r in chosen]
        started = time.perf_counter()
        pack = build_pack(kept, slug="small")
        built = time.perf_counter() - started
        router, names = Router(pack), {r["name"] for r in chosen}
        mine = [c for c in cases if c["expected"] in names]
        decided = [(_decided(router, str(c["text"])), c["expected"]) for c in mine]
        ok = sum(route == expected for route, expected in decided)
        wrong = sum(route is not None and route != expected for route, expected in decided)
        verdicts = [router.route(text).verdict for text in oos]
        no, moved = verdicts.count("unmatched"), verdicts.count("move")
        near = [router.route(str(c["text"])).verdict for c in cases if c["expected"] in left_out]
        model = pack.scorer.model  # type: ignore[union-attr]
        print(
            f"  {name} {len(chosen):3d} routes x {shots}: floor {model.floor}, T"
            f" {model.temperature}, built in {built:.1f} s; in scope {ok / max(1, len(mine)):.1%}"
            f" ({len(mine)}), out-of-scope recall {no / len(oos):.1%} ({len(oos)})"
        )
        near_counts = (near.count("unmatched"), len(near), near.count("move"))
        for i, value in enumerate((ok, len(mine), no, len(oos), wrong, moved, *near_counts)):
            totals[i] += value
    return tuple(totals)


def _near(near_no: int, n_near: int, near_moved: int) -> str:
    if not n_near:
        return ""
    return (
        f", near out-of-scope recall {near_no / n_near:.2%} (moved {near_moved / n_near:.2%};"
        f" {n_near} messages)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="val", choices=("val", "test"))
    parser.add_argument("--sets", nargs="+", default=["clinc150", "banking77", "hwu64"])
    parser.add_argument("--shots", nargs="+", type=int, default=[10, 20])
    parser.add_argument(
        "--unknown",
        action="store_true",
        help="leave every fourth route out of each profile; its messages are out of scope",
    )
    args = parser.parse_args()
    cases = _cases(DATA / "clinc150" / f"{args.split}.jsonl")
    oos = [str(c["text"]) for c in cases if c["expected"] is None]
    for shots in args.shots:
        for name in args.sets:
            right, n_in, refused, n_out, wrong, moved, *near = run(
                name, args.split, shots, oos, args.unknown
            )
            print(
                f"{name} x {shots} ({args.split}): in-scope decisions {right / n_in:.2%},"
                f" wrong moves {wrong / n_in:.2%},"
                f" out-of-scope recall {refused / n_out:.2%} (moved {moved / n_out:.2%})"
                f"{_near(*near)} (load average {os.getloadavg()[0]:.1f})"
            )


if __name__ == "__main__":
    main()
