"""Few examples per route: every tier at the pack's own defaults.

Usage (needs `.venv-embed`; reuses bench_tiers' vector cache):
    OMP_NUM_THREADS=1 .venv-embed/bin/python bench/few_shot_tiers.py [--data ../shared/datasets]

The subsamples of `bench/few_shot.py` (the first K examples of every route, K = 10, 20),
built as `routing-core build` builds them; each tier then routes with its own fitted floor
and the built pack's margin. Judged on CLINC150 `val` (its oos messages too) and on the
banking77 training examples left out. `test` is never read. This is where calibration meets
small profiles: the issue saw 91% menus from the embedding tier's old defaults on one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_tiers import MODEL, TIERS, CachedEncoder, _fitted, _router  # noqa: E402
from few_shot import SHOTS, subsample  # noqa: E402

from routing_core import Case, build_pack, evaluate, load_cases  # noqa: E402
from routing_core.scorers import embedding  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--cache", default="/tmp/rs-emb")
    args = parser.parse_args()
    real = embedding.load_encoder(MODEL)
    for name in ("clinc150", "banking77"):
        folder = Path(args.data) / name
        cached = CachedEncoder(real, Path(args.cache) / f"{name}.npz")
        embedding._encoders[MODEL] = cached
        for shots in SHOTS:
            train, judged, split = subsample(folder, shots)
            val = folder / "val.jsonl"
            cases = load_cases(val) if val.exists() else [Case(t, e) for t, e in judged]
            pack = build_pack(train, slug=f"{name}-{shots}")
            for label, scorer in TIERS[:3]:
                router = _router(pack, scorer)
                out = evaluate(router, cases).to_dict()
                figures = {
                    k: out[k]
                    for k in ("top1_accuracy", "in_scope_accuracy", "oos_recall", "menu_rate")
                }
                row = {"margin": pack.policy.near_tie_margin, "fitted": _fitted(router), **figures}
                print(f"{name} {shots}/route on {split} ({len(cases)}) {label}: {json.dumps(row)}")
        cached.save()


if __name__ == "__main__":
    main()
