"""The lexical scorer's learned weights as a compact pack field (`scorer.model`), both ways.

Training takes seconds at CLINC150 size; loading a pack must not. `with_model` learns the
weights once, when a pack is built or published, and stores them sparsely: each term's
weights relative to its median route (a per-term shift changes no score), with cells
smaller than `PRUNE` dropped (measured: no loss of accuracy on CLINC150 val or banking77
folds), in float16. A CLINC150-size model is about 2-3 MB of base64 JSON.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from routing_core.scorers import _static
from routing_core.scorers._semantic import Semantic
from routing_core.scorers._sparse import BlockWeights
from routing_core.scorers._terms import is_segmented
from routing_core.scorers.base import RouteText

if TYPE_CHECKING:
    from routing_core.pack import LexicalModel, Pack, SemanticView

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

FloatArray = npt.NDArray[np.float32]


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
    idf: FloatArray,
    weights: FloatArray | BlockWeights,
    temperature: float,
    calibrated: bool,
    floor: float | None = None,
    margin: float | None = None,
    *,
    bias: FloatArray | None = None,
    semantic: Semantic | None = None,
    fitted_on: int | None = None,
    in_place: bool = False,
    progress: Callable[[float], None] | None = None,
    known_fingerprint: str | None = None,
) -> LexicalModel:
    """The pack field for a trained scorer (weights: terms x routes, or made block by block).

    `in_place`: dense `weights` may be overwritten (spares a terms x routes copy at 2,000 routes).
    `progress`: told the fraction done, block of terms by block.
    `known_fingerprint`: `fingerprint(routes)` when the caller has it (0.3 s at 2,000 routes).
    """
    from routing_core.pack import LexicalModel

    if isinstance(weights, BlockWeights):  # made block by block, each block ours to change
        n_terms, width, size = weights.n_terms, weights.n_routes, BLOCK_ROWS
    else:
        relative = weights if in_place else weights.copy()
        n_terms, size = len(relative), MEDIAN_BLOCK
        width = relative.shape[1] if relative.ndim == 2 else 0
    # Cells kept block by block: the same ascending cells and values as pruning the whole
    # matrix at once, without a terms x routes temporary (most of a GB at 2,000 routes).
    found: list[npt.NDArray[np.int64]] = [np.zeros(0, np.int64)]
    kept: list[FloatArray] = [np.zeros(0, np.float32)]
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
    cells = np.concatenate(found).astype("<u4")
    return LexicalModel(
        fingerprint=known_fingerprint or fingerprint(routes),
        routes=len(routes),
        temperature=temperature,
        calibrated=calibrated,
        floor=floor,
        margin=margin,
        terms=tuple(terms),
        idf=_pack(idf.astype("<f2")),
        cells=_pack(cells),
        weights=_pack(np.concatenate(kept).astype("<f2")),
        bias=None if bias is None else _pack(bias.astype("<f2")),
        semantic=None if semantic is None else _semantic_field(semantic),
        fitted_on=fitted_on,
    )


def _semantic_field(semantic: Semantic) -> SemanticView:
    """The semantic view as its pack field: weight carried in the stored numbers."""
    from routing_core.pack import SemanticView

    matrix, bias = semantic.folded()
    return SemanticView(
        table=semantic.table,
        weight=semantic.weight,
        matrix=_pack(matrix.astype("<f2")),
        bias=_pack(bias.astype("<f2")),
    )


def decode_semantic(model: LexicalModel) -> Semantic | None:
    """The model's semantic view (its numbers as stored, with the weight they carry), or None."""
    view = model.semantic
    if view is None:
        return None
    unfold = np.float32(1.0 / view.weight)
    matrix = _unpack(view.matrix, "<f2").astype(np.float32).reshape(-1, model.routes)
    bias = _unpack(view.bias, "<f2").astype(np.float32)
    return Semantic(matrix * unfold, bias * unfold, view.weight, view.table)


def row_medians(block: FloatArray) -> FloatArray:
    """`np.median(block, axis=1, keepdims=True)`, to the bit, at a fifth of its cost.

    One partition at the lower middle, then the upper middle is the least element above it;
    the two are averaged as `np.median` averages them (`np.mean` of the pair). `np.median`
    partitions for both middles at once, which costs five times as much on rows of 2,000
    routes (23 vs 4.7 ms a block of 2,048 terms: 0.8 s of a 2,000-route build).
    """
    n = block.shape[1]
    if n == 0 or len(block) == 0:
        result: FloatArray = np.median(block, axis=1, keepdims=True)
        return result
    low, high = (n - 1) // 2, n // 2
    parted = np.partition(block, low, axis=1)
    lower = parted[:, low : low + 1]
    if low == high:
        return lower.copy()
    upper = parted[:, low + 1 :].min(axis=1, keepdims=True)
    middle: FloatArray = np.mean(np.concatenate([lower, upper], axis=1), axis=1, keepdims=True)
    return middle


def decode_bias(model: LexicalModel) -> FloatArray | None:
    """The model's per-route intercepts as float32, or None (a model without them)."""
    if model.bias is None:
        return None
    bias: FloatArray = _unpack(model.bias, "<f2").astype(np.float32)
    return bias


def decode_idf(model: LexicalModel) -> FloatArray:
    """The model's idf, one per term, as float32."""
    idf: FloatArray = _unpack(model.idf, "<f2").astype(np.float32)
    return idf


def decode_cells(model: LexicalModel) -> tuple[npt.NDArray[np.int64], FloatArray]:
    """The model's stored cells (ascending `term * routes + route`) and their values."""
    cells = _unpack(model.cells, "<u4").astype(np.int64)
    values: FloatArray = _unpack(model.weights, "<f2").astype(np.float32)
    return cells, values


def decode(model: LexicalModel) -> tuple[FloatArray, FloatArray]:
    """The model's idf (per term) and dense weights (terms x routes, centred), as float32."""
    idf = decode_idf(model)
    weights = np.zeros(len(model.terms) * model.routes, np.float32)
    weights[_unpack(model.cells, "<u4")] = _unpack(model.weights, "<f2")
    dense = weights.reshape(len(model.terms), model.routes)
    # Centred again as learned, so that an explanation's weight means the same either way.
    dense -= dense.mean(axis=1, keepdims=True)
    return idf, dense


def check_model(model: LexicalModel) -> None:
    """Refuse arrays that do not decode or do not fit the declared shape.

    Raises:
        ValueError: with what is wrong.
    """
    try:
        idf = _unpack(model.idf, "<f2")
        cells = _unpack(model.cells, "<u4").astype(np.int64)
        values = _unpack(model.weights, "<f2")
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


def _check_bias(model: LexicalModel) -> None:
    """Refuse intercepts that do not decode, are not one per route column, or not finite."""
    if model.bias is None:
        return
    try:
        bias = _unpack(model.bias, "<f2")
    except ValueError as exc:
        raise ValueError(f"model.bias must be base64 of float16 numbers: {exc}") from None
    if len(bias) != model.routes:
        raise ValueError(f"model.bias has {len(bias)} values for {model.routes} routes")
    if not np.all(np.isfinite(bias)):
        raise ValueError("model.bias must be finite")


def _check_semantic(model: LexicalModel) -> None:
    """Refuse a semantic view on a table this version lacks, or of the wrong shape."""
    view = model.semantic
    if view is None:
        return
    if view.table not in _static.TABLES:
        raise ValueError(
            f"model.semantic.table {view.table!r} is not one this routing_core has"
            f" ({', '.join(_static.TABLES)}); build the pack again with this version"
        )
    try:
        matrix = _unpack(view.matrix, "<f2")
        bias = _unpack(view.bias, "<f2")
    except ValueError as exc:
        raise ValueError(f"model.semantic arrays must be base64 of float16: {exc}") from None
    if len(matrix) != _static.DIMENSIONS * model.routes:
        raise ValueError(
            f"model.semantic.matrix has {len(matrix)} values for {_static.DIMENSIONS}"
            f" dimensions x {model.routes} routes"
        )
    if len(bias) != model.routes:
        raise ValueError(f"model.semantic.bias has {len(bias)} values for {model.routes} routes")
    if not (np.all(np.isfinite(matrix)) and np.all(np.isfinite(bias))):
        raise ValueError("model.semantic arrays must be finite")


def with_model(
    pack: Pack,
    *,
    previous: Pack | None = None,
    progress: Callable[[float], None] | None = None,
) -> Pack:
    """The pack with its lexical scorer's weights learned and stored (others unchanged).

    Call it when building or publishing a pack, so that loading the pack does not train.

    Args:
        pack: the pack to learn for.
        previous: an earlier pack of the same profile whose stored lexical model may start
            the learning (matched by route name and term, so added, removed or renamed
            routes are fine). A model learned from exactly these route texts is reused.
        progress: called with the fraction done, in [0, 1], as learning proceeds (after
            every step, at most a fraction of a second apart); whatever it raises aborts
            the build and propagates (that is how a job is cancelled).
    """
    from routing_core.pack import LexicalScorerSettings
    from routing_core.scorers._model import Progress
    from routing_core.scorers.lexical import learned_model

    reporter = Progress(_monotone(progress))
    if not isinstance(pack.scorer, LexicalScorerSettings):
        reporter(1.0)
        return pack
    texts = _learning_texts(pack)
    wanted = fingerprint(texts)
    reused = _model_of(previous)
    if reused is not None and reused.fingerprint == wanted and not reused.stale:
        model = reused
        reporter(1.0)
    else:
        warm = None
        if previous is not None and reused is not None:
            old_texts = _learning_texts(previous)
            if reused.routes == len(old_texts):
                warm = (reused, old_texts)
        model = learned_model(texts, wanted, progress=reporter, previous=warm)
    return pack.model_copy(update={"scorer": pack.scorer.model_copy(update={"model": model})})


def with_stale_model(draft: Pack, trained: Pack) -> Pack:
    """The draft scored at once with the model learned for `trained`'s route texts.

    For a playground that must answer while the draft's own model trains. Nothing is
    learned: `trained`'s stored weights are carried over, columns matched by route name. A
    route the old model does not know (added or renamed since) gets a naive-Bayes column of
    its own texts over the old terms: `NB_SCALE * log(1 + mass / SMOOTHING)` per term, the
    weight a term has for a route whose texts hold it over one whose texts do not; it is
    uncorrected, so it scores lower than a trained route would. A route whose texts changed
    keeps its old column. The result's model is marked `stale`; a `Router` of it says so in
    `scorer.info.details`: `"stale": True` and `"trained_fingerprint"`, the fingerprint of
    the route texts the weights were learned from (`"model"` reads "stale: ...").

    Returns:
        The draft with that model; the draft unchanged when either pack has no stored
        lexical model to carry (its `Router` then learns at load), and the draft with the
        trained model as it is when the route texts are the same.
    """
    from routing_core.pack import LexicalScorerSettings

    old = _model_of(trained)
    if not isinstance(draft.scorer, LexicalScorerSettings) or old is None:
        return draft
    old_texts = _learning_texts(trained)
    if old.routes != len(old_texts):  # columns that follow no route list: cannot map
        return draft
    texts = _learning_texts(draft)
    if old.fingerprint == fingerprint(texts) and not old.stale:
        model = old
    else:
        model = _carried(old, old_texts, texts)
    return draft.model_copy(update={"scorer": draft.scorer.model_copy(update={"model": model})})


def _learning_texts(pack: Pack) -> list[RouteText]:
    """What a pack's lexical model learns from: its routes, then its out-of-scope examples."""
    from routing_core.scorers import route_texts
    from routing_core.scorers.lexical import learning_texts

    return learning_texts(route_texts(pack), pack.out_of_scope)


def _monotone(progress: Callable[[float], None] | None) -> Callable[[float], None] | None:
    """`progress` told never less than it was told before (stages meet at rounded edges)."""
    if progress is None:
        return None
    last = [0.0]

    def report(fraction: float) -> None:
        last[0] = max(last[0], fraction)
        progress(last[0])

    return report


def _model_of(pack: Pack | None) -> LexicalModel | None:
    from routing_core.pack import LexicalScorerSettings

    if pack is None or not isinstance(pack.scorer, LexicalScorerSettings):
        return None
    return pack.scorer.model


def _carried(
    old: LexicalModel, old_routes: Sequence[RouteText], routes: Sequence[RouteText]
) -> LexicalModel:
    """`old`'s cells remapped onto `routes` by name; naive-Bayes cells where it knows nothing.

    A new route gets a whole naive-Bayes column; an edited route keeps its column and gains
    cells for the terms its new texts bring (the old model has no weight for them at all).
    """
    from routing_core.scorers.lexical import text_vectors

    column = {route.name: i for i, route in enumerate(routes)}
    mapping = np.asarray([column.get(route.name, -1) for route in old_routes], np.int64)
    cells = _unpack(old.cells, "<u4").astype(np.int64)
    terms, old_columns = np.divmod(cells, old.routes)
    new_columns = mapping[old_columns]
    kept = new_columns >= 0
    before = {route.name: route for route in old_routes}
    changed = [i for i, route in enumerate(routes) if before.get(route.name) != route]
    added, added_idf, ids, values, owners = text_vectors(old, [routes[i] for i in changed])
    new_cells, new_values = _bayes_cells(ids, values, owners, len(changed), _bayes_share(old))
    is_new = np.asarray([routes[i].name not in before for i in changed], bool)
    fills = is_new[new_cells % max(1, len(changed))] | (
        new_cells // max(1, len(changed)) >= len(old.terms)
    )
    new_terms, which = np.divmod(new_cells[fills], max(1, len(changed)))
    carried_cells = terms[kept] * len(routes) + new_columns[kept]
    carried_values = _unpack(old.weights, "<f2")[kept]
    if np.any(carried_cells[1:] <= carried_cells[:-1]):  # routes reordered: sort them all
        order = np.argsort(carried_cells, kind="stable")
        carried_cells, carried_values = carried_cells[order], carried_values[order]
    # The few naive-Bayes cells merge into the ascending carried ones (no sort of millions).
    fresh_cells = new_terms * len(routes) + np.asarray(changed, np.int64)[which]
    fresh_order = np.argsort(fresh_cells, kind="stable")
    at = np.searchsorted(carried_cells, fresh_cells[fresh_order])
    all_cells = np.insert(carried_cells, at, fresh_cells[fresh_order])
    all_values = np.insert(carried_values, at, new_values[fills][fresh_order])
    idf = np.concatenate([decode_idf(old), added_idf])
    was = {route.name: i for i, route in enumerate(old_routes)}
    bias = moved_bias(old, np.asarray([was.get(r.name, -1) for r in routes], np.int64))
    return old.model_copy(
        update={
            # Its columns were the old routes: a stale model answers by the words alone.
            "semantic": None,
            "bias": None if bias is None else _pack(bias.astype("<f2")),
            "routes": len(routes),
            "stale": True,
            "terms": (*old.terms, *added),
            "idf": _pack(idf.astype("<f2")),
            "cells": _pack(all_cells.astype("<u4")),
            "weights": _pack(all_values.astype("<f2")),
        }
    )


def moved_bias(model: LexicalModel, source: npt.NDArray[np.int64]) -> FloatArray | None:
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


def _bayes_share(old: LexicalModel) -> float:
    """How many models' evidence a trained column of `old` carries, on the scale of its
    calibrated logits: the correction's, plus the second model's when it has intercepts
    (`_hinge`, folded in). An uncorrected column stands in for all of them: at one share,
    a new route led on half its examples and scored under the floor on all of them."""
    from routing_core.scorers._hinge import WEIGHT

    return 1.0 + WEIGHT if old.bias is not None else 1.0


def _bayes_cells(
    ids: npt.NDArray[np.int64],
    values: FloatArray,
    owners: npt.NDArray[np.int64],
    n_routes: int,
    share: float = 1.0,
) -> tuple[npt.NDArray[np.int64], FloatArray]:
    """Cells (`term * n_routes + route`) and weights of uncorrected naive-Bayes columns.

    `share * NB_SCALE * log(1 + mass / SMOOTHING)`: a term's naive-Bayes weight for a route
    whose texts hold it, relative to a route whose texts do not (the stored median).
    """
    from routing_core.scorers._model import NB_SCALE, SMOOTHING

    keys, slot = np.unique(ids * max(1, n_routes) + owners, return_inverse=True)
    mass = np.bincount(slot, values, minlength=len(keys))
    weights = (share * NB_SCALE * np.log1p(mass / SMOOTHING)).astype(np.float32)
    keep = weights > PRUNE
    return keys[keep], weights[keep]


def _pack(array: npt.NDArray[np.generic]) -> str:
    return base64.b64encode(array.tobytes()).decode("ascii")


def _unpack(text: str, dtype: str) -> npt.NDArray[np.generic]:
    raw = base64.b64decode(text.encode("ascii"), validate=True)
    return np.frombuffer(raw, dtype=dtype)
