"""A trained linear head on the frozen sentence vectors, on development splits only.
Needs `hybrid_dev.py collect` run first (its matrices: the lexical
half of each split and the labels), and the same vector cache.

Usage:
    OMP_NUM_THREADS=1 .venv-embed/bin/python bench/head_dev.py [--cache DIR]

For each split of `hybrid_dev.py`: the embedding's cosines (the default mean aggregate) of
the judged messages and, leave-one-out, of the held-out examples; a head trained without the
held-out examples scores those, one trained on every text scores the judged messages (as the
build would ship it). Each variant fits its temperature / weights / floor on the held-out
examples only, then is judged at the split's built margin. Prints top-1 / in-scope / OOS /
menus per split; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_tiers import MODEL, CachedEncoder  # noqa: E402
from hybrid_dev import ONLY, SPLITS, judge  # noqa: E402

from routing_core.scorers import calibration, embedding  # noqa: E402

Matrix = npt.NDArray[np.float64]
TINY = 1e-12


def _held_indexes(routes: list) -> list[int]:
    held, n = [], 0
    for route in routes:
        examples = embedding._held_examples(route)
        for j, _ in enumerate(embedding._texts(route)):
            if j in examples:
                held.append(n)
            n += 1
    return held


def _cosines(emb: embedding.EmbeddingScorer, queries: npt.NDArray[np.float32]) -> Matrix:
    out = []
    for start in range(0, len(queries), 256):
        q = queries[start : start + 256]
        best = np.maximum.reduceat(q @ emb._vectors.T, emb._starts, axis=1)
        centroid = q @ emb._centroids.T
        out.append((best + centroid) * 0.5)
    return np.concatenate(out).astype(np.float64)


def _features(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    return np.hstack([x, np.ones((len(x), 1), np.float32)])


def _start(
    x: npt.NDArray[np.float32],
    whiten: npt.NDArray[np.float32] | None,
    k: int,
    start: npt.NDArray[np.float32] | None = None,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float32], float]:
    """Features, starting weights, zero velocity, and the top eigenvalue of F'F / n."""
    f = _features(x if whiten is None else x @ whiten)
    w = np.zeros((f.shape[1], k), np.float32) if start is None else start.copy()
    return f, w, np.zeros_like(w), float(np.linalg.eigvalsh((f.T @ f) / len(f)).max())


def _softmax(z: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


def train_softmax(
    x: npt.NDArray[np.float32],
    y: npt.NDArray[np.int64],
    k: int,
    l2: float,
    epochs: int,
    whiten: npt.NDArray[np.float32] | None,
    start: npt.NDArray[np.float32] | None = None,
) -> npt.NDArray[np.float32]:
    """Softmax regression, full-batch Nesterov GD on (whitened) features + bias."""
    f, w, v, lam = _start(x, whiten, k, start)
    n = len(f)
    onehot = np.zeros((n, k), np.float32)
    onehot[np.arange(n), y] = 1.0
    rate = 1.0 / (0.5 * lam + l2)  # 1 / the gradient's Lipschitz bound
    for _ in range(epochs):
        look = w + 0.9 * v
        grad = f.T @ (_softmax(f @ look) - onehot) / n + l2 * look
        v = 0.9 * v - rate * grad
        w = w + v
    return w


def train_softmax_batches(
    x: npt.NDArray[np.float32],
    y: npt.NDArray[np.int64],
    k: int,
    l2: float,
    epochs: int,
    whiten: npt.NDArray[np.float32] | None,
    batch: int = 256,
    start: npt.NDArray[np.float32] | None = None,
    rate_scale: float = 1.0,
) -> npt.NDArray[np.float32]:
    """Softmax regression, mini-batch momentum SGD, fixed seed, on (whitened) features."""
    f, w, v, lam = _start(x, whiten, k, start)
    n = len(f)
    rate = rate_scale * 0.1 / (0.5 * lam + l2)
    rng = np.random.default_rng(7)
    for _ in range(epochs):
        order = rng.permutation(n)
        for s in range(0, n, batch):
            rows = order[s : s + batch]
            fb = f[rows]
            p = _softmax(fb @ w)
            p[np.arange(len(rows)), y[rows]] -= 1.0
            grad = fb.T @ p / len(rows) + l2 * w
            v = 0.9 * v - rate * grad
            w = w + v
    return w


def train_ridge(
    x: npt.NDArray[np.float32], y: npt.NDArray[np.int64], k: int, l2: float
) -> npt.NDArray[np.float32]:
    """Least squares on one-hot targets (+1 own, 0 else) with an L2 penalty: closed form."""
    f = _features(x).astype(np.float64)
    n, d = f.shape
    onehot = np.zeros((n, k))
    onehot[np.arange(n), y] = 1.0
    gram = f.T @ f / n + l2 * np.eye(d)
    return np.linalg.solve(gram, f.T @ onehot / n).astype(np.float32)


def train_hinge(
    x: npt.NDArray[np.float32],
    y: npt.NDArray[np.int64],
    k: int,
    l2: float,
    epochs: int,
    whiten: npt.NDArray[np.float32] | None,
) -> npt.NDArray[np.float32]:
    """One-vs-rest squared hinge (+1 own, -1 else), full-batch Nesterov GD."""
    f, w, v, lam = _start(x, whiten, k)
    n = len(f)
    signs = -np.ones((n, k), np.float32)
    signs[np.arange(n), y] = 1.0
    rate = 1.0 / (2.0 * lam + l2)
    for _ in range(epochs):
        look = w + 0.9 * v
        slack = np.maximum(1.0 - signs * (f @ look), 0.0)
        grad = f.T @ (-2.0 * signs * slack) / n + l2 * look
        v = 0.9 * v - rate * grad
        w = w + v
    return w


def whitening(x: npt.NDArray[np.float32], eps: float) -> npt.NDArray[np.float32]:
    cov = np.cov(x.astype(np.float64), rowvar=False)
    vals, vecs = np.linalg.eigh(cov)
    return (vecs / np.sqrt(vals + eps)).astype(np.float32) @ vecs.T.astype(np.float32)


def head_logits(
    w: npt.NDArray[np.float32], x: npt.NDArray[np.float32], white: npt.NDArray[np.float32] | None
) -> Matrix:
    return (_features(x if white is None else x @ white) @ w).astype(np.float64)


def _logs(p: Matrix) -> Matrix:
    return np.log(np.maximum(p, TINY))


def _calibrated(
    held: Matrix,
    labels: npt.NDArray[np.int64],
    judged: Matrix,
    default: float,
    bounds: tuple[float, float],
) -> tuple[Matrix, Matrix, calibration.Calibration]:
    fitted = calibration.calibrate_logits(held, labels, default, bounds)
    return (
        calibration.softmax_rows(held, fitted.temperature),
        calibration.softmax_rows(judged, fitted.temperature),
        fitted,
    )


def hybrid(held_e: Matrix, judged_e: Matrix, m: dict[str, Matrix]) -> str:
    """As HybridScorer.build(fit=True): w fitted, then T and floor on the held-out mixture."""
    held_x, labels = m["held_lexical"], m["held_labels"]
    live = held_e.any(axis=1) & held_x.any(axis=1)
    found = embedding.fit_weight(held_e[live], held_x[live], labels[live])
    w = embedding.HYBRID_WEIGHT if found is None else found
    logits = embedding.mix(held_e, held_x, w)
    live = np.isfinite(logits).any(axis=1)
    fitted = calibration.calibrate_logits(
        logits[live], labels[live], 1.0, embedding.MIXTURE_TEMPERATURES
    )
    scores = calibration.softmax_rows(embedding.mix(judged_e, m["lexical"], w), fitted.temperature)
    return judge(scores, m["labels"], fitted.floor or 0.0, float(m["margin"])) + f" w{w:.2f}"


def three_way(
    held_c: Matrix, judged_c: Matrix, held_h: Matrix, judged_h: Matrix, m: dict[str, Matrix]
) -> str:
    """Product of cosine probs, head probs and lexical, three weights fitted on held-out."""
    held = [held_c, held_h, m["held_lexical"]]
    judged = [judged_c, judged_h, m["lexical"]]
    labels = m["held_labels"]
    live = np.all([h.any(axis=1) for h in held], axis=0)
    theta = calibration.fit_weights([_logs(h[live]) for h in held], labels[live], [0.25, 0.25, 0.5])
    weights = theta / theta.sum()
    logits = sum(w * _logs(h) for w, h in zip(weights, held, strict=True))
    fitted = calibration.calibrate_logits(
        logits[live], labels[live], 1.0, embedding.MIXTURE_TEMPERATURES
    )
    scores = calibration.softmax_rows(
        sum(w * _logs(h) for w, h in zip(weights, judged, strict=True)), fitted.temperature
    )
    return (
        judge(scores, m["labels"], fitted.floor or 0.0, float(m["margin"]))
        + " w"
        + ",".join(f"{w:.2f}" for w in weights)
    )


def added(
    held_c: Matrix,
    judged_c: Matrix,
    held_h: Matrix,
    judged_h: Matrix,
    labels: npt.NDArray[np.int64],
    t0: float,
) -> tuple[Matrix, Matrix, str]:
    """Cosine logits plus head logits, both weights fitted on held-out (fit_weights), then
    T and floor on the held-out sum."""
    theta = calibration.fit_weights([held_c, held_h], labels, [1.0 / t0, 1.0])
    held = theta[0] * held_c + theta[1] * held_h
    judged = theta[0] * judged_c + theta[1] * judged_h
    hp, jp, fitted = _calibrated(held, labels, judged, 1.0, embedding.MIXTURE_TEMPERATURES)
    return hp, jp, f" th{theta[0]:.1f},{theta[1]:.2f} f{fitted.floor or 0:.3f}"


def _train(
    kind: str,
    x: npt.NDArray[np.float32],
    y: npt.NDArray[np.int64],
    k: int,
    l2: float,
    epochs: int,
    wh: npt.NDArray[np.float32] | None,
    rate_scale: float,
) -> npt.NDArray[np.float32]:
    """The head a spec names: batch* (mini-batch), soft* (full batch), hinge*, ridge."""
    if kind.startswith("batch"):
        return train_softmax_batches(x, y, k, l2, epochs, wh, rate_scale=rate_scale)
    if kind.startswith("soft"):
        return train_softmax(x, y, k, l2, epochs, wh)
    if kind.startswith("hinge"):
        return train_hinge(x, y, k, l2, epochs, wh)
    return train_ridge(x, y, k, l2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", default="/tmp/rs-emb")
    parser.add_argument("--heads", default="soft")
    args = parser.parse_args()
    cache = Path(args.cache)
    real = embedding.load_encoder(MODEL)
    print("load average", os.getloadavg(), time.strftime("%H:%M:%S"), flush=True)
    rows: dict[str, list[str]] = {}
    for split, (name, make) in SPLITS.items():
        if ONLY and split not in ONLY:
            continue
        m = dict(np.load(cache / f"mats-{split}.npz"))
        encoder = CachedEncoder(real, cache / f"{name}.npz")
        routes, judged, _ = make()
        emb = embedding.EmbeddingScorer.build(routes, encoder)
        n_routes = len(routes)
        held_all = np.asarray(_held_indexes(routes), np.int64)
        held_c, kept = emb._held_out_cosines(held_all)
        labels = emb._owners[kept]
        assert np.array_equal(labels, m["held_labels"]), split
        queries = encoder.encode([t for t, _ in judged])
        judged_c = _cosines(emb, queries)
        t0 = emb.calibration.temperature
        held_cp = calibration.softmax_rows(held_c, t0)
        judged_cp = calibration.softmax_rows(judged_c, t0)
        assert np.allclose(judged_cp, m["emb"], atol=1e-4), split
        x, y = emb._vectors, emb._owners
        train = np.ones(len(x), bool)
        train[held_all] = False
        out = rows.setdefault(split, [])

        def add(label: str, cell: str, out: list[str] = out) -> None:
            out.append(f"{label:34s} {cell}")

        add(
            "cosine alone (before)",
            judge(judged_cp, m["labels"], emb.calibration.floor or 0, float(m["margin"])),
        )
        add("hybrid, cosine half (before)", hybrid(held_cp, judged_cp, m))
        for spec in args.heads.split(","):
            kind, *params = spec.split(":")
            l2 = float(params[0]) if params else 1e-4
            epochs = int(params[1]) if len(params) > 1 else 100
            eps = float(params[2]) if len(params) > 2 else 1e-3
            wh = whitening(x, eps) if "w" in kind else None
            started = time.process_time()
            rs = float(params[3]) if len(params) > 3 else 1.0
            if kind.startswith("ridge"):
                wh = None
            w_held = _train(kind, x[train], y[train], n_routes, l2, epochs, wh, rs)
            if kind.endswith("f"):  # finish: continue the held head on every text
                w_all = train_softmax(x, y, n_routes, l2, max(1, epochs // 4), wh, w_held)
            else:
                w_all = _train(kind, x, y, n_routes, l2, epochs, wh, rs)
            spent = time.process_time() - started
            held_h = head_logits(w_held, x[kept], wh)
            judged_h = head_logits(w_all, queries, wh)
            hp, jp, fitted = _calibrated(held_h, labels, judged_h, 1.0, (1e-3, 100.0))
            add(
                f"{spec} alone ({spent:.2f}s)",
                judge(jp, m["labels"], fitted.floor or 0, float(m["margin"]))
                + f" T{fitted.temperature:.3g}",
            )
            add(f"{spec} in hybrid as emb half", hybrid(hp, jp, m))
            shp, sjp, note = added(held_c, judged_c, held_h, judged_h, labels, t0)
            floor = calibration.fit_floor(shp) or 0.0
            add(f"{spec} + cosine alone", judge(sjp, m["labels"], floor, float(m["margin"])) + note)
            add(f"{spec} + cosine in hybrid", hybrid(shp, sjp, m))
            add(f"{spec} 3-way product", three_way(held_cp, judged_cp, hp, jp, m))
        print(f"== {split}", flush=True)
        print("\n".join(out), flush=True)
    print("load average", os.getloadavg(), time.strftime("%H:%M:%S"))


if __name__ == "__main__":
    main()
