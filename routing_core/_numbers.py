"""How a decision event writes its numbers (docs/event-schema.md): three decimals, and the
non-finite ones as text so the event stays valid JSON.

One rule, two speeds. `event_number` rounds one value as `round(value, 3)` does.
`event_numbers` rounds a whole array to the very same floats: an event carries every route's
score and relevance, and at 150 routes rounding them one Python call at a time cost as much
as the turn itself (docs/server.md). numpy's `round` multiplies by 1,000, rounds to an
integer and divides back, which can differ from Python's correctly rounded `round` only when
the product lands next to a half or is too large to hold an integer exactly; those few
values, and the non-finite ones, go through `event_number`.
"""

from __future__ import annotations

import math

import numpy as np

from routing_core._types import Float64Array

# Beyond this magnitude a value times 1,000 may not keep its integer part exactly.
_EXACT_BELOW = 2.0**40
# How close to a half (in units of the third decimal) counts as "next to" one: products of
# 1,000 and a double are off by far less than this (a few units in the last place).
_NEAR_HALF = 1e-6


def event_number(value: float | None) -> float | str | None:
    """Round to 3 decimals; write non-finite numbers as strings so the event stays valid JSON."""
    if value is None:
        return None
    if 0.0 < value < 0.0005:
        # What round(value, 3) gives, without rounding: most of a large pack's scores and
        # relevances are this small (docs/server.md).
        return 0.0
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return round(value, 3)


def event_numbers(values: Float64Array) -> list[float | str | None]:
    """`[event_number(v) for v in values]`, computed on the array at once."""
    if values.size == 0:
        return []
    # The usual case in a few whole-array steps: every value finite and small (a NaN peak
    # compares false), and no product next to a half. `distance` is at most 0.5, so the
    # largest is the one nearest a half (rounding is monotone): one test covers them all.
    if np.maximum.reduce(np.abs(values)) < _EXACT_BELOW:  # `.max()` without its wrapper
        scaled = values * 1000.0
        rounded = np.rint(scaled)
        distance = np.maximum.reduce(np.abs(np.subtract(scaled, rounded, out=scaled), out=scaled))
        if not abs(distance - 0.5) < _NEAR_HALF:
            quick: list[float | str | None] = np.divide(rounded, 1000.0, out=rounded).tolist()
            return quick
    return _event_numbers_with_care(values)


def _event_numbers_with_care(values: Float64Array) -> list[float | str | None]:
    """`event_numbers` when a value is not finite, very large or next to a half: those go
    through `event_number` one by one."""
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = values * 1000.0
        rounded = np.rint(scaled)
        # Not below the bound: too large, infinite or NaN (every comparison with NaN fails).
        unsure = ~(np.abs(scaled) < _EXACT_BELOW * 1000.0)
        distance = np.abs(scaled - rounded, out=scaled)  # the product is not read again
        unsure |= np.abs(distance - 0.5, out=distance) < _NEAR_HALF
        out: list[float | str | None] = np.divide(rounded, 1000.0, out=rounded).tolist()
    for i in np.flatnonzero(unsure).tolist():
        out[i] = event_number(float(values[i]))
    return out
