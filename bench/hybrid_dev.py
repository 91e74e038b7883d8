"""Choose how the hybrid tier mixes its halves, on development splits only.

Usage (needs `.venv-embed`; encodes what the vector cache lacks, with the real model):
    OMP_NUM_THREADS=1 .venv-embed/bin/python bench/hybrid_dev.py collect [--cache DIR]
    OMP_NUM_THREADS=1 .venv-embed/bin/python bench/hybrid_dev.py variants [--cache DIR]
    OMP_NUM_THREADS=1 .venv-embed/bin/python bench/hybrid_dev.py cost [--cache DIR]
    (HYBRID_DEV_SPLITS="c10 b10" limits collect and variants to those splits)

Splits (never `test`):
    cval   CLINC150 routes.json as `routing-core build` builds it, judged on `val` (3,000 in
           scope + 100 out of scope)
    bf1    Banking77 fold 1 of 3 (every third training example of each route held out, by
           position, as `quality_dev.py` holds them), judged on the examples held out
    hf1    HWU64 fold 1 of 3, the same way
    c10, c20, b10, b20   `bench/few_shot.py`'s subsamples (the first 10 / 20 examples of every
           CLINC150 / Banking77 route), judged on CLINC150 val (with its oos messages) and on
           the Banking77 training examples left out, as `bench/few_shot_tiers.py` judges them

`collect` builds each split's lexical and embedding scorers once and saves, as numpy files
under --cache, what every variant needs: both halves' probabilities of the judged messages
and of the held-out calibration examples (the embedding's leave-one-out ones, and a trial
lexical scorer's trained without them, as `HybridScorer.build` scores them). `variants`
then mixes them many ways in seconds: weights, in probability or log space, each half at a
temperature scaled before mixing; each variant's floor is fitted on its own held-out
mixture, as the hybrid fits its own. Prints top-1 (in scope), in-scope decision accuracy,
OOS recall and menu rate per split at the split's built margin; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_tiers import MODEL, CachedEncoder  # noqa: E402

from routing_core import build_pack, build_pack_file, load_cases  # noqa: E402
from routing_core.scorers import RouteText, calibration, embedding, route_texts  # noqa: E402
from routing_core.scorers.lexical import LexicalScorer  # noqa: E402

DATA = ROOT.parent / "shared" / "datasets"
Matrix = npt.NDArray[np.float64]
Judged = list[tuple[str, str | None]]
TINY = 1e-12


def _fold(name: str) -> tuple[list[RouteText], Judged, float]:
    routes = json.loads((DATA / name / "routes.json").read_text())
    kept = [
        RouteText(r["name"], "", tuple(t for i, t in enumerate(r["examples"]) if i % 3 != 0))
        for r in routes
    ]
    judged: Judged = [
        (t, r["name"]) for r in routes for i, t in enumerate(r["examples"]) if i % 3 == 0
    ]
    margin = LexicalScorer.build(kept).info.details.get("fitted_margin") or 0.15
    return kept, judged, float(margin)


def _clinc_val() -> tuple[list[RouteText], Judged, float]:
    pack = build_pack_file(DATA / "clinc150" / "routes.json", slug="clinc150")
    val = load_cases(DATA / "clinc150" / "val.jsonl")
    return route_texts(pack), [(c.text, c.expected) for c in val], pack.policy.near_tie_margin


def _few(name: str, shots: int) -> tuple[list[RouteText], Judged, float]:
    """`bench/few_shot.py`'s subsample (the first `shots` examples of every route), judged
    on CLINC150 val with its oos messages, or on the training examples left out."""
    from few_shot import subsample

    train, judged, _ = subsample(DATA / name, shots)
    pack = build_pack(train, slug=f"{name}-{shots}")
    if name == "clinc150":
        judged = [(c.text, c.expected) for c in load_cases(DATA / name / "val.jsonl")]
    return route_texts(pack), list(judged), pack.policy.near_tie_margin


SPLITS: dict[str, tuple[str, Callable[[], tuple[list[RouteText], Judged, float]]]] = {
    "cval": ("clinc150", _clinc_val),
    "bf1": ("banking77", lambda: _fold("banking77")),
    "hf1": ("hwu64", lambda: _fold("hwu64")),
    "c10": ("clinc150", lambda: _few("clinc150", 10)),
    "c20": ("clinc150", lambda: _few("clinc150", 20)),
    "b10": ("banking77", lambda: _few("banking77", 10)),
    "b20": ("banking77", lambda: _few("banking77", 20)),
}


# The embedding aggregates besides the default ("mean") whose matrices `collect` saves.
AGGREGATES = ("max", "centroid")


ONLY = os.environ.get("HYBRID_DEV_SPLITS", "").split()
# HYBRID_DEV_HEAD=1: the embedding half learns its linear head (`_head`), and the matrices
# are saved as mats-head-<split>.npz, beside those without it.
HEAD = os.environ.get("HYBRID_DEV_HEAD") == "1"
PREFIX = "mats-head-" if HEAD else "mats-"


def collect(cache: Path) -> None:
    """Score each split's judged and held-out messages with both halves; save them."""
    real = embedding.load_encoder(MODEL)
    for split, (name, make) in SPLITS.items():
        if ONLY and split not in ONLY:
            continue
        encoder = CachedEncoder(real, cache / f"{name}.npz")
        routes, judged, margin = make()
        names = [r.name for r in routes]
        started = time.process_time()
        emb = embedding.EmbeddingScorer.build(routes, encoder, head=HEAD)
        spent = time.process_time() - started
        lexical = LexicalScorer.build(routes)
        held = emb.held_out
        assert held is not None
        trial = LexicalScorer.build(embedding._without(routes, held))
        texts = [t for t, _ in judged]
        others = {
            a: embedding.EmbeddingScorer.build(routes, encoder, a, head=HEAD) for a in AGGREGATES
        }
        aggregates = {}
        for a, scorer in others.items():
            assert scorer.held_out is not None and scorer.held_out.texts == held.texts
            aggregates[f"emb_{a}"] = _probabilities(scorer, texts)
            aggregates[f"held_emb_{a}"] = scorer.held_out.probabilities.astype(np.float64)
        np.savez(
            cache / f"{PREFIX}{split}.npz",
            labels=np.array([names.index(e) if e else -1 for _, e in judged]),
            lexical=_rows(lexical, texts, names),
            emb=_probabilities(emb, texts),
            held_labels=held.routes,
            held_lexical=_rows(trial, held.texts, names),
            held_emb=held.probabilities.astype(np.float64),
            **aggregates,
            margin=margin,
            temperature=emb.calibration.temperature,
        )
        encoder.save()
        print(
            split, len(texts), "judged,", len(held.texts), "held out;",
            f"embedding build {spent:.2f} s CPU", emb.info.details.get("head_weights"), flush=True,
        )  # fmt: skip


def _rows(scorer: LexicalScorer, texts: list[str] | tuple[str, ...], names: list[str]) -> Matrix:
    return np.array([scorer.score(t, names) for t in texts], np.float64)


def _probabilities(scorer: embedding.EmbeddingScorer, texts: list[str]) -> Matrix:
    return np.stack([np.asarray(scorer.probabilities(t), np.float64) for t in texts])


def _tempered(p: Matrix, k: float) -> Matrix:
    """softmax(k * log p): the same half at temperature T / k."""
    if k == 1.0:
        return p
    return calibration.softmax_rows(k * np.log(np.maximum(p, TINY)), 1.0)


def mix(emb: Matrix, lex: Matrix, w: float, space: str, k_emb: float, k_lex: float) -> Matrix:
    """The hybrid's scores: w of the embedding, in probability or log space (a product)."""
    e, x = _tempered(emb, k_emb), _tempered(lex, k_lex)
    if space == "prob":
        return w * e + (1.0 - w) * x
    return calibration.softmax_rows(embedding.mix(e, x, w), 1.0)


def judge(scores: Matrix, labels: npt.NDArray[np.int64], floor: float, margin: float) -> str:
    """Top-1, in-scope decision accuracy, OOS recall and menu rate, as the policy judges."""
    ordered = np.sort(scores, axis=1)
    top = scores.argmax(axis=1)
    alive = ordered[:, -1] > floor
    near = np.tanh((ordered[:, -1] - ordered[:, -2]) / 2) < margin
    menu = alive & (ordered[:, -2] > floor) & near
    ins = labels >= 0
    right = top[ins] == labels[ins]
    oos = f"{np.mean(~alive[~ins]):6.1%}" if (~ins).any() else "     —"
    return (
        f"{np.mean(right):7.2%} {np.mean((alive & ~menu)[ins] & right):7.2%} {oos} "
        f"{np.mean(menu):6.2%} f{floor:.3f}"
    )


VARIANTS: list[tuple[str, float, str, float, float]] = [
    *[(f"prob w {w}", w, "prob", 1.0, 1.0) for w in (0.4, 0.45, 0.5, 0.55, 0.6)],
    *[(f"prob w 0.5 emb T/{k}", 0.5, "prob", k, 1.0) for k in (0.5, 0.75, 1.5, 2.0)],
    *[(f"prob w 0.5 lex T/{k}", 0.5, "prob", 1.0, k) for k in (0.5, 0.75, 1.5, 2.0)],
    *[(f"log w {w}", w, "log", 1.0, 1.0) for w in (0.3, 0.4, 0.5, 0.6, 0.7)],
]


def _log_mix(parts: list[tuple[float, Matrix]]) -> Matrix:
    """Logits of a weighted product of the halves: sum of w * log p."""
    return sum(w * np.log(np.maximum(p, TINY)) for w, p in parts)  # type: ignore[return-value]


def fitted_log_variants(mats: dict[str, dict[str, Matrix]]) -> None:
    """Log-space mixtures whose temperature is fitted on the held-out mixture (log-loss with
    the calibration's prior centred on 1), as the embedding's own is."""
    mixes: list[tuple[str, list[tuple[float, str]]]] = [
        *[(f"log w {w} fitted T", [(w, "emb"), (1 - w, "lexical")]) for w in (0.4, 0.5, 0.6)],
        ("log w 0.5 centroid, fitted T", [(0.5, "emb_centroid"), (0.5, "lexical")]),
        ("log w 0.5 max, fitted T", [(0.5, "emb_max"), (0.5, "lexical")]),
        ("log .25 max .25 cen .5 lex, T", [(0.25, "emb_max"), (0.25, "emb_centroid"), (0.5, "lexical")]),
    ]  # fmt: skip
    for label, parts in mixes:
        cells = []
        for m in mats.values():
            held = _log_mix([(w, m[f"held_{k}"]) for w, k in parts])
            fitted = calibration.calibrate_logits(
                held, m["held_labels"], 1.0, embedding.MIXTURE_TEMPERATURES
            )
            scores = calibration.softmax_rows(
                _log_mix([(w, m[k]) for w, k in parts]), fitted.temperature
            )
            cells.append(
                judge(scores, m["labels"], fitted.floor or 0.0, float(m["margin"]))
                + f" T{fitted.temperature:.2f}"
            )
        print(f"{label:26s} " + " | ".join(cells), flush=True)


def variants(cache: Path) -> None:
    """Every variant on every collected split, one line each."""
    mats = {
        s: dict(np.load(cache / f"{PREFIX}{s}.npz"))
        for s in SPLITS
        if (cache / f"{PREFIX}{s}.npz").exists() and (not ONLY or s in ONLY)
    }
    print("load average", os.getloadavg())
    print(f"{'variant':26s} " + " | ".join(f"{s}: top-1 in-scope oos menus floor" for s in mats))
    for label, w, space, k_emb, k_lex in VARIANTS:
        cells = []
        for m in mats.values():
            held = mix(m["held_emb"], m["held_lexical"], w, space, k_emb, k_lex)
            floor = calibration.fit_floor(held) or 0.0
            scores = mix(m["emb"], m["lexical"], w, space, k_emb, k_lex)
            cells.append(judge(scores, m["labels"], floor, float(m["margin"])))
        print(f"{label:26s} " + " | ".join(cells), flush=True)
    fitted_log_variants(mats)
    fitted_weight_variants(mats)
    aggregate_variants(mats)
    fitted_product_variants(mats)


PRODUCTS: list[tuple[str, ...]] = [
    ("emb", "lexical"),
    ("emb_max", "emb_centroid", "lexical"),
    ("emb", "emb_max", "emb_centroid", "lexical"),
]


def fitted_product_variants(mats: dict[str, dict[str, Matrix]]) -> None:
    """A product of several embedding aggregates and the lexical half, every weight fitted
    per split on the held-out texts (`calibration.fit_weights`, start: the embedding's half
    shared evenly), then T, floor and margin fitted on the held-out product."""
    for keys in PRODUCTS:
        cells = []
        for m in mats.values():
            held = [m[f"held_{k}"] for k in keys]
            live = np.all([h.any(axis=1) for h in held], axis=0)
            start = [0.5 / (len(keys) - 1)] * (len(keys) - 1) + [0.5]
            theta = calibration.fit_weights(
                [_logs(h[live]) for h in held], m["held_labels"][live], start
            )
            weights = theta / theta.sum()
            logits = _log_mix(list(zip(weights, held, strict=True)))
            fitted = calibration.calibrate_logits(
                logits[live], m["held_labels"][live], 1.0, embedding.MIXTURE_TEMPERATURES
            )
            judged = _log_mix(list(zip(weights, [m[k] for k in keys], strict=True)))
            scores = calibration.softmax_rows(judged, fitted.temperature)
            cells.append(
                judge(scores, m["labels"], fitted.floor or 0.0, float(m["margin"]))
                + " w"
                + ",".join(f"{w:.2f}" for w in weights)
            )
        print(f"{'+'.join(k.removeprefix('emb_') for k in keys):26s} " + " | ".join(cells))


def aggregate_variants(mats: dict[str, dict[str, Matrix]]) -> None:
    """Each embedding aggregate alone (its fitted floor) and in the product at w 0.5."""
    for key in ("emb", *(f"emb_{a}" for a in AGGREGATES)):
        alone, product = [], []
        for m in mats.values():
            floor = calibration.fit_floor(m[f"held_{key}"]) or 0.0
            alone.append(judge(m[key], m["labels"], floor, float(m["margin"])))
            held = embedding.mix(m[f"held_{key}"], m["held_lexical"], 0.5)
            live = np.isfinite(held).any(axis=1)
            fitted = calibration.calibrate_logits(
                held[live], m["held_labels"][live], 1.0, embedding.MIXTURE_TEMPERATURES
            )
            scores = calibration.softmax_rows(
                embedding.mix(m[key], m["lexical"], 0.5), fitted.temperature
            )
            product.append(judge(scores, m["labels"], fitted.floor or 0.0, float(m["margin"])))
        print(f"{key + ' alone':26s} " + " | ".join(alone), flush=True)
        print(f"{key + ' product w 0.5':26s} " + " | ".join(product), flush=True)


def _logs(p: Matrix) -> Matrix:
    return np.log(np.maximum(p, TINY))


def fitted_weight_variants(mats: dict[str, dict[str, Matrix]]) -> None:
    """The embedding's weight fitted per split on its held-out texts (log-loss of the
    product, `calibration.fit_weights`), then T, floor and margin as the hybrid fits them."""
    for emb_key in ("emb", *(f"emb_{a}" for a in AGGREGATES)):
        cells = []
        for m in mats.values():
            held_e, held_x = m[f"held_{emb_key}"], m["held_lexical"]
            live = held_e.any(axis=1) & held_x.any(axis=1)
            found = embedding.fit_weight(held_e[live], held_x[live], m["held_labels"][live])
            w = embedding.HYBRID_WEIGHT if found is None else found  # as HybridScorer.build
            held = embedding.mix(held_e, held_x, w)
            fitted = calibration.calibrate_logits(
                held[live], m["held_labels"][live], 1.0, embedding.MIXTURE_TEMPERATURES
            )
            scores = calibration.softmax_rows(
                embedding.mix(m[emb_key], m["lexical"], w), fitted.temperature
            )
            cells.append(
                judge(scores, m["labels"], fitted.floor or 0.0, float(m["margin"]))
                + f" w{w:.2f} T{fitted.temperature:.2f}"
            )
        print(f"{'fitted w, ' + emb_key:26s} " + " | ".join(cells), flush=True)


def cost(cache: Path) -> None:
    """CPU time of the CLINC150 hybrid's build (vectors cached, i.e. without the encoding)
    and of scoring a val message with both halves (without the encode), median of 3."""
    real = embedding.load_encoder(MODEL)
    encoder = CachedEncoder(real, cache / "clinc150.npz")
    routes, judged, _ = _clinc_val()
    names = [r.name for r in routes]
    started = time.process_time()
    emb = embedding.EmbeddingScorer.build(routes, encoder, head=HEAD)
    print(f"embedding build {time.process_time() - started:.2f} s CPU (head: {HEAD})")
    texts = [t for t, _ in judged[:1000]]
    builds, turns = [], []
    for _ in range(3):
        start = time.process_time()
        hybrid = embedding.HybridScorer.build(routes, emb, fit=True)
        builds.append(time.process_time() - start)
        start = time.process_time()
        for text in texts:
            hybrid.score(text, names)
        turns.append((time.process_time() - start) / len(texts) * 1000)
    print(
        f"hybrid build {statistics.median(builds):.2f} s CPU, scoring {statistics.median(turns):.2f}"
        f" ms CPU a message (cached vectors), weight {hybrid.info.details['embedding_weight']},"
        f" load average {os.getloadavg()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("step", choices=("collect", "variants", "cost"))
    parser.add_argument("--cache", default="/tmp/rs-emb")
    args = parser.parse_args()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    {"collect": collect, "variants": variants, "cost": cost}[args.step](cache)


if __name__ == "__main__":
    main()
