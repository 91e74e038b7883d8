"""The lexical scorer's learned weights as a compact pack field (`scorer.model`), both ways.

Below both `lexical.py`, which encodes what it learned and decodes what a pack stored, and
`stored.py`, which learns a pack's model when it is built and carries one over to a draft.

Training takes seconds at CLINC150 size; loading a pack must not. `stored.with_model` learns
the weights once, when a pack is built or published, and they are stored sparsely: each term's
weights relative to its median route (a per-term shift changes no score), with cells
smaller than `PRUNE` dropped (measured: no loss of accuracy on CLINC150 val or banking77
folds), in float16. A CLINC150-size model is about 2-3 MB of base64 JSON.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from routing_core._stored_arrays import pack_array, unpack_array
from routing_core._types import Float32Array
from routing_core.limits import MAX_MODEL_CELLS, MAX_MODEL_TERM_CHARS, MAX_MODEL_TERMS
from routing_core.pack import LexicalModel, SemanticView
from routing_core.scorers._semantic import Semantic
from routing_core.scorers._sparse import BlockWeights
from routing_core.scorers._terms import is_segmented
from routing_core.scorers.base import RouteText

# Changing what a term is must invalidate stored models: their weights index the terms. A
# change in how weights are learned does not: a stored model is still a valid model of its
# routes, and a published pack keeps scoring exactly as it did when it was published.
# Version 4 keeps combining marks inside words and splits scripts without spaces into
# character bigrams (`_terms.message_words`). Only route texts with such characters have
# other terms than under version 3, so only their models are fingerprinted as version 4:
# every other stored model (English, Arabic and Hebrew without points, ...) stays valid and
# loads without learning again.
FEATURES_VERSION = "lexical-features/4"
UNCHANGED_FEATURES_VERSION = "lexical-features/3"
PRUNE = 0.2
# Terms whose median route is found at once when encoding (bounds time between progress calls).
MEDIAN_BLOCK = 8192
# ... and rows of weights made block by block (`BlockWeights`) made at once: each block is a
# new array, so a smaller one (16 MB at 2,000 routes) is reused by the allocator.
BLOCK_ROWS = 2048


def fingerprint(routes: Sequence[RouteText]) -> str:
    """`sha256:<hex>` of everything the scorer learns from, in order, plus the feature version."""
    texts = [[r.name, r.description, list(r.examples), list(r.keywords)] for r in routes]
    changed = any(
        is_segmented(t) for r in routes for t in (r.description, *r.examples, *r.keywords)
    )
    version = FEATURES_VERSION if changed else UNCHANGED_FEATURES_VERSION
    canonical = json.dumps([version, texts], ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def encode(
    routes: Sequence[RouteText],
    terms: Sequence[str],
    idf: Float32Array,
    weights: Float32Array | BlockWeights,
    temperature: float,
    calibrated: bool,
    floor: float | None = None,
    margin: float | None = None,
    *,
    bias: Float32Array | None = None,
    semantic: Semantic | None = None,
    fitted_on: int | None = None,
    none_logit: float | None = None,
    in_place: bool = False,
    progress: Callable[[float], None] | None = None,
    known_fingerprint: str | None = None,
) -> LexicalModel:
    """The pack field for a trained scorer (weights: terms x routes, or made block by block).

    `in_place`: dense `weights` may be overwritten (spares a terms x routes copy at 2,000 routes).
    `progress`: told the fraction done, block of terms by block.
    `known_fingerprint`: `fingerprint(routes)` when the caller has it (0.3 s at 2,000 routes).
    """
    if isinstance(weights, BlockWeights):  # made block by block, each block ours to change
        n_terms, width, size = weights.n_terms, weights.n_routes, BLOCK_ROWS
    else:
        relative = weights if in_place else weights.copy()
        n_terms, size = len(relative), MEDIAN_BLOCK
        width = relative.shape[1] if relative.ndim == 2 else 0
    # Cells kept block by block: the same ascending cells and values as pruning the whole
    # matrix at once, without a terms x routes temporary (most of a GB at 2,000 routes).
    found: list[npt.NDArray[np.int64]] = [np.zeros(0, np.int64)]
    kept: list[Float32Array] = [np.zeros(0, np.float32)]
    for first in range(0, n_terms, size):
        if progress is not None:
            progress(first / n_terms)
        if isinstance(weights, BlockWeights):
            block = weights.block(first, min(n_terms, first + size))
        else:
            block = relative[first : first + size]
        block -= row_medians(block)
        flat = block.reshape(-1)
        cells_here = np.flatnonzero(np.abs(flat) > PRUNE)
        kept.append(flat[cells_here])
        found.append(cells_here + first * width)
    cells, values, kept_terms = within_budget(
        np.concatenate(found), np.concatenate(kept), [len(t) for t in terms], width
    )
    if kept_terms is not None:
        terms = [t for t, keep in zip(terms, kept_terms, strict=True) if keep]
        idf = idf[kept_terms]
    return LexicalModel(
        fingerprint=known_fingerprint or fingerprint(routes),
        routes=len(routes),
        temperature=temperature,
        calibrated=calibrated,
        floor=floor,
        margin=margin,
        terms=tuple(terms),
        idf=pack_array(idf.astype("<f2")),
        cells=pack_array(cells.astype("<u4")),
        weights=pack_array(values.astype("<f2")),
        bias=None if bias is None else pack_array(bias.astype("<f2")),
        semantic=None if semantic is None else _semantic_field(semantic),
        fitted_on=fitted_on,
        none_logit=none_logit,
    )


def within_budget(
    cells: npt.NDArray[np.int64], values: Float32Array, term_sizes: list[int], width: int
) -> tuple[npt.NDArray[np.int64], Float32Array, npt.NDArray[np.bool_] | None]:
    """The stored cells, their values and the terms kept (None: all) within the model's limits.

    A stored model holds at most MAX_MODEL_CELLS cells, MAX_MODEL_TERMS terms and
    MAX_MODEL_TERM_CHARS characters of terms (docs/pack-format.md, Limits), so that a pack's
    size is bounded by construction. Past them the weakest cells go first (the largest
    weights are kept, as pruning keeps them), then the terms whose strongest cell is weakest
    (a term without cells last of all). A model within them, which is every model of a pack
    of up to 2,000 routes of 25 examples measured (docs/reliability.md, "Pack limits"), is
    stored exactly as learned.
    """
    if len(values) > MAX_MODEL_CELLS:
        strongest = np.argpartition(-np.abs(values), MAX_MODEL_CELLS - 1)[:MAX_MODEL_CELLS]
        keep = np.sort(strongest)
        cells, values = cells[keep], values[keep]
    sizes = np.asarray(term_sizes, np.int64)
    if len(sizes) <= MAX_MODEL_TERMS and int(sizes.sum()) <= MAX_MODEL_TERM_CHARS:
        return cells, values, None
    term_of = cells // max(width, 1)
    strength = np.full(len(sizes), -1.0, np.float32)  # no cell: below every stored weight
    np.maximum.at(strength, term_of, np.abs(values))
    order = np.argsort(-strength, kind="stable")
    fits = (np.cumsum(sizes[order]) <= MAX_MODEL_TERM_CHARS) & (
        np.arange(len(order)) < MAX_MODEL_TERMS
    )
    kept_terms = np.zeros(len(sizes), np.bool_)
    kept_terms[order[fits]] = True
    on = kept_terms[term_of]
    renumber = np.cumsum(kept_terms) - 1
    cells = renumber[term_of[on]] * width + cells[on] % max(width, 1)
    return cells, values[on], kept_terms


def _semantic_field(semantic: Semantic) -> SemanticView:
    """The semantic view as its pack field: weight carried in the stored numbers."""
    matrix, bias = semantic.folded()
    return SemanticView(
        table=semantic.table,
        weight=semantic.weight,
        matrix=pack_array(matrix.astype("<f2")),
        bias=pack_array(bias.astype("<f2")),
    )


def decode_semantic(model: LexicalModel) -> Semantic | None:
    """The model's semantic view (its numbers as stored, with the weight they carry), or None."""
    view = model.semantic
    if view is None:
        return None
    unfold = np.float32(1.0 / view.weight)
    matrix = unpack_array(view.matrix, "<f2").astype(np.float32).reshape(-1, model.routes)
    bias = unpack_array(view.bias, "<f2").astype(np.float32)
    return Semantic(matrix * unfold, bias * unfold, view.weight, view.table)


def row_medians(block: Float32Array) -> Float32Array:
    """`np.median(block, axis=1, keepdims=True)`, to the bit, at less cost.

    One partition at the lower middle, then the upper middle is the least element above it;
    the two are averaged as `np.median` averages them (`np.mean` of the pair). `np.median`
    partitions for both middles at once, which cost a third more on a fresh model's rows of
    2,000 routes (32-36 vs 24-26 ms a block of 2,048 terms). But a single partition slows
    four to five times on rows with many equal cells, as a warm-started model's are (the
    cells of routes a term was not stored for), where `np.median`'s does not (107-117 vs
    21-26 ms; at 2,000 routes, 3 s of an edit's retraining): rows sampled from the block
    choose the way (docs/benchmarks.md, "Scale").
    """
    n = block.shape[1]
    if n == 0 or len(block) == 0 or _many_equal(block):
        result: Float32Array = np.median(block, axis=1, keepdims=True)
        return result
    low, high = (n - 1) // 2, n // 2
    parted = np.partition(block, low, axis=1)
    lower = parted[:, low : low + 1]
    if low == high:
        return lower.copy()
    upper = parted[:, low + 1 :].min(axis=1, keepdims=True)
    middle: Float32Array = np.mean(np.concatenate([lower, upper], axis=1), axis=1, keepdims=True)
    return middle


# `row_medians` samples this many rows of a block, and counts a row with fewer distinct cells
# than this share of them as one of many equal cells (a fresh model's rows: 97-98% distinct
# at 2,000 routes; a warm-started one's: 56-63%).
SAMPLED_ROWS = 8
DISTINCT_SHARE = 0.9


def _many_equal(block: Float32Array) -> bool:
    """Whether rows sampled evenly from the block hold many equal cells (`row_medians`)."""
    step = max(1, len(block) // SAMPLED_ROWS)
    width = block.shape[1]
    return any(len(np.unique(row)) < DISTINCT_SHARE * width for row in block[::step][:SAMPLED_ROWS])


def decode_bias(model: LexicalModel) -> Float32Array | None:
    """The model's per-route intercepts as float32, or None (a model without them)."""
    if model.bias is None:
        return None
    bias: Float32Array = unpack_array(model.bias, "<f2").astype(np.float32)
    return bias


def decode_idf(model: LexicalModel) -> Float32Array:
    """The model's idf, one per term, as float32."""
    idf: Float32Array = unpack_array(model.idf, "<f2").astype(np.float32)
    return idf


def decode_cells(model: LexicalModel) -> tuple[npt.NDArray[np.int64], Float32Array]:
    """The model's stored cells (ascending `term * routes + route`) and their values."""
    cells = unpack_array(model.cells, "<u4").astype(np.int64)
    values: Float32Array = unpack_array(model.weights, "<f2").astype(np.float32)
    return cells, values


def decode(model: LexicalModel) -> tuple[Float32Array, Float32Array]:
    """The model's idf (per term) and dense weights (terms x routes, centred), as float32."""
    idf = decode_idf(model)
    weights = np.zeros(len(model.terms) * model.routes, np.float32)
    weights[unpack_array(model.cells, "<u4")] = unpack_array(model.weights, "<f2")
    dense = weights.reshape(len(model.terms), model.routes)
    # Centred again as learned, so that an explanation's weight means the same either way.
    dense -= dense.mean(axis=1, keepdims=True)
    return idf, dense


def moved_bias(model: LexicalModel, source: npt.NDArray[np.int64]) -> Float32Array | None:
    """`model`'s intercepts moved to new route indices (`source`: each new route's index in
    the model, or -1), for a stale carry (`_carried`) and a warm start (`lexical._warm`)
    alike. A route it did not know gets their median, the intercept of a typical route (with
    0, a new route's column lost to every learned one: 1 of 12 of its own examples)."""
    bias = decode_bias(model)
    if bias is None:
        return None
    known = source >= 0
    moved = np.full(len(source), np.median(bias), np.float32)
    moved[known] = bias[source[known]]
    return moved
