"""How the lexical scorer learns: naive Bayes, a discriminative word correction, a temperature.

Three closed or nearly closed steps over the sparse TF-IDF corpus (one row per route text):

1. Naive Bayes: a smoothed log-likelihood of every term under every route (closed form;
   held sparse past `_candidates.CANDIDATE_ROUTES` routes, `_sparse.py`).
2. A correction on the word terms (stems and bigrams) and the character 3-grams, trained
   discriminatively: a few epochs of mini-batch softmax regression (with an additive margin:
   it keeps pushing until the right route leads clearly, as an SVM does) whose logits start from
   the naive-Bayes logits of each text *held out from its own counts* (leave-one-out, exact
   and cheap), so the correction learns what naive Bayes gets wrong on unseen text rather
   than on text it has memorised. The 3-grams learn at a higher rate than the words (their
   values are much smaller: many of them share one normalised block); the 4- and 5-grams
   stay naive-Bayes only (as good on CLINC150 val and banking77 folds, at twice the cost).
   Only a pack with enough texts to calibrate on (below), or to fit its thresholds by
   cross-validation (`_few.CV_TEXTS`) whose out-of-fold texts do not say otherwise
   (`learns_fully_on_folds`), learns the 3-grams: from a handful of examples they learn
   accidents of spelling. A pack with few examples per route learns the 4-grams too,
   and its last passes take a minimum number of steps (`_few.py`). Such a pack (up to
   CANDIDATE_ROUTES routes) adds a second, differently trained model to these logits: a
   squared hinge on the 3-grams with per-route intercepts (`_hinge.py`), folded into the
   same weights plus a `bias` per route.
3. A temperature fitted on texts the correction has not seen yet: the first epochs leave
   every tenth text out, the temperature is fitted on those texts, and the last epoch learns
   from every text, continuing the same weights. One pass instead of a trial correction and
   a kept one: the same calibration (ECE) at half the cost. A pack of CV_TEXTS to
   CALIBRATION_TEXTS texts learns from every text and fits its temperature (never under 1),
   floor and margin on out-of-fold scores instead (`_cross_validated`).

Everything is numpy, deterministic (fixed seeds, fixed order) and sized for a playground
that rebuilds on every edit: a CLINC150-size profile (15,000 texts, 150 routes) takes about
2.5-3.5 s of CPU alone on a 2-core machine, depending on the machine (docs/lab/benchmarks.md); a
small profile trains for at least MIN_HELD_STEPS steps and takes a fraction of a second.
Built packs store the result (`stored.py`), so loading one does not train.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from routing_core._types import Float32Array, IntArray
from routing_core.scorers import _candidates, _few, _hinge, _semantic, _sparse
from routing_core.scorers._corpus import (
    BATCH,
    BATCHING_SHARE,
    MOMENTUM,
    NO_PROGRESS,
    SEED,
    Batch,
    Corpus,
    Progress,
    corpus_logits,
    make_batches,
    select,
)
from routing_core.scorers.calibration import (
    FLOOR_REFUSED,
    HOLD_OUT,
    MIN_CALIBRATION,
    fit_weights,
)
from routing_core.scorers.calibration import fit_floor as _floor_of
from routing_core.scorers.calibration import fit_margin as _margin_of
from routing_core.scorers.calibration import fit_temperature as _fit_temperature

# Additive smoothing of the per-route term distributions, in units of one normalised text.
SMOOTHING = 0.03
# The naive-Bayes logits enter the final model scaled by this: it keeps them from
# overruling the discriminative correction (chosen on CLINC150 val and banking77 folds).
NB_SCALE = 0.5
# Mini-batch softmax regression of the correction: HELD_EPOCHS without the held-out texts,
# then FINAL_EPOCHS over every text.
HELD_EPOCHS = 4
FINAL_EPOCHS = 1
# ... and at least this many steps (of BATCH texts) before the last epoch, in a pack that learns
# fully (one that calibrates, or `learns_fully_on_folds`):
# ten examples per route make a handful of batches, so four passes would be a few dozen
# steps and leave the correction barely trained (10-shot sets gained 1-3 points; see
# docs/lab/benchmarks.md).
MIN_HELD_STEPS = 200
LEARNING_RATE = 20.0
# Character n-grams of these sizes are learned by the correction too, at CHAR_RATE times the
# words' learning rate (chosen on CLINC150 val and banking77 folds).
CORRECTED_CHAR_SIZES = (3,)
CHAR_RATE = 8.0
# Additive margin: while learning, each text's own route scores this much less than it does,
# so a step keeps pushing until the right route leads by about MARGIN rather than stopping
# as soon as it leads at all (the "large margin" a linear SVM has and plain softmax
# regression lacks). Chosen on CLINC150 val and 3-fold CV of CLINC150, banking77 and HWU64
# train (0.7-1.5 all gain about +0.1 point; neutral with 10 or 30 examples per route).
# Only a pack big enough to calibrate learns with it: with temperature 1, nothing would
# temper the confidence a margin adds (on the studio tests' three routes of a dozen texts,
# an out-of-scope message rose from 0.67 to 0.75, past the floor meant to stop it); and a
# pack of 100-199 texts that learns fully lost with it on the home-assistant languages'
# folds (docs/lab/benchmarks.md, "Small packs in 42 languages").
MARGIN = 1.0
# Where the fit of the semantic view's weight starts, in units of its calibrated scores
# beside the lexical model's (1): the prior of `fit_weights` is centred there.
SEMANTIC_START = 0.5
# ... and it is fitted only when the words alone miss at least this many held-out texts.
SEMANTIC_MIN_MISSES = 5
# The "no route" column stands where this share of held-out requests' best route falls
# (`fit_none_logit`). Chosen on development data (CLINC150 val with its training split's
# out-of-scope texts; Banking77's and HWU64's training splits, every tenth example held
# out): docs/decisions.md, "A column for no route".
NONE_REFUSED = 0.02
# So a pack calibrates from this many texts on (with two routes or more).
CALIBRATION_TEXTS = HOLD_OUT * MIN_CALIBRATION


@dataclass(frozen=True, slots=True)
class Model:
    """The learned weights (terms x routes, centred per term) and the score temperature.

    `calibrated`: the temperature was fitted on held-out texts (the pack was big enough).
    `floor`: the out-of-scope floor fitted on those texts (`fit_floor`); None when uncalibrated.
    `margin`: the near-tie margin fitted on them (`fit_margin`); None when uncalibrated.
    `none_logit`: how far above the routes' mean calibrated logit "no route" stands on a first
    turn (`fit_none_logit`); None: no such column.
    """

    weights: Float32Array | _sparse.BlockWeights  # block by block past CANDIDATE_ROUTES routes
    temperature: float
    calibrated: bool = False
    floor: float | None = None
    margin: float | None = None
    bias: Float32Array | None = None  # per route, added to its logit (None: 0 everywhere)
    # The semantic view's scores, added to the logits (`_semantic`); None: the words alone.
    semantic: _semantic.Semantic | None = None
    # How many texts the model had that fitted temperature, floor, margin and view weight
    # (None: not calibrated); a warm start keeps the earlier model's.
    fitted_on: int | None = None
    none_logit: float | None = None


# Share of a build's progress spent preparing (naive Bayes, candidates, held-out logits).
PREPARING_SHARE = 0.15

# A warm start (an earlier model of most of these texts) learns this many passes over every
# text, instead of the held-out passes and the last one, and keeps the earlier temperature.
WARM_EPOCHS = 2
# ... then this many passes over the texts the earlier model never saw (an edited example
# must route as a full build would route it: two passes alone left it on a menu).
FRESH_EPOCHS = 10


@dataclass(frozen=True, slots=True)
class Warm:
    """An earlier model mapped onto this corpus, to start learning from.

    `weights` are its final weights (naive Bayes included, centred per term) where it knew
    both the term and the route (`known_terms`, `known_routes`), 0 elsewhere.
    """

    weights: Float32Array
    known_terms: npt.NDArray[np.bool_]
    known_routes: npt.NDArray[np.bool_]
    temperature: float
    fresh: npt.NDArray[np.bool_]  # per text: not among its route's texts in the earlier model
    floor: float | None = None
    margin: float | None = None
    # Per route: new, or its texts are not the earlier model's texts of it (None: every route).
    changed: npt.NDArray[np.bool_] | None = None
    bias: Float32Array | None = None  # its per-route intercepts (0 for a route it did not know)
    # Its semantic view's weight (None: it had none, and the warm model has none either).
    semantic_weight: float | None = None
    # How many texts had the model that fitted what it keeps (`Model.fitted_on`).
    fitted_on: int | None = None
    none_logit: float | None = None  # its "no route" column (`Model.none_logit`)


def train(
    corpus: Corpus,
    n_routes: int,
    *,
    out_of_scope: bool = False,
    warm: Warm | None = None,
    progress: Progress = NO_PROGRESS,
    cross_validate: bool = True,
    vectors: Float32Array | None = None,
    learns_fully: bool | None = None,
) -> Model:
    """Learn the weights and the temperature from the corpus (see the module docstring).

    Args:
        corpus: the route texts.
        n_routes: how many routes (columns).
        out_of_scope: the last route holds the profile's out-of-scope examples (a class like
            any other while learning; never scored as a route, so the floor is fitted
            without it).
        warm: an earlier model to start from (used when both it and this pack are
            calibrated): WARM_EPOCHS passes over every text, the earlier temperature kept.
        progress: told the fraction done after every step.
        cross_validate: a pack too small to calibrate fits its floor and margin on
            out-of-fold scores (`_few.can_cross_validate`); False for those folds' models.
        vectors: each text's meaning vector (`_static`, texts x dimensions), for the
            semantic view (`_semantic`); learned where the hinge is (a pack that calibrates,
            up to CANDIDATE_ROUTES routes). None: the words alone.
        learns_fully: whether a pack too small to calibrate learns fully; None: a pack of
            `_few.CV_TEXTS` texts or more, cross-validated, as its out-of-fold texts choose
            (`learns_fully_on_folds`), a smaller one not. Set for the folds' models.
    """
    if corpus.n_terms == 0:  # routes without any text: nothing to learn, every score equal
        progress(1.0)
        return Model(np.zeros((0, n_routes), np.float32), 1.0)
    preparing, progress = progress.part(0.0, PREPARING_SHARE), progress.part(PREPARING_SHARE, 1)
    bayes, totals, own_mass = _naive_bayes(corpus, n_routes)
    preparing(0.3)
    calibrate = _can_calibrate(corpus.n_docs, n_routes)
    folds = None
    if learns_fully is None:
        if not calibrate and cross_validate and _few.can_cross_validate(corpus.n_docs, n_routes):
            shared = _SHARED_SCHEDULE.get()
            folds = None if shared is None else shared.folds
            if folds is None:
                folds = _cross_validated(corpus, n_routes, out_of_scope)
            if shared is not None:
                shared.folds = folds
        learns_fully = folds is not None and folds.full
    full = calibrate or learns_fully
    initial = _warm_weights(warm, bayes) if warm is not None and calibrate else None
    plan = _plan(
        corpus, n_routes, bayes, totals, own_mass, (calibrate, full), initial, warm, preparing
    )
    preparing(1.0)
    if plan.warm is not None:
        return _learn_warm(plan, plan.warm, bayes, n_routes, vectors, progress)
    return _learn_cold(plan, bayes, n_routes, out_of_scope, folds, vectors, progress)


@dataclass(frozen=True, slots=True)
class _Plan:
    """What the correction learns: the texts, the learner and the logits it corrects.

    `labels` are each text's own column and `columns` each text's routes when a large pack
    learns against candidates (own route first, so every label is 0); None: column i is
    route i. `warm` is set only when the learning starts from an earlier model.
    """

    corpus: Corpus
    learner: _Correction | _candidates.CandidateCorrection
    base: Float32Array  # each text's naive-Bayes logits without its own counts, scaled
    labels: IntArray
    columns: IntArray | None
    everything: npt.NDArray[np.bool_]
    calibrate: bool
    full: bool  # learns the character n-grams, for the step budget, with the second model
    warm: Warm | None = None


def _naive_bayes(
    corpus: Corpus, n_routes: int
) -> tuple[Float32Array | _sparse.SparseBayes, Float32Array, Float32Array]:
    """Naive Bayes, its route totals and each entry's own mass; sparse past CANDIDATE_ROUTES
    routes, where a dense terms x routes matrix would be most of a GB."""
    if n_routes > _candidates.CANDIDATE_ROUTES:
        return _sparse.sparse_bayes(corpus, n_routes, SMOOTHING)
    return _bayes_weights(corpus, n_routes)


def _held_out(n_docs: int) -> npt.NDArray[np.bool_]:
    """Every HOLD_OUT-th text: those the temperature, floor and margin are fitted on."""
    held: npt.NDArray[np.bool_] = (np.arange(n_docs) % HOLD_OUT) == HOLD_OUT - 1
    return held


def _can_calibrate(n_docs: int, n_routes: int) -> bool:
    """Enough held-out texts to fit a temperature on, and two routes to tell apart.

    Only such a pack learns with the margin (MARGIN says why).
    """
    return int(_held_out(n_docs).sum()) >= MIN_CALIBRATION and n_routes >= 2


def _warm_weights(warm: Warm, bayes: Float32Array | _sparse.SparseBayes) -> Float32Array:
    """The earlier model's weights minus naive Bayes where it knew the term and the route
    (the correction it had learned), 0 elsewhere: where this correction starts."""
    initial = warm.weights
    # Block by block, then the unknown cells back to 0 (they were 0): no second
    # terms x routes array (most of a GB at 2,000 routes).
    for first in range(0, len(initial), _sparse.ROWS_AT_ONCE):
        last = min(len(initial), first + _sparse.ROWS_AT_ONCE)
        initial[first:last] -= NB_SCALE * _bayes_rows(bayes, first, last)
    initial[~warm.known_terms] = 0.0
    if not warm.known_routes.all():
        initial[:, ~warm.known_routes] = 0.0
    return initial


def _plan(
    corpus: Corpus,
    n_routes: int,
    bayes: Float32Array | _sparse.SparseBayes,
    totals: Float32Array,
    own_mass: Float32Array,
    gates: tuple[bool, bool],
    initial: Float32Array | None,
    warm: Warm | None,
    preparing: Progress,
) -> _Plan:
    """The learner over every route, or past CANDIDATE_ROUTES over each text's candidates
    (`_candidates`); a pack with few examples per route corrects the 4-grams too (`_few`).
    `gates`: whether the pack calibrates, and whether it learns fully (`train`)."""
    calibrate, full = gates
    sizes = _few.corrected_char_sizes(corpus.n_docs, n_routes, CORRECTED_CHAR_SIZES)
    started = warm if initial is not None else None
    if isinstance(bayes, _sparse.SparseBayes):
        bayes_ = (bayes, totals, own_mass)
        return _candidate_plan(
            corpus, n_routes, bayes_, calibrate, sizes, initial, started, preparing
        )
    base = NB_SCALE * _leave_one_out_logits(corpus, bayes, totals, own_mass)
    learner = _Correction(corpus, n_routes, full, MARGIN if calibrate else 0.0, sizes)
    if initial is not None:
        learner.weights[:] = initial
    everything = np.ones(corpus.n_docs, bool)
    return _Plan(corpus, learner, base, corpus.routes, None, everything, calibrate, full, started)


def _candidate_plan(
    corpus: Corpus,
    n_routes: int,
    bayes: tuple[_sparse.SparseBayes, Float32Array, Float32Array],
    calibrate: bool,
    sizes: tuple[int, ...],
    initial: Float32Array | None,
    warm: Warm | None,
    preparing: Progress,
) -> _Plan:
    """Each text against its own route and the routes naive Bayes finds strongest for it;
    a warm start only on the texts an edit can move."""
    sparse_bayes, totals, own_mass = bayes
    chosen = _candidates.candidates(corpus, sparse_bayes, preparing.part(0.3, 0.7))
    everything = np.ones(corpus.n_docs, bool)
    if warm is not None and warm.changed is not None:
        # Those of the changed routes and those with a changed route among their
        # candidates: every other text's step would touch only cells the earlier model
        # already learned.
        corpus, own_mass, chosen, everything, warm = _affected(corpus, own_mass, chosen, warm)
    base = NB_SCALE * _leave_one_out_logits(
        corpus, sparse_bayes, totals, own_mass, chosen, preparing.part(0.7, 1.0)
    )
    rates = _rates(corpus, calibrate, sizes)
    margin = _candidates.CANDIDATE_MARGIN if calibrate else 0.0
    learner = _candidates.CandidateCorrection(corpus, chosen, n_routes, rates, margin, initial)
    labels = np.zeros(corpus.n_docs, np.int64)  # each text's own route is candidate 0
    return _Plan(corpus, learner, base, labels, chosen, everything, calibrate, calibrate, warm)


def _learn_warm(
    plan: _Plan,
    warm: Warm,
    bayes: Float32Array | _sparse.SparseBayes,
    n_routes: int,
    vectors: Float32Array | None,
    progress: Progress,
) -> Model:
    """WARM_EPOCHS passes over every text, then FRESH_EPOCHS over the texts the earlier model
    never saw; the earlier model saw the held-out texts, so its temperature, floor and
    margin are the honest ones and are kept."""
    learner, base = plan.learner, plan.base
    share = WARM_EPOCHS / (WARM_EPOCHS + 1)
    learner.fit(base, plan.everything, WARM_EPOCHS, SEED + 1, progress.part(0.0, share))
    # A batch of a few fresh texts would step as hard as a full one: scale it down.
    learner.scale_rates(min(1.0, warm.fresh.sum() / BATCH))
    learner.fit(base, warm.fresh, FRESH_EPOCHS, SEED + 2, progress.part(share, 1.0))
    model = _finish(learner, bayes, warm.temperature, plan.calibrate, warm.floor, warm.margin)
    semantic = None
    if vectors is not None and warm.semantic_weight is not None and plan.columns is None:
        # Closed form: learned again on every text, at the weight fitted before.
        semantic = _semantic_view(vectors, plan.corpus.routes, n_routes, warm.semantic_weight)
    return dataclasses.replace(
        model,
        bias=warm.bias,
        semantic=semantic,
        fitted_on=warm.fitted_on,
        none_logit=warm.none_logit,
    )


@dataclass(frozen=True, slots=True)
class _Fitted:
    """What held-out texts fit: temperature, floor, near-tie margin, the hinge's factor in
    the logits and the semantic view's weight (None: no view). Uncalibrated: the defaults."""

    temperature: float = 1.0
    floor: float | None = None
    margin: float | None = None
    hinge_factor: float = 0.0
    view_weight: float | None = None
    none_logit: float | None = None


def _learn_cold(
    plan: _Plan,
    bayes: Float32Array | _sparse.SparseBayes,
    n_routes: int,
    out_of_scope: bool,
    folds: _Folds | None,
    vectors: Float32Array | None,
    progress: Progress,
) -> Model:
    """Passes without the held-out texts, the fit on them, then a last pass over every text
    (continuing the same weights): one pass of learning where a trial correction and a kept
    one would cost twice as much, with the same calibration."""
    corpus, learner, calibrate = plan.corpus, plan.learner, plan.calibrate
    held = _held_out(corpus.n_docs)
    learned = ~held if calibrate else plan.everything
    epochs, final = _schedule(corpus.n_docs, learned, plan.full)
    share = epochs / (epochs + final)
    held_passes = progress.part(0.0, share)
    if isinstance(learner, _candidates.CandidateCorrection):  # its early passes: fewer candidates
        learner.fit(plan.base, learned, epochs, SEED, held_passes, _candidates.EARLY_EPOCHS)
    else:
        learner.fit(plan.base, learned, epochs, SEED, held_passes)
    hinge = _held_hinge(corpus, n_routes, learned) if plan.full and plan.columns is None else None
    # Uncalibrated, the hinge joins the logits at weight WEIGHT (calibrated: `_fit_held_out`).
    fitted = _Fitted(hinge_factor=_hinge.WEIGHT)
    if calibrate:
        fitted = _fit_held_out(plan, held, hinge, vectors, n_routes, n_routes - out_of_scope)
    learner.fit(plan.base, plan.everything, final, SEED + 1, progress.part(share, 1.0))
    if folds is not None:
        fitted = dataclasses.replace(
            fitted,
            temperature=folds.temperature,
            floor=folds.floor,
            margin=folds.margin,
            none_logit=folds.none_logit,
        )
    model = _finish(learner, bayes, fitted.temperature, calibrate, fitted.floor, fitted.margin)
    model = dataclasses.replace(model, none_logit=fitted.none_logit)
    if calibrate:
        model = dataclasses.replace(model, fitted_on=corpus.n_docs)
    if fitted.view_weight is not None and vectors is not None:
        view = _semantic_view(vectors, corpus.routes, n_routes, fitted.view_weight)
        model = model if view is None else dataclasses.replace(model, semantic=view)
    if hinge is None:
        return model
    return _with_hinge(model, hinge, plan.everything, n_routes, fitted.hinge_factor)


def _schedule(n_docs: int, learned: npt.NDArray[np.bool_], full: bool) -> tuple[int, int]:
    """Passes before the held-out fit (over the texts `learned`) and after it (every text).
    A pack that does not learn fully (`learns_fully_on_folds`) keeps the short schedule."""
    if not full:
        return HELD_EPOCHS, FINAL_EPOCHS
    return held_epochs(int(learned.sum())), _few.final_epochs(n_docs, BATCH, FINAL_EPOCHS)


def _held_hinge(
    corpus: Corpus, n_routes: int, learned: npt.NDArray[np.bool_]
) -> _hinge.Hinge | None:
    """The second, differently trained model (`_hinge`) learned on the texts `learned`
    (without the held-out ones, in a pack that calibrates), for a pack that learns fully; not
    past CANDIDATE_ROUTES (the caller checks), whose learning must not hold terms x routes
    arrays. None when its weight is 0."""
    if _hinge.WEIGHT <= 0.0:
        return None
    hinge = _hinge.Hinge(corpus, n_routes)
    hinge.fit(learned, _hinge.STEPS, SEED)
    return hinge


def _fit_held_out(
    plan: _Plan,
    held: npt.NDArray[np.bool_],
    hinge: _hinge.Hinge | None,
    vectors: Float32Array | None,
    n_routes: int,
    n_scored: int,
) -> _Fitted:
    """Temperature, hinge factor, view weight, floor and margin, fitted in that order on the
    held-out texts' logits, each on the logits the one before it made."""
    labels = plan.labels[held]
    logits = plan.base[held] + plan.learner.logits(held)
    temperature, factor, weight = fit_temperature(logits, labels), 0.0, None
    if hinge is not None:  # its weight is in units of the calibrated logits
        factor = _hinge.WEIGHT * temperature
        logits += factor * hinge.logits(held)
        temperature = fit_temperature(logits, labels)
    if vectors is not None and plan.columns is None:
        routes = plan.corpus.routes
        meaning = _semantic_weight(logits, temperature, vectors, routes, n_routes, held)
        if meaning is not None:
            weight, temperature, held_scores = meaning
            logits += weight * held_scores
    calibrated = logits / temperature
    routes_of = None if plan.columns is None else plan.columns[held]
    none_logit = fit_none_logit(calibrated, labels, n_scored) if routes_of is None else None
    scored = with_no_route(calibrated, n_scored, none_logit)
    refused = _floor_refused(plan.corpus.routes, n_scored)
    floor = fit_floor(scored, labels, n_scored, routes_of, refused)
    margin = fit_margin(scored, labels, n_scored, floor, routes_of)
    return _Fitted(temperature, floor, margin, factor, weight, none_logit)


def _semantic_view(
    vectors: Float32Array, routes: IntArray, n_routes: int, weight: float
) -> _semantic.Semantic | None:
    """The semantic view learned on every text at `weight`, or None when it cannot be stored."""
    everything = np.ones(len(routes), bool)
    matrix, intercepts = _semantic.fit(vectors, routes, n_routes, everything)
    view = _semantic.Semantic(matrix, intercepts, weight)
    return view if view.storable() else None


def _with_hinge(
    model: Model,
    hinge: _hinge.Hinge,
    everything: npt.NDArray[np.bool_],
    n_routes: int,
    factor: float,
) -> Model:
    """The hinge's last pass over every text (as the correction's), folded into the model's
    weights and its intercepts into `bias`."""
    hinge.fit(everything, _hinge.FINAL_STEPS, SEED + 1)
    bias = np.zeros(n_routes, np.float32)
    # Up to CANDIDATE_ROUTES the weights are one matrix already (blocks only past it), so
    # this returns them as they are and the hinge adds to them in place.
    hinge.add_to(_sparse.dense(model.weights), bias, factor)
    return dataclasses.replace(model, bias=bias)


def _semantic_weight(
    logits: Float32Array,
    temperature: float,
    vectors: Float32Array,
    routes: IntArray,
    n_routes: int,
    held: npt.NDArray[np.bool_],
) -> tuple[float, float, Float32Array] | None:
    """The semantic view's weight beside the held-out texts' lexical `logits` (fitted at
    `temperature`), and the temperature of their sum: the pair minimising the held-out
    log-loss (`fit_weights`), the view learned without the held-out texts. None when it
    earns no positive weight,
    or when the words miss fewer than SEMANTIC_MIN_MISSES of the held-out texts: then
    nothing tells how far to trust the view, and on such texts (templates filled with a
    route's words) the fit trusts both without bound, so that a message of a template's
    words alone, which the words leave open, came out certain of one route.

    Returns:
        (weight in units of the lexical logits, the sum's temperature, the view's held-out
        scores at weight 1).
    """
    labels = routes[held]
    if int((logits.argmax(axis=1) != labels).sum()) < SEMANTIC_MIN_MISSES:
        return None
    matrix, intercepts = _semantic.fit(vectors, routes, n_routes, ~held)
    scores = (vectors[held] @ matrix + intercepts).astype(np.float32)
    # Start (and centre the prior) at the calibrated lexical logits plus SEMANTIC_START
    # times the view's calibrated scores.
    start = (1.0 / temperature, SEMANTIC_START / fit_temperature(scores, labels))
    theta = fit_weights([logits, scores], labels, start)
    if theta[1] <= 0.0:
        return None
    # The words' share kept within fit_temperature's range (T in [0.05, 20]): on held-out
    # texts whose words mislead, the fit would drive it to 0 or below.
    words = min(max(float(theta[0]), 1.0 / 20.0), 1.0 / 0.05)
    return float(theta[1]) / words, round(1.0 / words, 4), scores


@dataclass(frozen=True, slots=True)
class _Folds:
    """What out-of-fold scores chose and fitted for a pack too small to calibrate
    (`_cross_validated`): whether it learns fully, its temperature, floor and margin."""

    full: bool
    temperature: float
    floor: float | None
    margin: float | None
    none_logit: float | None = None


@dataclass(slots=True)
class _Schedule:
    """What the first pack of CV_TEXTS-CALIBRATION_TEXTS texts learned in a `one_schedule`
    block chose and fitted (None: none has learned yet)."""

    folds: _Folds | None = None


_SHARED_SCHEDULE: ContextVar[_Schedule | None] = ContextVar("shared_schedule", default=None)


@contextmanager
def one_schedule() -> Iterator[None]:
    """Within it, packs too small to calibrate but big enough to cross-validate learn on the
    schedule the first of them chose (`learns_fully_on_folds`), at the temperature, floor
    and margin it fitted, instead of learning fold models again.

    For the many near-copies of one pack a caller learns in a row (the overlap checkup holds
    out each example of a profile in turn): choosing costs CV_FOLDS fold models learned each
    way (about 0.5 s of CPU at a hundred texts), and over the demo's 57 held-out examples
    the checkup went from 2.7 to 42 s; fitting the thresholds again on the chosen schedule's
    five folds still cost a generated profile of 12 routes x 12 examples that learns fully
    102 s instead of 33. A near-copy's choice and thresholds are its pack's, so they are
    fitted once. Models learned inside are kept in
    the process's cache like any other (`lexical`).
    """
    token = _SHARED_SCHEDULE.set(_Schedule())
    try:
        yield
    finally:
        _SHARED_SCHEDULE.reset(token)


def _cross_validated(corpus: Corpus, n_routes: int, out_of_scope: bool) -> _Folds:
    """A pack too small to calibrate, fitted on out-of-fold scores: CV_FOLDS models learned
    fully and CV_FOLDS on the short schedule score the texts they left out; the pack learns
    fully unless that routes its own requests worse (`learns_fully_on_folds`), and its
    temperature, floor and margin are fitted on the chosen schedule's scores."""
    n_scored = n_routes - out_of_scope
    full, right = _fold_logits(corpus, n_routes, out_of_scope, learns_fully=True)
    short, _ = _fold_logits(corpus, n_routes, out_of_scope, learns_fully=False)
    chosen = learns_fully_on_folds(full, short, right, n_scored)
    scores = full if chosen else short
    # On the short schedule, the model as it was before such a pack could learn fully:
    # temperature 1, so that a floor a person chose against its scores keeps its meaning.
    temperature = tempering_temperature(scores, right) if chosen else 1.0
    scores = scores / temperature
    none_logit = fit_none_logit(scores, right, n_scored)
    scored = with_no_route(scores, n_scored, none_logit)
    floor = fit_floor(scored, right, n_scored, refused=_floor_refused(corpus.routes, n_scored))
    return _Folds(
        chosen, temperature, floor, fit_margin(scored, right, n_scored, floor), none_logit
    )


def _fold_logits(
    corpus: Corpus, n_routes: int, out_of_scope: bool, *, learns_fully: bool
) -> tuple[Float32Array, IntArray]:
    """Every text's logits from the fold model that left it out (`_few.folds`), learned
    fully or on the short schedule, and every text's column."""
    logits, labels = [], []
    for held in _few.folds(corpus.n_docs):
        model = train(
            select(corpus, ~held),
            n_routes,
            out_of_scope=out_of_scope,
            cross_validate=False,
            learns_fully=learns_fully,
        )
        scores = corpus_logits(_sparse.dense(model.weights), select(corpus, held))
        logits.append(scores if model.bias is None else scores + model.bias)
        labels.append(corpus.routes[held])
    return np.vstack(logits), np.concatenate(labels)


def learns_fully_on_folds(
    full: Float32Array, short: Float32Array, labels: IntArray, n_scored: int
) -> bool:
    """Whether a pack of `_few.CV_TEXTS` to CALIBRATION_TEXTS texts learns fully: unless its
    fold models, learned fully, place fewer of its in-scope texts (columns under `n_scored`)
    on their route than the short schedule's do (docs/decisions.md, "Packs of 100-199 texts").

    Only the routes' texts are counted. Learning fully always sends more of the out-of-scope
    class's texts to that class (the studio's demo: 9 of its 11 texts that only learning
    fully placed right), which says nothing of whether it routes the pack's requests better;
    and what it costs, a confidence that the cross-validated temperature cannot temper on a
    message like none of the texts, is paid on every message. On the demo the fully learned
    fold models placed 2 in-scope texts the short ones missed and missed 7 they placed.
    """
    routed = labels < n_scored
    full_right = (full.argmax(axis=1) == labels) & routed
    short_right = (short.argmax(axis=1) == labels) & routed
    return int((full_right & ~short_right).sum()) >= int((short_right & ~full_right).sum())


def tempering_temperature(logits: Float32Array, labels: IntArray) -> float:
    """The temperature of a pack that cannot calibrate, fitted on out-of-fold `logits`: at
    least 1, so that it may temper its scores and never sharpen them. Fitted on the pack's
    own texts (the out-of-fold ones, which the fold models place right more often than not),
    it says nothing of a message like none of them, so it must not make such a message surer
    than the scale the lexical logits have uncalibrated (docs/decisions.md, "Packs of
    100-199 texts"). Measured on the home-assistant languages' packs it came out at 1.3-3.1."""
    return max(1.0, fit_temperature(logits, labels))


def _affected(
    corpus: Corpus, own_mass: Float32Array, chosen: IntArray, warm: Warm
) -> tuple[Corpus, Float32Array, IntArray, npt.NDArray[np.bool_], Warm]:
    """The corpus, masses, candidates and warm start cut to the texts an edit can move."""
    assert warm.changed is not None
    docs = warm.changed[chosen].any(axis=1)
    entries = docs[corpus.rows]
    kept = dataclasses.replace(warm, fresh=warm.fresh[docs])
    everything = np.ones(int(docs.sum()), bool)
    return select(corpus, docs), own_mass[entries], chosen[docs], everything, kept


def _finish(
    learner: _Correction | _candidates.CandidateCorrection,
    bayes: Float32Array | _sparse.SparseBayes,
    temperature: float,
    calibrated: bool,
    floor: float | None = None,
    margin: float | None = None,
) -> Model:
    """The final weights: scaled naive Bayes plus the correction, centred per term.

    Dense, built in `bayes`'s memory; from sparse naive Bayes, made block by block when
    they are read (at 2,000 routes each terms x routes array is most of a GB).
    """
    if isinstance(bayes, _sparse.SparseBayes):
        assert isinstance(learner, _candidates.CandidateCorrection)
        sparse_bayes, candidate_learner = bayes, learner

        def rows(first: int, last: int) -> Float32Array:
            block = sparse_bayes.rows(first, last)
            block *= NB_SCALE
            candidate_learner.add_rows(block, first)
            block -= block.mean(axis=1, keepdims=True)
            return block

        weights = _sparse.BlockWeights(bayes.shape[0], bayes.shape[1], rows)
        return Model(weights, temperature, calibrated, floor, margin)
    bayes *= NB_SCALE
    learner.add_to(bayes)
    bayes -= bayes.mean(axis=1, keepdims=True)
    return Model(bayes, temperature, calibrated, floor, margin)


def _bayes_rows(bayes: Float32Array | _sparse.SparseBayes, first: int, last: int) -> Float32Array:
    """Naive Bayes' rows of terms [first, last), centred, whichever form it is in."""
    if isinstance(bayes, _sparse.SparseBayes):
        return bayes.rows(first, last)
    return bayes[first:last]


def held_epochs(n_docs: int) -> int:
    """Passes before the last epoch: HELD_EPOCHS, or enough for MIN_HELD_STEPS batches."""
    batches = max(1, math.ceil(n_docs / BATCH))
    return max(HELD_EPOCHS, math.ceil(MIN_HELD_STEPS / batches))


def _bayes_weights(
    corpus: Corpus, n_routes: int
) -> tuple[Float32Array, Float32Array, Float32Array]:
    """Centred, smoothed log-likelihood of each term under each route (terms x routes).

    Centring each term's row changes no posterior but makes a weight readable: > 0 means
    the term favours this route over the average one.

    Returns:
        The weights, each route's smoothed total mass, and each corpus entry's mass under
        its own text's route (what leave-one-out needs).
    """
    own = corpus.routes[corpus.rows]
    cells = corpus.ids * n_routes + own
    # float32 from the start: at 2,000 routes a float64 terms x routes array is gigabytes.
    flat = np.zeros(corpus.n_terms * n_routes, np.float32)
    np.add.at(flat, cells, corpus.values)
    weights = flat.reshape(corpus.n_terms, n_routes)
    own_mass = weights[corpus.ids, own]
    totals = weights.sum(axis=0) + np.float32(SMOOTHING * corpus.n_terms)
    weights += np.float32(SMOOTHING)
    np.log(weights, out=weights)
    weights -= np.log(totals)
    weights -= weights.mean(axis=1, keepdims=True)
    return weights, totals, own_mass


def _leave_one_out_logits(
    corpus: Corpus,
    bayes: Float32Array | _sparse.SparseBayes,
    totals: Float32Array,
    own_mass: Float32Array,
    chosen: IntArray | None = None,
    progress: Progress | None = None,
) -> Float32Array:
    """Each text's naive-Bayes logits as if the text had not been counted.

    Only the text's own route changes: its counts lose the text's values. Row centring
    shifts every route alike, so it is left out of the correction. With `chosen`
    candidates (own route first), the logits on those routes only.
    """
    if chosen is None:
        logits, own = corpus_logits(_bayes_rows(bayes, 0, corpus.n_terms), corpus), corpus.routes
    else:
        assert isinstance(bayes, _sparse.SparseBayes)
        logits = _candidates.gathered_logits(corpus, bayes, chosen, progress)
        own = np.zeros(corpus.n_docs, np.int64)
    kept = np.maximum(own_mass - corpus.values, 0.0)
    change = corpus.values * (np.log(kept + SMOOTHING) - np.log(own_mass + SMOOTHING))
    size = np.bincount(corpus.rows, corpus.values, minlength=corpus.n_docs)
    doc_totals = totals[corpus.routes].astype(np.float64)
    shrink = size * (np.log(np.maximum(doc_totals - size, 1e-9)) - np.log(doc_totals))
    change_sum = np.bincount(corpus.rows, change, minlength=corpus.n_docs)
    logits[np.arange(corpus.n_docs), own] += (change_sum - shrink).astype(np.float32)
    return logits


def _rates(
    corpus: Corpus, chars: bool, char_sizes: tuple[int, ...] = CORRECTED_CHAR_SIZES
) -> Float32Array:
    """Each term's learning rate (terms x 1): words, CHAR_RATE for the character n-grams of
    `char_sizes` when `chars`, else 0."""
    sizes = corpus.char_sizes if chars else np.where(corpus.char_sizes > 0, -1, 0)
    rates = np.where(sizes == 0, 1.0, np.where(np.isin(sizes, char_sizes), CHAR_RATE, 0.0))
    result: Float32Array = (LEARNING_RATE * rates).astype(np.float32)[:, None]
    return result


class _Correction:
    """Softmax regression on the corrected terms, on top of fixed `base` logits (in place).

    Successive `fit` calls continue the same weights and momentum, so one learner can train
    without the held-out texts first and with every text after.
    """

    def __init__(
        self,
        corpus: Corpus,
        n_routes: int,
        chars: bool = True,
        margin: float = 0.0,
        char_sizes: tuple[int, ...] = CORRECTED_CHAR_SIZES,
    ):
        self.rates = _rates(corpus, chars, char_sizes)
        learned = (self.rates[:, 0] > 0.0)[corpus.ids]
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

    def scale_rates(self, factor: float) -> None:
        """Scale every learning rate by `factor`."""
        self.rates *= np.float32(factor)

    def add_to(self, weights: Float32Array) -> None:
        """Add the learned correction to `weights` (terms x routes), in place."""
        weights += self.weights

    def logits(self, docs: npt.NDArray[np.bool_]) -> Float32Array:
        """The correction's logits of the texts `docs` over every route."""
        return corpus_logits(self.weights, select(self.corpus, docs))

    def fit(
        self,
        base: Float32Array,
        docs: npt.NDArray[np.bool_],
        epochs: int,
        seed: int,
        progress: Progress = NO_PROGRESS,
    ) -> None:
        """`epochs` passes over the texts `docs` in mini-batches (order fixed by `seed`)."""
        train = select(self.corpus, docs)
        if train.n_docs == 0 or self.n_routes < 2 or epochs <= 0:
            progress(1.0)
            return
        base = base[docs]
        batches = make_batches(train, progress.part(0.0, BATCHING_SHARE))
        learning = progress.part(BATCHING_SHARE, 1.0)
        order = np.random.default_rng(seed)
        total, done = epochs * len(batches), 0
        for _ in range(epochs):
            for index in order.permutation(len(batches)):
                batch = batches[index]
                _step(
                    batch, train.routes, base, self.weights, self.velocity, self.rates, self.margin
                )
                done += 1
                learning(done / total)
        progress(1.0)


def _step(
    batch: Batch,
    routes: IntArray,
    base: Float32Array,
    weights: Float32Array,
    velocity: Float32Array,
    rates: Float32Array,
    margin: float = 0.0,
) -> None:
    """One momentum-SGD step of the softmax loss with an additive `margin`, in place."""
    # np.take rather than fancy indexing: several times faster for gathering rows.
    active = np.take(weights, batch.terms, axis=0)
    logits = np.take(base, batch.docs, axis=0)
    logits += batch.matrix @ active
    own = (np.arange(len(batch.docs)), routes[batch.docs])
    logits[own] -= margin
    logits -= logits.max(axis=1, keepdims=True)
    error = np.exp(logits)
    error /= error.sum(axis=1, keepdims=True)
    error[own] -= 1.0
    error /= len(batch.docs)
    moved = np.take(velocity, batch.terms, axis=0)
    moved *= MOMENTUM
    moved += batch.transposed @ error
    velocity[batch.terms] = moved
    moved *= np.take(rates, batch.terms, axis=0)
    weights[batch.terms] = active - moved


def fit_temperature(logits: Float32Array, labels: IntArray) -> float:
    """The temperature T minimising the held-out log-loss of softmax(logits / T), against a
    prior at 1, the temperature of a pack too small to calibrate (`calibration.
    fit_temperature`: as if PRIOR_TEXTS more held-out texts had asked for it).

    Without the prior, held-out texts that are all placed right, as they are in a small
    profile of distinct routes (200-400 texts hold out 20-40), ask for T -> 0: the fit ran
    to its bound 0.05, every score came out 0 or 1, the floor could refuse nothing, and on
    CLINC150 subsets of 8-30 routes x 10-40 examples 8 packs of 18 let 96-99% of val's
    out-of-scope messages through (docs/lab/benchmarks.md). With 1,500 held-out texts the prior
    moves T by under 1%.

    Returns:
        T in [0.05, 20]; 1.0 when there is nothing to fit on.
    """
    if len(labels) == 0:
        return 1.0
    return round(_fit_temperature(logits, labels, 1.0, (0.05, 20.0)), 4)


def fit_floor(
    logits: Float32Array,
    labels: IntArray,
    n_scored: int,
    routes_of: IntArray | None = None,
    refused: float = FLOOR_REFUSED,
) -> float | None:
    """The score under which `refused` of the held-out in-scope texts' top routes fall (at
    most FLOOR_CAP).

    Scores are calibrated probabilities, but how low an in-scope message's best score sinks
    depends on how many routes share its words; a quantile of held-out texts means the same
    in every pack of a size: about one in-scope message in 1 / `refused` is refused. A pack
    of few texts a route refuses more (`_few.floor_refused`).

    Args:
        logits: the held-out texts' calibrated logits (texts x columns).
        labels: each text's own column.
        n_scored: routes below this index are scored; the rest are the out-of-scope class.
        routes_of: the route of each text's each column, when a large pack learned against
            candidate routes (texts x candidates); None when column i is route i.
        refused: the share refused; a large pack's (FLOOR_REFUSED) unless the caller says.

    Returns:
        The floor, or None without a held-out in-scope text.
    """
    probabilities = _route_probabilities(logits, labels, n_scored, routes_of)
    return None if probabilities is None else _floor_of(probabilities, refused)


def _floor_refused(labels: IntArray, n_scored: int) -> float:
    """The share of held-out in-scope texts this pack's floor refuses, by its routes' own
    texts a route (`labels`: every text's route, the out-of-scope class's not counted)."""
    route_texts = int(np.count_nonzero(np.asarray(labels) < n_scored))
    return _few.floor_refused(route_texts, n_scored)


def fit_margin(
    logits: Float32Array,
    labels: IntArray,
    n_scored: int,
    floor: float | None,
    routes_of: IntArray | None = None,
) -> float | None:
    """The pairwise gap under which MENU_SHARE of the held-out in-scope texts above the floor
    fall (at most MARGIN_CAP): a menu for what is a near-tie on text like the examples.

    A pack's gaps shrink as its routes get fewer examples and more alike, so one margin for
    every pack offers menus on a large share of a small profile's turns. Arguments as for
    `fit_floor`.

    Returns:
        The margin, or None without two routes or a held-out in-scope text above the floor.
    """
    if n_scored < 2:
        return None
    probabilities = _route_probabilities(logits, labels, n_scored, routes_of)
    return None if probabilities is None else _margin_of(probabilities, floor)


def fit_none_logit(logits: Float32Array, labels: IntArray, n_scored: int) -> float | None:
    """How far above the routes' mean calibrated logit the "no route" column stands: the
    NONE_REFUSED quantile of the held-out in-scope texts' best route over that mean.

    A softmax over the routes alone spends all of a message's mass on them, however little
    the message says for any: an off-topic message whose words lean slightly one way scores
    as high as a request. How far the best route's logit stands above the routes' mean is
    the evidence itself (AUROC 0.965 against the top relevance's 0.946 on CLINC150 test's
    in-scope and out-of-scope messages), and a column at the level that only the weakest
    held-out requests fall under takes most of such a message's mass, while a request keeps
    nearly all of its own (docs/pack-format.md, Lexical scorer, step 7). Measured from the
    mean, so that it means the same whatever constant a term's weights are stored relative to.

    A pack that learned an out-of-scope class (its own examples, or the built-in
    background) already has a column where such a message's mass goes, learned from what
    off-topic text looks like; it gets no second one (on the small profiles' dev splits a
    second one cost up to half a point of in-scope decisions for one or two points of
    out-of-scope recall: docs/decisions.md, "A column for no route").

    Args:
        logits: the held-out texts' calibrated logits (texts x columns, column i route i).
        labels: each text's own column.
        n_scored: columns below this index are routes; the rest are the out-of-scope class.

    Returns:
        The column's logit over the mean, or None without a held-out in-scope text, with
        fewer than two routes or with an out-of-scope class.
    """
    in_scope = np.asarray(labels) < n_scored
    if n_scored < 2 or logits.shape[1] > n_scored or not in_scope.any():
        return None
    routes = np.asarray(logits, np.float64)[in_scope, :n_scored]
    lead = routes.max(axis=1) - routes.mean(axis=1)
    return round(float(np.quantile(lead, NONE_REFUSED)), 4)


def with_no_route(logits: Float32Array, n_scored: int, none_logit: float | None) -> Float32Array:
    """The calibrated logits with the "no route" column after them (`none_logit` above each
    text's mean route logit), or as they are without one.

    The floor and the margin are fitted on the scores the router will compute: with the
    column, a request's best route scores a little less, and a floor fitted without it
    refused more requests than it meant to (on the development splits, 0.1–0.4 points of
    in-scope decisions). To `fit_floor` and `fit_margin` the column is one more that is not
    a route: in every softmax, in no route's score.
    """
    if none_logit is None:
        return logits
    rows = np.asarray(logits, np.float64)
    column = rows[:, :n_scored].mean(axis=1, keepdims=True) + none_logit
    result: Float32Array = np.concatenate([rows, column], axis=1).astype(np.float32)
    return result


def _route_probabilities(
    logits: Float32Array, labels: IntArray, n_scored: int, routes_of: IntArray | None
) -> npt.NDArray[np.float64] | None:
    """The in-scope texts' softmax over every column, the out-of-scope class's cells at 0."""
    if routes_of is None:
        routes_of = np.broadcast_to(np.arange(logits.shape[1]), logits.shape)
    rows = np.arange(len(labels))
    in_scope = routes_of[rows, labels] < n_scored
    if not in_scope.any():
        return None
    scaled = logits[in_scope].astype(np.float64)
    scaled -= scaled.max(axis=1, keepdims=True)
    probabilities = np.exp(scaled)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    probabilities[routes_of[in_scope] >= n_scored] = 0.0
    return probabilities


def log_loss(logits: Float32Array, labels: IntArray, temperature: float) -> float:
    """Mean negative log-probability of the right route under softmax(logits / T)."""
    scaled = logits.astype(np.float64) / temperature
    scaled -= scaled.max(axis=1, keepdims=True)
    log_norm = np.log(np.exp(scaled).sum(axis=1))
    return float(np.mean(log_norm - scaled[np.arange(len(labels)), labels]))
