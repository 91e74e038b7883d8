"""The lexical model's arrays as a pack stores them, and the checks that refuse misfits.

A pack's `scorer.model` holds its numbers as base64 of little-endian arrays
(docs/pack-format.md). Validating a pack checks that they decode and fit the shapes the model
declares, so this sits below `pack.py`, which runs the checks, and below
`scorers/stored.py`, which encodes and decodes the arrays: neither imports the other for it.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt


class SemanticArrays(Protocol):
    """What the checks read of a stored semantic view (pack.py's model of it)."""

    @property
    def table(self) -> str: ...
    @property
    def matrix(self) -> str: ...
    @property
    def bias(self) -> str: ...


class ModelArrays(Protocol):
    """What the checks read of a stored lexical model: pack.py's `LexicalModel`, named by
    shape so that this module stays below pack.py (it checks the model while pack.py builds it).
    """

    @property
    def idf(self) -> str: ...
    @property
    def cells(self) -> str: ...
    @property
    def weights(self) -> str: ...
    @property
    def terms(self) -> Sequence[str]: ...
    @property
    def routes(self) -> int: ...
    @property
    def bias(self) -> str | None: ...
    @property
    def semantic(self) -> SemanticArrays | None: ...


# The static word-piece tables this version knows (`scorers/_static.py` reads them), and the
# one new views learn on. A pack names the table its semantic view learned on; a new table
# gets a new name, so that a pack keeps scoring as it was built or says it cannot.
# ROUTING_CORE_SEMANTIC_TABLE picks another known table for the views built in this process
# (docs/lab/benchmarks.md, "Languages", says why the multilingual one is not the default).
MINILM = "minilm-l6-static-256"
E5 = "e5-small-static-256"
TABLES = (MINILM, E5)
TABLE = os.environ.get("ROUTING_CORE_SEMANTIC_TABLE", MINILM)
if TABLE not in TABLES:
    raise ValueError(f"ROUTING_CORE_SEMANTIC_TABLE={TABLE!r} is not one of {TABLES}")
DIMENSIONS = 256


def check_model(model: ModelArrays) -> None:
    """Refuse arrays that do not decode or do not fit the declared shape.

    Raises:
        ValueError: with what is wrong.
    """
    try:
        idf = unpack_array(model.idf, "<f2")
        cells = unpack_array(model.cells, "<u4").astype(np.int64)
        values = unpack_array(model.weights, "<f2")
    except ValueError as exc:
        raise ValueError(f"model arrays must be base64 of whole numbers: {exc}") from None
    if len(idf) != len(model.terms):
        raise ValueError(f"model.idf has {len(idf)} values for {len(model.terms)} terms")
    if len(values) != len(cells):
        raise ValueError(f"model.weights has {len(values)} values for {len(cells)} cells")
    if len(set(model.terms)) != len(model.terms):
        raise ValueError("model.terms must be distinct")
    if len(cells) and (
        cells[-1] >= len(model.terms) * model.routes or np.any(cells[1:] <= cells[:-1])
    ):
        raise ValueError("model.cells must be ascending and inside terms x routes")
    if not (np.all(np.isfinite(idf)) and np.all(np.isfinite(values))):
        raise ValueError("model arrays must be finite")
    _check_bias(model)
    _check_semantic(model)


def _check_bias(model: ModelArrays) -> None:
    """Refuse intercepts that do not decode, are not one per route column, or not finite."""
    if model.bias is None:
        return
    try:
        bias = unpack_array(model.bias, "<f2")
    except ValueError as exc:
        raise ValueError(f"model.bias must be base64 of float16 numbers: {exc}") from None
    if len(bias) != model.routes:
        raise ValueError(f"model.bias has {len(bias)} values for {model.routes} routes")
    if not np.all(np.isfinite(bias)):
        raise ValueError("model.bias must be finite")


def _check_semantic(model: ModelArrays) -> None:
    """Refuse a semantic view on a table this version lacks, or of the wrong shape."""
    view = model.semantic
    if view is None:
        return
    if view.table not in TABLES:
        raise ValueError(
            f"model.semantic.table {view.table!r} is not one this routing_core has"
            f" ({', '.join(TABLES)}); build the pack again with this version"
        )
    try:
        matrix = unpack_array(view.matrix, "<f2")
        bias = unpack_array(view.bias, "<f2")
    except ValueError as exc:
        raise ValueError(f"model.semantic arrays must be base64 of float16: {exc}") from None
    if len(matrix) != DIMENSIONS * model.routes:
        raise ValueError(
            f"model.semantic.matrix has {len(matrix)} values for {DIMENSIONS}"
            f" dimensions x {model.routes} routes"
        )
    if len(bias) != model.routes:
        raise ValueError(f"model.semantic.bias has {len(bias)} values for {model.routes} routes")
    if not (np.all(np.isfinite(matrix)) and np.all(np.isfinite(bias))):
        raise ValueError("model.semantic arrays must be finite")


def pack_array(array: npt.NDArray[np.generic]) -> str:
    """An array as a pack stores it: base64 of its bytes (the caller fixes the dtype, little-endian)."""
    return base64.b64encode(array.tobytes()).decode("ascii")


def unpack_array(text: str, dtype: str) -> npt.NDArray[np.generic]:
    """A stored array back, read-only; ValueError when the text is not base64 of whole `dtype`s."""
    raw = base64.b64decode(text.encode("ascii"), validate=True)
    return np.frombuffer(raw, dtype=dtype)
