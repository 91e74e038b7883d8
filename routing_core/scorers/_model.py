"""How the lexical scorer learns: naive Bayes, a discriminative word correction, a temperature.

Three closed or nearly closed steps over the sparse TF-IDF corpus (one row per route text):

1. Naive Bayes: a smoothed log-likelihood of every term under every route (closed form).
2. A correction on the word terms (stems and bigrams) and the character 3-grams, trained
   discriminatively: a few epochs of mini-batch softmax regression (with an additive margin:
   it keeps pushing until the right route leads clearly, as an SVM does) whose logits start from
   the naive-Bayes logits of each text *held out from its own counts* (leave-one-out, exact
   and cheap), so the correction learns what naive Bayes gets wrong on unseen text rather
   than on text it has memorised. The 3-grams learn at a higher rate than the words (their
   values are much smaller: many of them share one normalised block); the 4- and 5-grams
   stay naive-Bayes only (as good on CLINC150 val and banking77 folds, at twice the cost).
   Only a pack with enough texts to calibrate on (below) learns the 3-grams: from a handful
   of examples they learn accidents of spelling.
3. A temperature fitted on texts the correction has not seen yet: the first epochs leave
   every tenth text out, the temperature is fitted on those texts, and the last epoch learns
   from every text, continuing the same weights. One pass instead of a trial correction and
   a kept one: the same calibration (ECE) at half the cost.

Everything is numpy, deterministic (fixed seeds, fixed order) and sized for a playground
that rebuilds on every edit: a CLINC150-size profile (15,000 texts, 150 routes) takes about
2.5-3.5 s of CPU alone on a 2-core machine, depending on the machine (docs/benchmarks.md); a
small profile trains for at least MIN_HELD_STEPS steps and takes a fraction of a second.
Built packs store the result (`stored.py`), so loading one does not train.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]

# Additive smoothing of the per-route term distributions, in units of one normalised text.
SMOOTHING = 0.03
# The naive-Bayes logits enter the final model scaled by this: it keeps them from
# overruling the discriminative correction (chosen on CLINC150 val and banking77 folds).
NB_SCALE = 0.5
# Mini-batch softmax regression of the correction: HELD_EPOCHS without the held-out texts,
# then FINAL_EPOCHS over every text.
HELD_EPOCHS = 4
FINAL_EPOCHS = 1
BATCH = 256
# ... and at least this many steps before the last epoch, in a pack big enough to calibrate:
# ten examples per route make a handful of batches, so four passes would be a few dozen
# steps and leave the correction barely trained (10-shot sets gained 1-3 points; see
# docs/benchmarks.md).
MIN_HELD_STEPS = 200
LEARNING_RATE = 20.0
# Character n-grams of these sizes are learned by the correction too, at CHAR_RATE times the
# words' learning rate (chosen on CLINC150 val and banking77 folds).
CORRECTED_CHAR_SIZES = (3,)
CHAR_RATE = 8.0
MOMENTUM = 0.9
# Additive margin: while learning, each text's own route scores this much less than it does,
# so a step keeps pushing until the right route leads by about MARGIN rather than stopping
# as soon as it leads at all (the "large margin" a linear SVM has and plain softmax
# regression lacks). Chosen on CLINC150 val and 3-fold CV of CLINC150, banking77 and HWU64
# train (0.7-1.5 all gain about +0.1 point; neutral with 10 or 30 examples per route).
# Only a pack big enough to calibrate learns with it: with temperature 1, nothing would
# temper the confidence a margin adds (on the studio tests' three routes of a dozen texts,
# an out-of-scope message rose from 0.67 to 0.75, past the floor meant to stop it).
MARGIN = 1.0
SEED = 7
# Every HOLD_OUT-th text is kept out of a trial correction to fit the temperature on; a
# pack with fewer held-out texts than MIN_CALIBRATION keeps temperature 1.
HOLD_OUT = 10
MIN_CALIBRATION = 20
# The default floor refuses this share of held-out in-scope texts (`fit_floor`). Chosen on
# CLINC150 val, the one shared set with out-of-scope messages: 0.025-0.045 all keep in-scope
# accuracy >= 90% with out-of-scope recall >= 60%, with or without out-of-scope examples
# (docs/benchmarks.md). Held-out texts come from the examples, so they are surer than real
# traffic: the floor that 3% of them fall under holds 4.2% of CLINC150 val's in-scope ones.
FLOOR_REFUSED = 0.03
# ... but never above this calibrated probability: on examples made from a few templates
# every held-out text is near certain, and a floor near 1 would refuse plain paraphrases.
FLOOR_CAP = 0.7
# The default near-tie margin offers a menu to about this share of the held-out in-scope
# texts the floor keeps (`fit_margin`), and is never wider than DESIGN's 0.15. At 0.15 a
# profile of 10-20 examples per route offered a menu on 16% of dev-fold messages (HWU64
# 10-shot: in-scope accuracy 61.7% vs 71.1% without menus); chosen on dev folds of the
# training splits (docs/benchmarks.md).
MENU_SHARE = 0.02
MARGIN_CAP = 0.15
# So a pack calibrates from this many texts on (with two routes or more).
CALIBRATION_TEXTS = HOLD_OUT * MIN_CALIBRATION
# Rows scored at once when scoring the whole corpus (bounds the temporary memory).
CHUNK = 64  # small chunks stay in cache: 6x faster than 1024 on CLINC150
# Inside a training step, rows (forward) and terms (gradient) are reduced in chunks of this
# many, for the same reason: about 2x faster per step than whole batches.
STEP_CHUNK = 48


@dataclass(frozen=True, slots=True)
class Corpus:
    """Training texts as a sparse matrix in row order (CSR triplets) plus each text's route."""

    rows: IntArray
    ids: IntArray
    values: FloatArray
    routes: IntArray
    n_terms: int
    char_sizes: IntArray  # per term: 0 for a word term, n for a character n-gram

    @property
    def n_docs(self) -> int:
        return len(self.routes)


@dataclass(frozen=True, slots=True)
class Model:
    """The learned weights (terms x routes, centred per term) and the score temperature.

    `calibrated`: the temperature was fitted on held-out texts (the pack was big enough).
    `floor`: the out-of-scope floor fitted on those texts (`fit_floor`); None when uncalibrated.
    `margin`: the near-tie margin fitted on them (`fit_margin`); None when uncalibrated.
    """

    weights: FloatArray
    temperature: float
    calibrated: bool = False
    floor: float | None = None
    margin: float | None = None


def train(corpus: Corpus, n_routes: int, out_of_scope: bool = False) -> Model:
    """Learn the weights and the temperature from the corpus (see the module docstring).

    `out_of_scope`: the last route holds the profile's out-of-scope examples (a class like
    any other while learning; never scored as a route, so the floor is fitted without it).
    """
    if corpus.n_terms == 0:  # routes without any text: nothing to learn, every score equal
        return Model(np.zeros((0, n_routes), np.float32), 1.0)
    bayes, totals, own_mass = _bayes_weights(corpus, n_routes)
    base = NB_SCALE * _leave_one_out_logits(corpus, bayes, totals, own_mass)
    everything = np.ones(corpus.n_docs, bool)
    held = (np.arange(corpus.n_docs) % HOLD_OUT) == HOLD_OUT - 1
    calibrate = held.sum() >= MIN_CALIBRATION and n_routes >= 2
    # The character 3-grams are learned only from a pack big enough to check the model on
    # held-out texts: from a handful of examples they learn accidents of spelling (on two
    # routes of five examples, "completely unrelated words" leaned 2:1 to one of them).
    learner = _Correction(corpus, n_routes, chars=calibrate, margin=MARGIN if calibrate else 0.0)
    # The first epochs without the held-out texts, to see how confident the model is on
    # text it never saw; the last epoch then learns from every text.
    # A pack too small to calibrate keeps the short schedule: with temperature 1 nothing would
    # temper the overconfidence that longer training on a handful of texts brings.
    epochs = held_epochs(int((~held).sum())) if calibrate else HELD_EPOCHS
    learner.fit(base, ~held if calibrate else everything, epochs, SEED)
    temperature, floor, margin = 1.0, None, None
    if calibrate:
        logits = base[held] + _logits(learner.weights, _select(corpus, held))
        temperature = fit_temperature(logits, corpus.routes[held])
        floor = fit_floor(logits / temperature, corpus.routes[held], n_routes - out_of_scope)
        margin = fit_margin(
            logits / temperature, corpus.routes[held], n_routes - out_of_scope, floor
        )
    learner.fit(base, everything, FINAL_EPOCHS, SEED + 1)
    correction = learner.weights
    correction += NB_SCALE * bayes
    correction -= correction.mean(axis=1, keepdims=True)
    return Model(correction, temperature, calibrate, floor, margin)


def held_epochs(n_docs: int) -> int:
    """Passes before the last epoch: HELD_EPOCHS, or enough for MIN_HELD_STEPS batches."""
    batches = max(1, math.ceil(n_docs / BATCH))
    return max(HELD_EPOCHS, math.ceil(MIN_HELD_STEPS / batches))


def _bayes_weights(corpus: Corpus, n_routes: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Centred, smoothed log-likelihood of each term under each route (terms x routes).

    Centring each term's row changes no posterior but makes a weight readable: > 0 means
    the term favours this route over the average one.

    Returns:
        The weights, each route's smoothed total mass, and each corpus entry's mass under
        its own text's route (what leave-one-out needs).
    """
    own = corpus.routes[corpus.rows]
    cells = corpus.ids * n_routes + own
    flat = np.bincount(cells, corpus.values, minlength=corpus.n_terms * n_routes)
    weights = flat.astype(np.float32).reshape(corpus.n_terms, n_routes)
    own_mass = weights[corpus.ids, own]
    totals = weights.sum(axis=0) + np.float32(SMOOTHING * corpus.n_terms)
    weights += np.float32(SMOOTHING)
    np.log(weights, out=weights)
    weights -= np.log(totals)
    weights -= weights.mean(axis=1, keepdims=True)
    return weights, totals, own_mass


def _leave_one_out_logits(
    corpus: Corpus, bayes: FloatArray, totals: FloatArray, own_mass: FloatArray
) -> FloatArray:
    """Each text's naive-Bayes logits as if the text had not been counted.

    Only the text's own route changes: its counts lose the text's values. Row centring
    shifts every route alike, so it is left out of the correction.
    """
    logits = _logits(bayes, corpus)
    kept = np.maximum(own_mass - corpus.values, 0.0)
    change = corpus.values * (np.log(kept + SMOOTHING) - np.log(own_mass + SMOOTHING))
    size = np.bincount(corpus.rows, corpus.values, minlength=corpus.n_docs)
    doc_totals = totals[corpus.routes].astype(np.float64)
    shrink = size * (np.log(np.maximum(doc_totals - size, 1e-9)) - np.log(doc_totals))
    change_sum = np.bincount(corpus.rows, change, minlength=corpus.n_docs)
    logits[np.arange(corpus.n_docs), corpus.routes] += (change_sum - shrink).astype(np.float32)
    return logits


def _logits(weights: FloatArray, corpus: Corpus) -> FloatArray:
    """Every row's logits, X @ W, gathered in chunks of rows."""
    out = np.zeros((corpus.n_docs, weights.shape[1]), np.float32)
    starts = np.searchsorted(corpus.rows, np.arange(corpus.n_docs + 1))
    for first in range(0, corpus.n_docs, CHUNK):
        last = min(corpus.n_docs, first + CHUNK)
        lo, hi = starts[first], starts[last]
        contributions = np.take(weights, corpus.ids[lo:hi], axis=0)
        contributions *= corpus.values[lo:hi, None]
        out[first:last] = _sum_rows(contributions, corpus.rows[lo:hi] - first, last - first)
    return out


def _sum_rows(contributions: FloatArray, rows: IntArray, n_rows: int) -> FloatArray:
    out = np.zeros((n_rows, contributions.shape[1]), np.float32)
    if len(rows):
        starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        out[rows[starts]] = np.add.reduceat(contributions, starts, axis=0)
    return out


def _select(corpus: Corpus, docs: npt.NDArray[np.bool_]) -> Corpus:
    """The rows of `docs`, renumbered from 0, in order."""
    keep = docs[corpus.rows]
    renumber = np.cumsum(docs) - 1
    return Corpus(
        renumber[corpus.rows[keep]],
        corpus.ids[keep],
        corpus.values[keep],
        corpus.routes[docs],
        corpus.n_terms,
        corpus.char_sizes,
    )


class _Correction:
    """Softmax regression on the corrected terms, on top of fixed `base` logits (in place).

    Successive `fit` calls continue the same weights and momentum, so one learner can train
    without the held-out texts first and with every text after.
    """

    def __init__(self, corpus: Corpus, n_routes: int, chars: bool = True, margin: float = 0.0):
        sizes = corpus.char_sizes if chars else np.where(corpus.char_sizes > 0, -1, 0)
        rates = np.where(
            sizes == 0, 1.0, np.where(np.isin(sizes, CORRECTED_CHAR_SIZES), CHAR_RATE, 0.0)
        )
        self.rates = (LEARNING_RATE * rates).astype(np.float32)[:, None]
        learned = (rates > 0.0)[corpus.ids]
        self.corpus = Corpus(
            corpus.rows[learned],
            corpus.ids[learned],
            corpus.values[learned],
            corpus.routes,
            corpus.n_terms,
            corpus.char_sizes,
        )
        self.n_routes = n_routes
        self.margin = margin
        self.weights = np.zeros((corpus.n_terms, n_routes), np.float32)
        self.velocity = np.zeros_like(self.weights)

    def fit(self, base: FloatArray, docs: npt.NDArray[np.bool_], epochs: int, seed: int) -> None:
        """`epochs` passes over the texts `docs` in mini-batches (order fixed by `seed`)."""
        train = _select(self.corpus, docs)
        if train.n_docs == 0 or self.n_routes < 2 or epochs <= 0:
            return
        base = base[docs]
        batches = _batches(train)
        order = np.random.default_rng(seed)
        for _ in range(epochs):
            for index in order.permutation(len(batches)):
                batch = batches[index]
                _step(
                    batch, train.routes, base, self.weights, self.velocity, self.rates, self.margin
                )


@dataclass(frozen=True, slots=True)
class _Batch:
    """One mini-batch, pre-indexed once so that every epoch only does arithmetic."""

    docs: IntArray
    values: FloatArray
    row_starts: IntArray  # where each non-empty row's entries start
    filled: IntArray  # the batch-local rows that have entries
    terms: IntArray  # the distinct terms of the batch
    slot: IntArray  # each entry's index into `terms`
    sorted_rows: IntArray  # each entry's batch-local row, and its value, in term order
    sorted_values: FloatArray
    term_starts: IntArray
    row_chunks: list[tuple[int, int, int, int, IntArray]]  # (first, last, lo, hi, starts)
    term_chunks: list[tuple[int, int, int, int, IntArray]]


def _chunks(starts: IntArray, total: int) -> list[tuple[int, int, int, int, IntArray]]:
    """Groups of STEP_CHUNK segments: (first, last segment, entry range, local starts)."""
    out = []
    for first in range(0, len(starts), STEP_CHUNK):
        last = min(len(starts), first + STEP_CHUNK)
        lo, hi = int(starts[first]), int(starts[last]) if last < len(starts) else total
        out.append((first, last, lo, hi, starts[first:last] - lo))
    return out


def _batches(corpus: Corpus) -> list[_Batch]:
    shuffled = np.random.default_rng(SEED).permutation(corpus.n_docs)
    starts = np.searchsorted(corpus.rows, np.arange(corpus.n_docs + 1))
    batches = []
    for first in range(0, corpus.n_docs, BATCH):
        docs = np.sort(shuffled[first : first + BATCH])
        lengths = starts[docs + 1] - starts[docs]
        entries = np.repeat(starts[docs] - np.r_[0, np.cumsum(lengths)[:-1]], lengths)
        entries += np.arange(lengths.sum())
        rows = np.repeat(np.arange(len(docs)), lengths)
        terms, slot = np.unique(corpus.ids[entries], return_inverse=True)
        by_term = np.argsort(slot, kind="stable")
        filled = np.flatnonzero(lengths)
        row_starts = np.r_[0, np.cumsum(lengths[filled])[:-1]].astype(np.int64)
        term_starts = np.searchsorted(slot[by_term], np.arange(len(terms)))
        batches.append(
            _Batch(
                docs=docs,
                values=corpus.values[entries],
                row_starts=row_starts,
                filled=filled,
                terms=terms,
                slot=slot,
                sorted_rows=rows[by_term],
                sorted_values=corpus.values[entries][by_term],
                term_starts=term_starts,
                row_chunks=_chunks(row_starts, len(entries)),
                term_chunks=_chunks(term_starts, len(entries)),
            )
        )
    return [b for b in batches if len(b.terms)]


def _step(
    batch: _Batch,
    routes: IntArray,
    base: FloatArray,
    weights: FloatArray,
    velocity: FloatArray,
    rates: FloatArray,
    margin: float = 0.0,
) -> None:
    """One momentum-SGD step of the softmax loss with an additive `margin`, in place."""
    # np.take rather than fancy indexing: several times faster for gathering rows.
    active = np.take(weights, batch.terms, axis=0)
    logits = np.take(base, batch.docs, axis=0)
    for first, last, lo, hi, starts in batch.row_chunks:
        contributions = np.take(active, batch.slot[lo:hi], axis=0)
        contributions *= batch.values[lo:hi, None]
        logits[batch.filled[first:last]] += np.add.reduceat(contributions, starts, axis=0)
    own = (np.arange(len(batch.docs)), routes[batch.docs])
    logits[own] -= margin
    logits -= logits.max(axis=1, keepdims=True)
    error = np.exp(logits)
    error /= error.sum(axis=1, keepdims=True)
    error[own] -= 1.0
    error /= len(batch.docs)
    gradient = np.empty_like(active)
    for first, last, lo, hi, starts in batch.term_chunks:
        spread = np.take(error, batch.sorted_rows[lo:hi], axis=0)
        spread *= batch.sorted_values[lo:hi, None]
        gradient[first:last] = np.add.reduceat(spread, starts, axis=0)
    moved = np.take(velocity, batch.terms, axis=0)
    moved *= MOMENTUM
    moved += gradient
    velocity[batch.terms] = moved
    moved *= np.take(rates, batch.terms, axis=0)
    weights[batch.terms] = active - moved


def fit_temperature(logits: FloatArray, labels: IntArray) -> float:
    """The temperature T minimising the log-loss of softmax(logits / T) (golden section).

    Returns:
        T in [0.05, 20]; 1.0 when there is nothing to fit on.
    """
    if len(labels) == 0:
        return 1.0
    low, high = math.log(0.05), math.log(20.0)
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(40):
        left = high - ratio * (high - low)
        right = low + ratio * (high - low)
        if log_loss(logits, labels, math.exp(left)) <= log_loss(logits, labels, math.exp(right)):
            high = right
        else:
            low = left
    return round(math.exp((low + high) / 2.0), 4)


def fit_floor(logits: FloatArray, labels: IntArray, n_scored: int) -> float | None:
    """The score under which FLOOR_REFUSED of the held-out in-scope texts' top routes fall
    (at most FLOOR_CAP).

    Scores are calibrated probabilities, but how low an in-scope message's best score sinks
    depends on how many routes share its words; a quantile of held-out texts means the same
    in every pack: about one in-scope message in 1 / FLOOR_REFUSED is refused. Only the first
    `n_scored` columns are routes (the rest are out-of-scope examples' class).

    Returns:
        The floor, or None without a held-out in-scope text.
    """
    in_scope = labels < n_scored
    if not in_scope.any():
        return None
    scaled = logits[in_scope].astype(np.float64)
    scaled -= scaled.max(axis=1, keepdims=True)
    probabilities = np.exp(scaled)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    top = probabilities[:, :n_scored].max(axis=1)
    return round(min(float(np.quantile(top, FLOOR_REFUSED)), FLOOR_CAP), 4)


def fit_margin(
    logits: FloatArray, labels: IntArray, n_scored: int, floor: float | None
) -> float | None:
    """The pairwise gap under which MENU_SHARE of the held-out in-scope texts above the floor
    fall (at most MARGIN_CAP): a menu for what is a near-tie on text like the examples.

    A pack's gaps shrink as its routes get fewer examples and more alike, so one margin for
    every pack offers menus on a large share of a small profile's turns.

    Returns:
        The margin, or None without a held-out in-scope text above the floor.
    """
    if n_scored < 2:
        return None
    scaled = logits[labels < n_scored].astype(np.float64)
    scaled -= scaled.max(axis=1, keepdims=True)
    probabilities = np.exp(scaled)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    ordered = np.sort(probabilities[:, :n_scored], axis=1)
    alive = ordered[:, -1] > (floor or 0.0)
    if not alive.any():
        return None
    gaps = np.tanh((ordered[alive, -1] - ordered[alive, -2]) / 2.0)
    return round(min(float(np.quantile(gaps, MENU_SHARE)), MARGIN_CAP), 4)


def log_loss(logits: FloatArray, labels: IntArray, temperature: float) -> float:
    """Mean negative log-probability of the right route under softmax(logits / T)."""
    scaled = logits.astype(np.float64) / temperature
    scaled -= scaled.max(axis=1, keepdims=True)
    log_norm = np.log(np.exp(scaled).sum(axis=1))
    return float(np.mean(log_norm - scaled[np.arange(len(labels)), labels]))
