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
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from routing_core.scorers._terms import is_segmented
from routing_core.scorers.base import RouteText

if TYPE_CHECKING:
    from routing_core.pack import LexicalModel, Pack

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
    weights: FloatArray,
    temperature: float,
    calibrated: bool,
    floor: float | None = None,
    margin: float | None = None,
) -> LexicalModel:
    """The pack field for a trained scorer (weights: terms x routes)."""
    from routing_core.pack import LexicalModel

    relative = weights - np.median(weights, axis=1, keepdims=True)
    cells = np.flatnonzero(np.abs(relative) > PRUNE).astype("<u4")
    return LexicalModel(
        fingerprint=fingerprint(routes),
        routes=len(routes),
        temperature=temperature,
        calibrated=calibrated,
        floor=floor,
        margin=margin,
        terms=tuple(terms),
        idf=_pack(idf.astype("<f2")),
        cells=_pack(cells),
        weights=_pack(relative.ravel()[cells].astype("<f2")),
    )


def decode(model: LexicalModel) -> tuple[FloatArray, FloatArray]:
    """The model's idf (per term) and dense weights (terms x routes, centred), as float32."""
    idf = _unpack(model.idf, "<f2").astype(np.float32)
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


def with_model(pack: Pack) -> Pack:
    """The pack with its lexical scorer's weights learned and stored (others unchanged).

    Call it when building or publishing a pack, so that loading the pack does not train.
    """
    from routing_core.pack import LexicalScorerSettings
    from routing_core.scorers import route_texts
    from routing_core.scorers.lexical import learned_model, learning_texts

    if not isinstance(pack.scorer, LexicalScorerSettings):
        return pack
    texts = learning_texts(route_texts(pack), pack.out_of_scope)
    model = learned_model(texts, fingerprint(texts))
    return pack.model_copy(update={"scorer": pack.scorer.model_copy(update={"model": model})})


def _pack(array: npt.NDArray[np.generic]) -> str:
    return base64.b64encode(array.tobytes()).decode("ascii")


def _unpack(text: str, dtype: str) -> npt.NDArray[np.generic]:
    raw = base64.b64decode(text.encode("ascii"), validate=True)
    return np.frombuffer(raw, dtype=dtype)
