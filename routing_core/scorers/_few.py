"""How a pack with few examples per route learns differently from a large one.

A profile starts with 10-30 examples per route. Two things the large-pack schedule in
`_model.py` gets wrong there (measured on development subsamples, docs/lab/benchmarks.md "Few
examples per route (session 5)"):

- **The last pass is a handful of steps.** Every tenth text is held out for the temperature
  and learned only in the last pass over every text; at ten examples per route that pass is
  a few batches, so the held-out texts (one per route) are barely learned. The last passes
  now take at least MIN_FINAL_STEPS steps, as the held-out passes take MIN_HELD_STEPS.
- **Spelling carries more of the evidence.** With few examples, few words recur between an
  example and a message; the character 4-grams, left to naive Bayes in a large pack (as good
  there, at a third more cost), gain when the correction learns them too.

Both depend on the pack's size only, so a large pack (CLINC150, Banking77, HWU64 in full)
learns exactly as before, at the same cost. And a pack too small to hold texts out for a
temperature fits its out-of-scope floor and near-tie margin by cross-validation (below).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from routing_core.scorers.calibration import FLOOR_REFUSED

# The last passes over every text take at least this many mini-batch steps (a pack of 64
# routes x 10 examples is three batches a pass). Chosen on the 10-per-route subsamples of
# CLINC150 (val), Banking77 and HWU64 (training examples left out): 12 / 25 / 50 steps all
# gain on Banking77 and HWU64 and are flat on CLINC150; 25 is the middle.
MIN_FINAL_STEPS = 25


def final_epochs(n_docs: int, batch: int, least: int) -> int:
    """Passes over every text at the end: `least`, or enough for MIN_FINAL_STEPS batches."""
    batches = max(1, math.ceil(n_docs / batch))
    return max(least, math.ceil(MIN_FINAL_STEPS / batches))


# A pack of at most this many texts per route on average has few examples per route (the
# 4-grams gained at 10 per route and were neutral at 20 on the same subsamples) ...
FEW_PER_ROUTE = 20
# ... and its correction learns the character n-grams of these sizes (a large pack's: 3).
FEW_CHAR_SIZES = (3, 4)


def has_few_examples(n_docs: int, n_routes: int) -> bool:
    """Whether a pack has few texts per route (FEW_PER_ROUTE or fewer on average)."""
    return n_docs <= FEW_PER_ROUTE * max(1, n_routes)


def corrected_char_sizes(n_docs: int, n_routes: int, large: tuple[int, ...]) -> tuple[int, ...]:
    """The character n-gram sizes the correction learns: FEW_CHAR_SIZES in a pack with few
    examples per route, else `large` (a large pack's sizes)."""
    return FEW_CHAR_SIZES if has_few_examples(n_docs, n_routes) else large


# A pack of few texts a route refuses a larger share of messages like its examples. Its
# floor is a quantile of its held-out in-scope texts' best scores (`calibration.fit_floor`):
# a large pack's refuses FLOOR_REFUSED of them (3%), but at 10-20 texts a route one in
# seven of those texts is placed on a wrong route, and the requests a team has not written a
# route for yet (what a real bot's out-of-scope messages are: near its routes, not far from
# them) score like the weakest of its own. On the development subsamples (CLINC150 val,
# Banking77 and HWU64's training remainders; every fourth route of a profile left out, its
# messages the out-of-scope ones), refusing 10% instead of 3% at 10 and 20 texts a route
# left 40-56% of such messages unmatched instead of 20-44%, cost about 2 points of in-scope
# decisions on average, and on every profile avoided at least as many wrong moves as it
# lost right ones (docs/decisions.md, "A floor for few examples a route"). The share falls
# from FEW_FLOOR_REFUSED at FEW_PER_ROUTE texts a route to a large pack's (FLOOR_REFUSED) at
# MANY_PER_ROUTE,
# so that a profile growing by one example does not jump from one floor to the other.
FEW_FLOOR_REFUSED = 0.10
MANY_PER_ROUTE = 40


def floor_refused(route_texts: int, n_routes: int) -> float:
    """The share of held-out in-scope texts the floor refuses: FEW_FLOOR_REFUSED with
    FEW_PER_ROUTE route texts a route or fewer, a large pack's (FLOOR_REFUSED) with
    MANY_PER_ROUTE or more, on a straight line between. `route_texts`: the routes' own
    texts (names, descriptions, examples; not the out-of-scope class's)."""
    per_route = route_texts / max(1, n_routes)
    if per_route >= MANY_PER_ROUTE:
        return FLOOR_REFUSED
    if per_route <= FEW_PER_ROUTE:
        return FEW_FLOOR_REFUSED
    along = (per_route - FEW_PER_ROUTE) / (MANY_PER_ROUTE - FEW_PER_ROUTE)
    return FEW_FLOOR_REFUSED + along * (FLOOR_REFUSED - FEW_FLOOR_REFUSED)


# A pack too small to hold texts out for calibration (fewer than `_model.CALIBRATION_TEXTS`)
# but of at least CV_TEXTS texts fits its floor and near-tie margin on out-of-fold scores:
# CV_FOLDS models, each learned without every CV_FOLDS-th text, score the texts they left
# out. Such a pack learns as a calibrated one does unless its fold models, so learned, route
# its in-scope texts worse than the short schedule's (`_model.learns_fully_on_folds`); its
# temperature is fitted on the chosen schedule's scores (at least 1; 1 on the short one), and
# the thresholds are quantiles of them at that temperature, meaning what a large pack's mean
# (the same share of in-scope texts refused, the same share offered a menu). Measured on
# packs of 100-192 texts (docs/lab/benchmarks.md "Packs under 200 texts"); smaller ones keep
# none: fitted on their 20-99 out-of-fold texts the margin offers almost no menus, and a
# first day's profile then sends off-topic messages to a route (docs/decisions.md "Packs of
# 100-199 texts"; docs/lab/benchmarks.md "Packs of 20-99 texts").
CV_FOLDS = 5
CV_TEXTS = 100


def can_cross_validate(n_docs: int, n_routes: int) -> bool:
    """Whether a pack too small to calibrate is big enough to fit its thresholds by CV."""
    return n_docs >= CV_TEXTS and n_routes >= 2


def folds(n_docs: int) -> list[npt.NDArray[np.bool_]]:
    """The held-out texts of each fold: every CV_FOLDS-th text, by position (texts come in
    route order, so every route is spread over the folds)."""
    position = np.arange(n_docs) % CV_FOLDS
    return [position == fold for fold in range(CV_FOLDS)]
