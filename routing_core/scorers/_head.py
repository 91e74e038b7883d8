"""A trained linear head on the frozen sentence vectors, added to the embedding's cosines.

The embedding tier scores a route by the cosine of the message with its texts: nothing is
learned, so two routes whose texts sit close in the encoder's space stay close however many
examples tell them apart. The head is softmax regression on the route texts' vectors (one
weight vector and an intercept per route), learned at compile time where the vectors are
already encoded; its logits join the cosine logits, each at a weight fitted on held-out
texts (`EmbeddingScorer`; docs/lab/benchmarks.md, "A trained head on the sentence vectors").

Learned by full-batch Nesterov gradient descent for a fixed number of passes (no seed, no
order: the same texts give the same head), on features first rescaled by a shrunk
whitening of the texts' covariance, (C + SHRINK·I)^(-1/2): the vectors of one encoder share
a few strong directions, and without it gradient descent learns little else in the passes
it is given. Stopping early is the head's regularisation. The rescaling and the weights are
folded into one (dimensions x routes) matrix, so a turn costs one more small product.
Pure numpy: no torch, no scikit-learn.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from routing_core._types import Float32Array, IntArray

# Passes over the texts without the held-out ones (whose scores fit the weights), then over
# every text, continuing the same weights (as the lexical build finishes: `_model.py`).
# Chosen on dev splits (CLINC150 val, Banking77 and HWU64 folds, 10 and 20 per route): 40 to
# 60 gave the same picture, 30 too little; each pass at CLINC150 size costs about 37 ms.
EPOCHS = 50
FINAL_EPOCHS = 12
# Added to the covariance's eigenvalues before the inverse square root: at 1e-3 the head
# alone was better on CLINC150 val and worse on the few-shot subsamples; 1e-2 (ten times a
# typical eigenvalue of these vectors) was the better of the two on most dev splits.
SHRINK = 1e-2
MOMENTUM = 0.9
# A weight decay so small that it only keeps the weights finite (0.01 to 0.0001 trained the
# same heads in these passes).
DECAY = 1e-3
# The head is trained only while texts x routes stays under this (CLINC150: 15,000 x 150 is
# 2.25 M): a 2,000-route pack of 40,000 texts would spend a minute and more on it, and keeps
# the cosines alone.
MAX_CELLS = 4_000_000


def affordable(n_texts: int, n_routes: int) -> bool:
    """Whether a pack of this size learns a head (texts x routes within MAX_CELLS)."""
    return n_texts * n_routes <= MAX_CELLS


class Head:
    """Softmax regression on the vectors; `logits(vectors)` scores texts over every route."""

    def __init__(self, vectors: Float32Array, routes: IntArray, n_routes: int) -> None:
        """The rescaling from every text's vectors; nothing is learned yet (`fit`)."""
        self.n_routes = n_routes
        covariance = np.cov(vectors.astype(np.float64), rowvar=False)
        values, vecs = np.linalg.eigh(np.atleast_2d(covariance))
        self.scale = ((vecs / np.sqrt(np.maximum(values, 0.0) + SHRINK)) @ vecs.T).astype(
            np.float32
        )
        self.vectors, self.routes = vectors, routes
        self.weights = np.zeros((vectors.shape[1] + 1, n_routes), np.float32)

    def fit(self, docs: npt.NDArray[np.bool_], epochs: int) -> None:
        """`epochs` full-batch passes over the texts `docs`, from the current weights."""
        features = _features(self.vectors[docs], self.scale)
        n = len(features)
        if n == 0 or self.n_routes < 2:
            return
        targets = np.zeros((n, self.n_routes), np.float32)
        targets[np.arange(n), self.routes[docs]] = 1.0
        # 1 / the gradient's Lipschitz bound (a softmax's Hessian is at most half the identity)
        top = float(np.linalg.eigvalsh((features.T @ features).astype(np.float64) / n).max())
        rate = np.float32(1.0 / (0.5 * top + DECAY))
        velocity = np.zeros_like(self.weights)
        for _ in range(epochs):
            ahead = self.weights + np.float32(MOMENTUM) * velocity
            z = features @ ahead
            z -= z.max(axis=1, keepdims=True)
            np.exp(z, out=z)
            z /= z.sum(axis=1, keepdims=True)
            z -= targets
            gradient = (features.T @ z) * np.float32(1.0 / n) + np.float32(DECAY) * ahead
            velocity *= np.float32(MOMENTUM)
            velocity -= rate * gradient
            self.weights += velocity

    def logits(self, vectors: Float32Array) -> Float32Array:
        """The head's scores of `vectors` (rows) over every route."""
        out: Float32Array = _features(vectors, self.scale) @ self.weights
        return out

    def folded(self) -> tuple[Float32Array, Float32Array]:
        """(matrix, intercepts): logits = vectors @ matrix + intercepts, the rescaling folded in."""
        matrix = (self.scale @ self.weights[:-1]).astype(np.float32)
        return matrix, self.weights[-1].copy()


def _features(vectors: Float32Array, scale: Float32Array) -> Float32Array:
    """The vectors rescaled, plus a constant column: the intercepts learn as one more weight."""
    rescaled = np.asarray(vectors, np.float32) @ scale
    return np.hstack([rescaled, np.ones((len(rescaled), 1), np.float32)])
