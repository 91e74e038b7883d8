"""The lexical scorer's semantic view: a linear classifier on the texts' static vectors.

Each route text also has a meaning vector (`_static.py`: the mean of its word pieces'
vectors, distilled from a sentence encoder). A shrunk linear discriminant on those vectors
(one mean per route, one covariance shared by all, pulled towards a multiple of the identity)
scores a message by how close its meaning is to each route's, in the directions that tell
the routes apart. It is learned in closed form (a covariance and one solve: milliseconds at
CLINC150 size, where gradient descent on the same vectors took 2.4 s), it needs no seed, and
its scores are one (dimensions x routes) product per turn.

`_model.train` adds these scores to the lexical logits at a weight fitted on the held-out
texts, with the temperature, before the floor and margin are fitted on the sum (so they
keep their meaning). Its gain is largest where the lexical model is weakest, on routes with
few examples, whose messages use words no example used (docs/lab/benchmarks.md, "A semantic
view in the lexical scorer").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from routing_core._types import Float32Array, IntArray
from routing_core.scorers import _static

# The covariance is (1 - SHRINK) x the texts' pooled within-route covariance + SHRINK x its
# mean variance on the diagonal: with 10 examples per route a pooled covariance of 256
# dimensions is poorly estimated, and the shrunk one also keeps the solve well posed.
# 0.1 and 0.3 scored within 0.3 of each other on every dev split; 0.3 was ahead on the
# few-example ones (docs/lab/benchmarks.md).
SHRINK = 0.3
# The largest weighted number a view may hold (float16 reaches 65,504).
STORABLE = 60_000.0
# Off: models learn the words alone, as before this view existed (for measuring it).
ENABLED = True


@dataclass(frozen=True, slots=True)
class Semantic:
    """What a model learned of the texts' meaning: `weight` x (vector @ matrix + bias) joins
    each route's logit. `matrix` is (dimensions x routes), `bias` one value per route;
    `table`: the static table (`_static`) whose vectors it learned on, the one a turn reads."""

    matrix: Float32Array
    bias: Float32Array
    weight: float
    table: str = field(default_factory=lambda: _static.TABLE)

    def folded(self) -> tuple[Float32Array, Float32Array]:
        """(matrix, bias) with the weight in them: what a turn adds is vector @ matrix + bias,
        and what the pack stores."""
        weight = np.float32(self.weight)
        return self.matrix * weight, self.bias * weight

    def storable(self) -> bool:
        """Whether the weighted numbers fit the pack's float16 (a degenerate covariance,
        texts identical within each route, could overflow it; such a view is left out)."""
        largest = max(float(np.abs(part).max(initial=0.0)) for part in self.folded())
        return bool(np.isfinite(largest)) and largest < STORABLE


def fit(
    vectors: Float32Array, routes: IntArray, n_routes: int, docs: npt.NDArray[np.bool_]
) -> tuple[Float32Array, Float32Array]:
    """The shrunk discriminant learned from the texts `docs`: (matrix, bias), weight 1.

    A route with no text among `docs` gets the mean of all of them, so it scores as an
    average route rather than as the origin.
    """
    from scipy import sparse  # learning only: scoring a message never needs it

    x = vectors if docs.all() else vectors[docs]
    own = routes[docs]
    n, dims = x.shape
    if n == 0:
        return np.zeros((dims, n_routes), np.float32), np.zeros(n_routes, np.float32)
    counts = np.bincount(own, minlength=n_routes).astype(np.float64)
    present = counts > 0
    # Sums and the within-route scatter without a texts x dimensions temporary: the scatter
    # is X'X minus each route's count x mean x mean'.
    members = sparse.csr_array((np.ones(n, np.float32), (own, np.arange(n))), (n_routes, n))
    sums = np.asarray(members @ x, np.float64)
    means = np.broadcast_to(sums.sum(axis=0) / n, (n_routes, dims)).copy()
    means[present] = sums[present] / counts[present, None]
    scatter = (x.T @ x).astype(np.float64) - (means[present].T * counts[present]) @ means[present]
    covariance = scatter / n
    spread = max(float(np.trace(covariance)) / dims, 1e-6)
    covariance *= 1.0 - SHRINK
    covariance[np.diag_indices(dims)] += SHRINK * spread
    matrix = np.linalg.solve(covariance, means.T)  # dims x routes
    bias = -0.5 * np.einsum("rd,dr->r", means, matrix)
    return matrix.astype(np.float32), bias.astype(np.float32)
