"""A pack's lexical model learned when the pack is built, or carried over to a draft.

`with_model` learns the weights once, when a pack is built or published, and stores them
in the pack (`_encoding.py` says how), so that loading a pack does not train;
`with_stale_model` lets a playground answer at once with the model learned for an earlier
version of the routes while the draft's own model trains.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from routing_core._stored_arrays import pack_array, unpack_array
from routing_core._types import Float32Array
from routing_core.pack import LexicalScorerSettings
from routing_core.scorers._corpus import Progress
from routing_core.scorers._encoding import PRUNE, decode_idf, fingerprint, moved_bias
from routing_core.scorers._hinge import WEIGHT
from routing_core.scorers._model import NB_SCALE, SMOOTHING
from routing_core.scorers.base import RouteText, route_texts
from routing_core.scorers.lexical import learned_model, learning_texts, text_vectors

if TYPE_CHECKING:
    from routing_core.pack import LexicalModel, Pack

__all__ = ["fingerprint", "with_model", "with_stale_model"]


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
    return learning_texts(route_texts(pack), pack.out_of_scope, not pack.no_background)


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
    column = {route.name: i for i, route in enumerate(routes)}
    mapping = np.asarray([column.get(route.name, -1) for route in old_routes], np.int64)
    cells = unpack_array(old.cells, "<u4").astype(np.int64)
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
    carried_values = unpack_array(old.weights, "<f2")[kept]
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
            "bias": None if bias is None else pack_array(bias.astype("<f2")),
            "routes": len(routes),
            "stale": True,
            "terms": (*old.terms, *added),
            "idf": pack_array(idf.astype("<f2")),
            "cells": pack_array(all_cells.astype("<u4")),
            "weights": pack_array(all_values.astype("<f2")),
        }
    )


def _bayes_share(old: LexicalModel) -> float:
    """How many models' evidence a trained column of `old` carries, on the scale of its
    calibrated logits: the correction's, plus the second model's when it has intercepts
    (`_hinge`, folded in). An uncorrected column stands in for all of them: at one share,
    a new route led on half its examples and scored under the floor on all of them."""
    return 1.0 + WEIGHT if old.bias is not None else 1.0


def _bayes_cells(
    ids: npt.NDArray[np.int64],
    values: Float32Array,
    owners: npt.NDArray[np.int64],
    n_routes: int,
    share: float = 1.0,
) -> tuple[npt.NDArray[np.int64], Float32Array]:
    """Cells (`term * n_routes + route`) and weights of uncorrected naive-Bayes columns.

    `share * NB_SCALE * log(1 + mass / SMOOTHING)`: a term's naive-Bayes weight for a route
    whose texts hold it, relative to a route whose texts do not (the stored median).
    """
    keys, slot = np.unique(ids * max(1, n_routes) + owners, return_inverse=True)
    mass = np.bincount(slot, values, minlength=len(keys))
    weights = (share * NB_SCALE * np.log1p(mass / SMOOTHING)).astype(np.float32)
    keep = weights > PRUNE
    return keys[keep], weights[keep]
