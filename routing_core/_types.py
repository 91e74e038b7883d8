"""The array types routing_core's modules share, named once by what they hold.

Two float widths, on purpose: a model's numbers (weights, term values, meaning vectors,
logits) are float32, because at 2,000 routes a terms x routes array in float64 is gigabytes
and the pack stores them as float16 anyway; probabilities and the fits over them
(calibration, the policy's shares) are float64, because they sum many small numbers and a
threshold compares them to three decimals.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

# A model's numbers: weights, term values, meaning vectors, logits.
Float32Array: TypeAlias = npt.NDArray[np.float32]
# Probabilities, shares and the fits over them.
Float64Array: TypeAlias = npt.NDArray[np.float64]
# A scorer's scores as it made them: float32 or float64, whichever its tier computes in.
ScoreArray: TypeAlias = npt.NDArray[np.floating[Any]]
# Term ids, route ids, row numbers, cells.
IntArray: TypeAlias = npt.NDArray[np.int64]
# Positions numpy hands back (`argsort`, `arange`), in the platform's index width.
IndexArray: TypeAlias = npt.NDArray[np.intp]

__all__ = ["Float32Array", "Float64Array", "IndexArray", "IntArray", "ScoreArray"]
