"""Out of scope at the pack's own defaults on profiles of real size: CLINC150 route subsets.

Usage: .venv/bin/python bench/bench_small_profiles.py [--data ../shared/datasets/clinc150]

Real profiles have 5-30 examples per route and a few dozen routes, not CLINC150's 150 x 100.
Each row here is a profile cut from CLINC150's training split: every `every`-th route (from an
offset of 0 or 1) with its first `shots` examples, built with `routing_core.build.build_pack`
(so the fitted floor and margin apply, as `routing-core build` leaves them), and judged on
`val`: that profile's in-scope messages (a right decision is a `move` to the right route) and
every out-of-scope one (refused when `unmatched`). Prints each profile's texts, fitted
temperature, floor and margin, and both figures, then their totals. Dev data only (val);
asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from routing_core import Router, build_pack  # noqa: E402

# (every, shots): 8-30 routes x 10-40 examples, 200-700 texts: every one calibrates.
PROFILES = [(12, 17), (12, 25), (10, 15), (10, 20), (8, 20), (15, 30), (6, 12), (5, 10), (20, 40)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets" / "clinc150"))
    args = parser.parse_args()
    data = Path(args.data)
    routes = json.loads((data / "routes.json").read_text())
    val = [json.loads(line) for line in (data / "val.jsonl").read_text().splitlines()]
    right = in_scope = refused = out = 0
    for every, shots in PROFILES:
        for offset in (0, 1):
            chosen = routes[offset::every]
            kept = [{"name": r["name"], "examples": r["examples"][:shots]} for r in chosen]
            pack = build_pack(kept, slug="small")
            router, names = Router(pack), {r["name"] for r in chosen}
            mine = [c for c in val if c["expected"] in names]
            others = [c for c in val if c["expected"] is None]
            ok = sum(_decided(router, c["text"]) == c["expected"] for c in mine)
            no = sum(router.route(c["text"]).verdict == "unmatched" for c in others)
            right, in_scope, refused, out = (
                right + ok,
                in_scope + len(mine),
                refused + no,
                out + len(others),
            )
            model = pack.scorer.model  # type: ignore[union-attr]
            print(
                f"{len(chosen):3d} routes x {shots:2d} ({model.fitted_on} texts): T {model.temperature},"
                f" floor {model.floor}, margin {pack.policy.near_tie_margin}; in scope"
                f" {ok / len(mine):.1%}, out-of-scope recall {no / len(others):.1%}"
            )
    print(
        f"all: in-scope decisions {right / in_scope:.2%}, out-of-scope recall {refused / out:.2%}"
        f" (load {os.getloadavg()[0]:.1f})"
    )


def _decided(router: Router, text: str) -> str | None:
    decision = router.route(text)
    return decision.route if decision.verdict == "move" else None


if __name__ == "__main__":
    main()
