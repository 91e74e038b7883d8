"""Benchmark the optional tiers at the pack's own defaults.

Usage (needs the `embeddings` extra, i.e. `.venv-embed`; one torch thread leaves a core to others):
    OMP_NUM_THREADS=1 .venv-embed/bin/python bench/bench_tiers.py [--data ../shared/datasets]
        [--cache /tmp/rs-emb] [--sets clinc150 banking77] [--model all-minilm-l6-v2]

`--model` puts the embedding and hybrid tiers on another packaged model (the multilingual ones
need no torch: `.venv` with their extra will do), with a cache file of its own.

Each set is built as `routing-core build` builds it (the lexical model, its fitted floor and
margin; the margin becomes the policy's), then routed with each tier as the pack's scorer and
nothing else changed: the floor is the tier's own fitted one, the margin the built pack's.
CLINC150 is also built with its 100 `oos` training rows as the pack's out-of-scope examples.
Every text is encoded once with the real packaged model and cached under --cache (the file
`bench_tiers` has always used: texts and vectors), so accuracy reuses the vectors. Latency is
the real model on a sample of test messages: `route()` end to end, and the per-message encode
alone in thread CPU time. Nothing here is chosen: the tiers' settings were chosen on CLINC150
`val` (`bench/tune_tiers.py`); `val` rows are printed beside `test` to show it. Prints JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from routing_core import (  # noqa: E402
    Case,
    EvalReport,
    Pack,
    Router,
    build_pack_file,
    dump_pack,
    evaluate,
    load_cases,
    load_pack,
    new_scorer_settings,
)
from routing_core.scorers import embedding  # noqa: E402

MODEL = "all-minilm-l6-v2"
LATENCY_SAMPLE = 300
TIERS: list[tuple[str, dict[str, Any]]] = [
    ("lexical", {"kind": "lexical"}),
    ("embedding", new_scorer_settings("embedding")),
    ("hybrid", new_scorer_settings("hybrid")),
    ("cascade lexical -> embedding", {"kind": "cascade", "tiers": [{"kind": "lexical"}, new_scorer_settings("embedding")]}),
    ("cascade lexical -> hybrid", new_scorer_settings("cascade")),
    # The same, but a message in a language none of the examples are in goes to the hybrid
    # only when the lexical verdict is open: what `take_foreign` costs and changes.
    ("cascade lexical -> hybrid, no take_foreign", {"kind": "cascade", "tiers": [{"kind": "lexical"}, {**new_scorer_settings("cascade")["tiers"][1], "take_foreign": False}]}),
]  # fmt: skip


class CachedEncoder:
    """The real encoder behind a text -> vector cache (saved to disk between runs).

    `live`: a one-text call (a turn's message) goes to the real model, so a Router compiled
    from cached route vectors pays for its messages as in production.
    """

    def __init__(self, real: embedding.Encoder, path: Path) -> None:
        self.real, self.path, self.live = real, path, False
        self.vectors: dict[str, np.ndarray] = {}
        if path.exists():
            data = np.load(path, allow_pickle=False)
            self.vectors = dict(zip(data["texts"].tolist(), data["vectors"], strict=True))

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if self.live and len(texts) == 1:
            return self.real.encode(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if missing:
            for text, row in zip(missing, self.real.encode(missing), strict=True):
                self.vectors[text] = row
        return np.stack([self.vectors[t] for t in texts]).astype(np.float32)

    def save(self) -> None:
        texts = list(self.vectors)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(
            self.path, texts=np.array(texts), vectors=np.stack([self.vectors[t] for t in texts])
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--cache", default="/tmp/rs-emb")
    parser.add_argument("--sets", nargs="+", default=["clinc150", "banking77"])
    parser.add_argument("--model", default=MODEL, choices=sorted(embedding.PACKAGED_MODELS))
    args = parser.parse_args()
    Path(args.cache).mkdir(parents=True, exist_ok=True)
    real = embedding.load_encoder(args.model)
    results: dict[str, Any] = {
        "started_utc": _now(),
        "load_average": os.getloadavg(),
        "model": args.model,
    }
    for name in args.sets:
        folder = Path(args.data) / name
        # The default model keeps the cache file it has always had; another gets its own.
        stem = name if args.model == MODEL else f"{name}-{args.model}"
        cached = CachedEncoder(real, Path(args.cache) / f"{stem}.npz")
        embedding._encoders[args.model] = cached  # every Router of this set reuses the vectors
        results[name] = bench(folder, cached, args.model)
        cached.save()
    results["finished_utc"], results["load_average_end"] = _now(), os.getloadavg()
    print(json.dumps(results, indent=1))


def bench(folder: Path, cached: CachedEncoder, model: str = MODEL) -> dict[str, Any]:
    """Every tier at the built pack's defaults, on val (when there is one) and test, the
    embedding and hybrid tiers with `model`."""
    paths = {s: folder / f"{s}.jsonl" for s in ("val", "test")}
    splits = {s: load_cases(p) for s, p in paths.items() if p.exists()}
    train = folder / "train.jsonl"
    negatives = [c.text for c in load_cases(train) if c.expected is None] if train.exists() else []
    packs = {"routes.json": build_pack_file(folder / "routes.json", slug=folder.name)}
    if negatives:
        packs["+ oos examples"] = build_pack_file(
            folder / "routes.json", slug=folder.name, out_of_scope=negatives
        )
    for pack in packs.values():
        cached.encode([t for r in pack.routes for t in (r.description, *r.examples) if t.strip()])
    cached.encode(negatives + [c.text for cases in splits.values() for c in cases])
    cached.save()
    out: dict[str, Any] = {}
    for variant, pack in packs.items():
        for label, scorer in TIERS:
            router = _router(pack, _with_model(scorer, model))
            row: dict[str, Any] = {"fitted": _fitted(router), "margin": pack.policy.near_tie_margin}
            for split, cases in splits.items():
                row[split] = _figures(evaluate(router, cases))
            if variant == "routes.json":
                row["latency"] = _latency(router, cached, splits["test"])
            out[f"{variant} | {label}"] = row
            print(f"{folder.name} {variant} {label}: {json.dumps(row)}", file=sys.stderr)
    return out


def _router(pack: Pack, scorer: dict[str, Any]) -> Router:
    """The built pack with `scorer` in place of its own (its stored lexical model kept when
    the scorer is lexical), everything else as built."""
    document = json.loads(dump_pack(pack))
    document.pop("checksum")
    if scorer["kind"] != "lexical":
        document["scorer"] = scorer
    return Router(load_pack(document))


def _with_model(scorer: dict[str, Any], model: str) -> dict[str, Any]:
    """The scorer settings with every embedding and hybrid tier on `model` (the default
    model is left unwritten, as the studio writes it)."""
    if model == MODEL:
        return scorer
    if scorer["kind"] == "cascade":
        return {**scorer, "tiers": [_with_model(tier, model) for tier in scorer["tiers"]]}
    return {**scorer, "model": model} if scorer["kind"] in ("embedding", "hybrid") else scorer


def _fitted(router: Router) -> dict[str, Any]:
    """Each tier's fitted temperature, floor and margin, as the scorers report them."""
    fitted = {}
    for tier in router.cascade.tiers:
        details = tier.scorer.info.details
        fitted[tier.name] = {
            "floor": tier.scorer.info.floor,
            "margin": details.get("fitted_margin"),
            "temperature": details.get("calibration_temperature"),
            "out_of_scope_examples": details.get("out_of_scope_examples"),
            "head_weights": details.get("head_weights"),
        }
    return fitted


def _figures(report: EvalReport) -> dict[str, Any]:
    out = report.to_dict()
    keys = ("top1_accuracy", "in_scope_accuracy", "oos_recall", "menu_rate")
    return {
        **{k: out[k] for k in keys},
        "decided_by": {k: round(v / report.n, 4) for k, v in report.decided_by.items()},
    }


def _latency(router: Router, cached: CachedEncoder, test: list[Case]) -> dict[str, Any]:
    """`route()` with the real model encoding each message, and the encode alone (thread CPU:
    what the turn costs a core, whatever else the machine runs)."""
    sample = _sample(test)
    cached.live = True
    try:
        report = evaluate(router, sample)
        encode_cpu, encode_wall = [], []
        uses_encoder = any(t.name != "lexical" for t in router.cascade.tiers)
        for case in sample if uses_encoder else []:
            cpu, wall = time.thread_time_ns(), time.perf_counter_ns()
            cached.real.encode([case.text])
            encode_cpu.append((time.thread_time_ns() - cpu) / 1e6)
            encode_wall.append((time.perf_counter_ns() - wall) / 1e6)
    finally:
        cached.live = False
    return {
        "route_ms_p50": round(report.latency_us["p50"] / 1000, 2),
        "route_ms_p99": round(report.latency_us["p99"] / 1000, 2),
        "encode_cpu_ms_p50": round(statistics.median(encode_cpu), 2) if encode_cpu else None,
        "encode_wall_ms_p50": round(statistics.median(encode_wall), 2) if encode_wall else None,
        "load_average": os.getloadavg(),
    }


def _sample(cases: list[Case]) -> list[Case]:
    digest = [hashlib.sha256(c.text.encode()).hexdigest() for c in cases]
    order = sorted(range(len(cases)), key=lambda i: digest[i])
    return [cases[i] for i in order[:LATENCY_SAMPLE]]


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())


if __name__ == "__main__":
    main()
