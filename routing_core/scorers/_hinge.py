"""A second, differently trained model inside the lexical one: a squared hinge on 3-grams.

The lexical model (`_model.py`) is naive Bayes plus a softmax correction. Every variant of
that one family plateaued (docs/lab/benchmarks.md); what gained on every development
split was adding a *differently trained* linear model, a one-vs-rest linear SVM with
per-route intercepts (scikit-learn's liblinear), to its logits. Most of that gain comes
from the SVM on the character 3-grams alone, and it needs the intercepts.

This is that model, cheap enough for a playground's rebuild: the squared hinge
one-vs-rest (the loss of scikit-learn's `LinearSVC`) on the corpus's character 3-grams,
their block scaled to unit norm on average, with an intercept per route, learned by
momentum SGD for a fixed number of mini-batch steps (about 0.4 s at CLINC150 size) instead
of to convergence: stopping early is its only regularisation. Its weights live on the
same terms as the model's, so they are folded into the model's weight matrix (and its
intercepts into the model's `bias`): scoring stays one sparse product, and a stored pack
needs no second vocabulary, no solver and no scikit-learn to load.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from routing_core._types import Float32Array
from routing_core.scorers._corpus import Batch, Corpus, corpus_logits, make_batches, select

# The character n-gram sizes the hinge learns (3-5 gained no more than 3 alone, at twice
# the cost; chosen on CLINC150 val, 3-fold CV folds and the 10-per-route subsamples).
SIZES = (3,)
# Mini-batch steps (whole passes, at least one) without the texts held out for the
# temperature, then over every text: with one last pass only, the held-out tenth was barely
# learned (HWU64 fold 1 87.05 vs 87.29% at 150 steps). 600 + 150 steps cost about 0.4 s at
# CLINC150 size; 1,200 gained nothing more.
STEPS = 600
FINAL_STEPS = 150
RATE = 1.0
# The intercepts learn at this share of RATE: at the full rate they swing past the weights
# while every route starts at -1 for all but its own texts (a pack of 10 per route fell apart).
BIAS_SHARE = 0.05
MOMENTUM = 0.9
# Its scores join the model's calibrated logits at this weight (in units of those logits).
WEIGHT = 1.0


class Hinge:
    """One-vs-rest squared-hinge regression on the corpus's 3-grams, with intercepts.

    Successive `fit` calls continue the same weights and momentum, as `_model._Correction`'s.
    """

    def __init__(self, corpus: Corpus, n_routes: int):
        is_size = np.isin(corpus.char_sizes, SIZES)
        keep = is_size[corpus.ids]
        self.terms = np.flatnonzero(is_size)
        row_of = np.full(corpus.n_terms, -1, np.int64)
        row_of[self.terms] = np.arange(len(self.terms))
        rows, values = corpus.rows[keep], corpus.values[keep]
        norms = np.sqrt(np.bincount(rows, values.astype(np.float64) ** 2))
        # One scale for every text (not each text's own norm), so that the learned weights
        # fold into the model's weights exactly.
        self.scale = float(1.0 / norms[norms > 0].mean()) if (norms > 0).any() else 1.0
        self.corpus = Corpus(
            rows,
            row_of[corpus.ids[keep]],
            (values * np.float32(self.scale)).astype(np.float32),
            corpus.routes,
            len(self.terms),
            corpus.char_sizes[self.terms],
        )
        self.weights = np.zeros((len(self.terms), n_routes), np.float32)
        self.velocity = np.zeros_like(self.weights)
        self.bias = np.zeros(n_routes, np.float32)
        self.bias_velocity = np.zeros(n_routes, np.float32)

    def fit(self, docs: npt.NDArray[np.bool_], steps: int, seed: int) -> None:
        """At least `steps` mini-batch steps (whole passes) over the texts `docs`."""
        train = select(self.corpus, docs)
        batches = make_batches(train) if train.n_docs and self.weights.shape[1] >= 2 else []
        if not batches:
            return
        order = np.random.default_rng(seed)
        for _ in range(max(1, math.ceil(steps / len(batches)))):
            for index in order.permutation(len(batches)):
                self._step(batches[index], train.routes)

    def logits(self, docs: npt.NDArray[np.bool_]) -> Float32Array:
        """The hinge's scores of the texts `docs` over every route."""
        return corpus_logits(self.weights, select(self.corpus, docs)) + self.bias

    def add_to(self, weights: Float32Array, bias: Float32Array, factor: float) -> None:
        """Add `factor` times the hinge's scores to a model's `weights` and `bias`, in place."""
        weights[self.terms] += np.float32(factor * self.scale) * self.weights
        bias += np.float32(factor) * self.bias

    def _step(self, batch: Batch, routes: npt.NDArray[np.int64]) -> None:
        """One momentum-SGD step of the mean squared hinge (targets +1 own route, -1 others)."""
        active = np.take(self.weights, batch.terms, axis=0)
        scores = batch.matrix @ active
        scores += self.bias
        signs = np.full(scores.shape, -1.0, np.float32)
        signs[np.arange(len(batch.docs)), routes[batch.docs]] = 1.0
        slack = np.maximum(1.0 - signs * scores, 0.0)
        error = (-2.0 / len(batch.docs)) * signs * slack
        moved = np.take(self.velocity, batch.terms, axis=0)
        moved *= MOMENTUM
        moved += batch.transposed @ error
        self.velocity[batch.terms] = moved
        self.weights[batch.terms] = active - RATE * moved
        self.bias_velocity *= MOMENTUM
        self.bias_velocity += error.sum(axis=0)
        self.bias -= RATE * BIAS_SHARE * self.bias_velocity
