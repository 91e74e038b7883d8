"""Large arrays written once, in ordinary pages rather than the huge pages numpy asks for.

numpy advises the kernel to back every array of 4 MB or more with 2 MB huge pages. For an
array read at random many times that pays (fewer TLB misses); for one written front to back
once it does not: each huge page must first be found whole, compacting memory when it is
fragmented (on a machine shared with other work it always is), and zeroed at once. Measured at
2,000 x 25 (docs/lab/benchmarks.md, "Learning at 2,000 routes, fifth pass"): the candidate
learner's 207 MB table of entries' cells cost 0.5 s of system time in huge pages, 0.06 s in
4 KB pages, and the build's whole system time fell from 1.1-1.7 s to 0.6 s.
"""

from __future__ import annotations

import math
import mmap
from typing import TypeVar

import numpy as np
import numpy.typing as npt

Scalar = TypeVar("Scalar", bound=np.generic)


def zeros_in_small_pages(shape: tuple[int, ...], dtype: type[Scalar]) -> npt.NDArray[Scalar]:
    """`np.zeros(shape, dtype)` in an anonymous mapping of ordinary pages (no huge-page advice).

    The mapping is the array's buffer: it is unmapped when the array is freed.
    """
    kind = np.dtype(dtype)
    count = math.prod(shape)
    buffer = mmap.mmap(-1, max(1, count * kind.itemsize))
    array: npt.NDArray[Scalar] = np.frombuffer(buffer, kind, count=count).reshape(shape)
    return array
