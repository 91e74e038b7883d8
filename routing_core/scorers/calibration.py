"""Calibrating a tier's scores on held-out texts, so that thresholds mean the same on every tier.

The lexical build fits a temperature, an out-of-scope floor and a near-tie margin on texts
its correction has not seen (`_model.py`). The embedding and hybrid tiers do the same here,
at compile time, on the same share of held-out examples: every HOLD_OUT-th example of each
route. Their scores then are probabilities (a softmax of the cosines at the fitted
temperature), and the floor and the margin are the same quantiles of those held-out texts
as the lexical build's: about FLOOR_REFUSED of in-scope messages like the examples fall
under the floor, and MENU_SHARE of those above it are a near-tie. A policy floor of 0.6 or
a margin of 0.1 then asks the same of every tier.

Pure numpy: no encoder, no torch; the embedding module feeds it cosines.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from routing_core._types import Float64Array, IntArray

# One rule for every tier, first chosen for the lexical build (`_model.py`).
# Every HOLD_OUT-th text is kept out of a trial correction to fit the temperature on; a
# pack with fewer held-out texts than MIN_CALIBRATION keeps temperature 1, or fits it by
# cross-validation (`_few.CV_TEXTS`).
HOLD_OUT = 10
MIN_CALIBRATION = 20
# The default floor refuses this share of held-out in-scope texts (`fit_floor`). Chosen on
# CLINC150 val, the one shared set with out-of-scope messages: 0.025-0.045 all keep in-scope
# accuracy >= 90% with out-of-scope recall >= 60%, with or without out-of-scope examples
# (docs/lab/benchmarks.md). Held-out texts come from the examples, so they are surer than real
# traffic: the floor that 3% of them fall under holds 4.2% of CLINC150 val's in-scope ones.
# The lexical build refuses more in a pack of few examples a route (`_few.floor_refused`);
# the embedding and hybrid tiers keep this share, whose requests a higher floor would refuse
# were going right more often (docs/decisions.md, "A floor for few examples a route").
FLOOR_REFUSED = 0.03
# ... but never above this calibrated probability: on examples made from a few templates
# every held-out text is near certain, and a floor near 1 would refuse plain paraphrases.
FLOOR_CAP = 0.7
# The default near-tie margin offers a menu to about this share of the held-out in-scope
# texts the floor keeps (`fit_margin`), and is never wider than the policy's default 0.15. At 0.15 a
# profile of 10-20 examples per route offered a menu on 16% of dev-fold messages (HWU64
# 10-shot: in-scope accuracy 61.7% vs 71.1% without menus); chosen on dev folds of the
# training splits (docs/lab/benchmarks.md).
MENU_SHARE = 0.02
MARGIN_CAP = 0.15
# Cosine temperatures are searched in this range: intent clusters sit hundredths of cosine
# apart (CLINC150 and banking77 both fit 0.031), and at 1 every route would look alike.
TEMPERATURE_RANGE = (0.002, 1.0)
# The fit weighs the texts against a prior: as if PRIOR_TEXTS more held-out texts had asked
# for the tier's default temperature (a Gaussian prior on log T). Held-out texts that are all
# classified right, as a few templates make them, ask for T -> 0 (every score 0 or 1, so that
# gibberish would be as sure as an example, and no floor could refuse it); with the prior
# they ask for a little less than the default. 1,500 held-out texts (CLINC150) move 0.03122
# to 0.03121 (banking77, 965 texts: 0.03121 to 0.03113): a pack with enough is not held back.
PRIOR_TEXTS = 20


@dataclass(frozen=True, slots=True)
class Calibration:
    """What a tier fitted on its held-out texts.

    `calibrated`: there were enough held-out texts (MIN_CALIBRATION); otherwise `temperature`
    is the default and `floor` and `margin` are None. `held_out`: how many texts it fitted on.
    """

    temperature: float
    floor: float | None
    margin: float | None
    calibrated: bool
    held_out: int


def held_out_examples(counts: Sequence[int]) -> list[tuple[int, int]]:
    """(route, example index) of the examples to hold out: every HOLD_OUT-th of each route,
    starting at its HOLD_OUT-th (so a route needs HOLD_OUT examples to give one, and always
    keeps most of its own). Deterministic: the same pack fits the same numbers."""
    return [(route, i) for route, n in enumerate(counts) for i in range(HOLD_OUT - 1, n, HOLD_OUT)]


def softmax_rows(logits: npt.ArrayLike, temperature: float) -> Float64Array:
    """Row-wise softmax of logits / temperature; a row of -inf (nothing scored) stays 0."""
    scaled = np.asarray(logits, np.float64) / temperature
    top = scaled.max(axis=1, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    shares = np.exp(scaled - top)
    totals = shares.sum(axis=1, keepdims=True)
    totals[totals == 0.0] = 1.0
    out: Float64Array = shares / totals
    return out


def log_loss(logits: npt.ArrayLike, labels: IntArray, temperature: float) -> float:
    """Mean negative log-probability of each text's own column under softmax(logits / T)."""
    scaled = np.asarray(logits, np.float64) / temperature
    scaled -= scaled.max(axis=1, keepdims=True)
    log_norm = np.log(np.exp(scaled).sum(axis=1))
    return float(np.mean(log_norm - scaled[np.arange(len(labels)), labels]))


def fit_temperature(
    logits: npt.ArrayLike,
    labels: IntArray,
    prior: float | None = None,
    bounds: tuple[float, float] = TEMPERATURE_RANGE,
) -> float:
    """The T in `bounds` minimising the log-loss of softmax(logits / T), plus, with a `prior`
    temperature, PRIOR_TEXTS texts' worth of (log T - log prior)^2 (golden section on log T).

    Without the prior the log-loss is convex in 1/T: one minimum, at a bound when the texts
    ask for more. The prior keeps texts that are all classified right from asking for T -> 0.
    """
    rows = np.asarray(logits, np.float64)
    weight = 0.0 if prior is None or len(labels) == 0 else PRIOR_TEXTS / len(labels)
    centre = math.log(prior) if prior else 0.0

    def cost(log_t: float) -> float:
        return log_loss(rows, labels, math.exp(log_t)) + weight * (log_t - centre) ** 2

    low, high = math.log(bounds[0]), math.log(bounds[1])
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    left, right = high - ratio * (high - low), low + ratio * (high - low)
    at_left, at_right = cost(left), cost(right)
    for _ in range(48):  # one new cost a step: the kept point is the next step's other one
        if at_left <= at_right:
            high, right, at_right = right, left, at_left
            left = high - ratio * (high - low)
            at_left = cost(left)
        else:
            low, left, at_left = left, right, at_right
            right = low + ratio * (high - low)
            at_right = cost(right)
    return round(math.exp((low + high) / 2.0), 5)


def fit_floor(probabilities: npt.ArrayLike, refused: float = FLOOR_REFUSED) -> float | None:
    """The score under which `refused` (FLOOR_REFUSED unless the caller says) of the held-out
    in-scope texts' top routes fall (at most FLOOR_CAP); None without a text. Rows are texts,
    columns routes."""
    rows = np.asarray(probabilities, np.float64)
    if rows.size == 0:
        return None
    top = rows.max(axis=1)
    return round(min(float(np.quantile(top, refused)), FLOOR_CAP), 4)


def fit_margin(probabilities: npt.ArrayLike, floor: float | None) -> float | None:
    """The pairwise gap (tanh of half the difference; docs/pack-format.md, Floors and
    margins) under which MENU_SHARE of the
    held-out texts above the floor fall (at most MARGIN_CAP): a menu for what is a near-tie
    on text like the examples. None without two routes or a text above the floor."""
    rows = np.asarray(probabilities, np.float64)
    if rows.ndim != 2 or rows.shape[1] < 2 or rows.shape[0] == 0:
        return None
    ordered = np.sort(rows, axis=1)
    alive = ordered[:, -1] > (floor or 0.0)
    if not alive.any():
        return None
    gaps = np.tanh((ordered[alive, -1] - ordered[alive, -2]) / 2.0)
    return round(min(float(np.quantile(gaps, MENU_SHARE)), MARGIN_CAP), 4)


def calibrate_logits(
    logits: npt.ArrayLike,
    labels: IntArray,
    default: float,
    bounds: tuple[float, float] = TEMPERATURE_RANGE,
) -> Calibration:
    """Temperature, floor and margin from held-out texts' logits (texts x routes) and routes.

    `default`: the tier's temperature without calibration, and the fit's prior; `bounds`:
    where the temperature is searched. Fewer than MIN_CALIBRATION texts: `default`
    temperature, no floor, no margin.
    """
    rows = np.asarray(logits, np.float64)
    if len(rows) < MIN_CALIBRATION or rows.ndim != 2 or rows.shape[1] < 2:
        return Calibration(default, None, None, False, len(rows))
    temperature = fit_temperature(rows, labels, default, bounds)
    probabilities = softmax_rows(rows, temperature)
    floor = fit_floor(probabilities)
    return Calibration(temperature, floor, fit_margin(probabilities, floor), True, len(rows))


def fit_weights(
    features: Sequence[npt.ArrayLike],
    labels: IntArray,
    start: Sequence[float],
    steps: int = 25,
) -> Float64Array:
    """The θ minimising the held-out log-loss of softmax(Σ θ_k features_k), row-wise, plus
    PRIOR_TEXTS texts' worth of |θ - start|² (Newton's method; the loss is convex in θ).

    `features`: matrices of the same shape (texts x routes), e.g. each half's log
    probabilities; `start`: where the search begins and the prior is centred. The prior
    keeps held-out texts every feature classifies right (they ask for θ -> ∞) at a finite θ.
    """
    rows = np.stack([np.asarray(f, np.float64) for f in features])  # k x texts x routes
    theta = np.asarray(start, np.float64).copy()
    centre = theta.copy()
    n = rows.shape[1]
    ridge = PRIOR_TEXTS / max(1, n)
    own = rows[:, np.arange(n), labels]  # k x texts

    def cost(t: Float64Array) -> float:
        z = np.tensordot(t, rows, axes=1)
        top = z.max(axis=1)
        norm = top + np.log(np.exp(z - top[:, None]).sum(axis=1))
        return float(np.mean(norm - t @ own) + ridge * np.sum((t - centre) ** 2))

    current = cost(theta)
    for _ in range(steps):
        p = softmax_rows(np.tensordot(theta, rows, axes=1), 1.0)
        expected = np.einsum("tr,ktr->kt", p, rows)  # k x texts
        grad = np.mean(expected - own, axis=1) + 2.0 * ridge * (theta - centre)
        second = np.einsum("tr,ktr,ltr->kl", p, rows, rows) / n - expected @ expected.T / n
        step = np.linalg.solve(second + 2.0 * ridge * np.eye(len(theta)), grad)
        scale = 1.0
        while scale > 1e-4:
            trial = theta - scale * step
            value = cost(trial)
            if value <= current:
                break
            scale /= 2.0
        else:
            break
        converged = current - value < 1e-10
        theta, current = trial, value
        if converged:
            break
    return theta
