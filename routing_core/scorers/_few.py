"""How a pack with few examples per route learns differently from a large one.

A profile starts with 10-30 examples per route. The large-pack schedule in `_model.py` holds
every tenth text out for the temperature and learns it only in the last pass over every
text; at ten examples per route that pass is a few batches, so the held-out texts (one per
route) are barely learned. The last passes now take at least MIN_FINAL_STEPS steps, as the
held-out passes take MIN_HELD_STEPS (measured on development subsamples,
docs/benchmarks.md "Few examples per route (session 5)").

It depends on the pack's size only: a pack of MIN_FINAL_STEPS batches or more (CLINC150,
Banking77, HWU64 in full) learns exactly as before, at the same cost.
"""

from __future__ import annotations

import math

# The last passes over every text take at least this many mini-batch steps (a pack of 64
# routes x 10 examples is three batches a pass). Chosen on the 10-per-route subsamples of
# CLINC150 (val), Banking77 and HWU64 (training examples left out): 12 / 25 / 50 steps all
# gain on Banking77 and HWU64 and are flat on CLINC150; 25 is the middle.
MIN_FINAL_STEPS = 25


def final_epochs(n_docs: int, batch: int, least: int) -> int:
    """Passes over every text at the end: `least`, or enough for MIN_FINAL_STEPS batches."""
    batches = max(1, math.ceil(n_docs / batch))
    return max(least, math.ceil(MIN_FINAL_STEPS / batches))
