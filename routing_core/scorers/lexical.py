"""The default scorer: a lexical model of each route, learned from its own text, no download.

Every text a route offers (its name, description, each example, each keyword) becomes a
TF-IDF vector over three kinds of term: word stems, word bigrams (the first word paired with
a start marker) and character 3-5-grams inside word edges (so that plurals, typos and unseen
inflections still share most of their features). Stop words count as terms too ("no",
"what", "how much" carry intent; IDF keeps the common ones light). A message made of stop
words only ("hi", "where are you from") is scored only by a calibrated pack (below): its
temperature keeps such a message as uncertain as such words are on held-out text, while a
pack too small to calibrate would be sure of nearly anything ("what is it?" went to a weather
route at 0.99 on four routes of a few examples), so it leaves such a message unscored.

The model over those terms (`_model.py`) is one weight per term and route: a smoothed
naive-Bayes log-likelihood, plus a correction on the word terms and character 3-grams trained
discriminatively (softmax regression with an additive margin, started from held-out
naive-Bayes logits), centred so that a weight says how much a term favours this route over
the average one.

A message is scored as the calibrated probability of each route: a softmax over all routes
of its logits divided by a temperature fitted on examples held out of training, so that a
score of 0.7 is right about 70% of the time on text like the examples, in every pack big
enough to hold some out (a pack of 100-199 texts that learns fully fits it by
cross-validation, never under 1; a smaller one, or one that keeps the short schedule, keeps
temperature 1). Learning from 15,000 examples
takes a few seconds, so a built pack carries the learned weights (`stored.py`,
`scorer.model`) and loads in a fraction of a second; a pack without them (or with stale
ones) learns at load.
"""

from __future__ import annotations

import math
import threading
from collections import Counter, _count_elements  # type: ignore[attr-defined]
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from routing_core._records import builder
from routing_core._types import Float32Array, IntArray
from routing_core.scorers import (
    _background,
    _candidates,
    _corpus,
    _encoding,
    _few,
    _model,
    _semantic,
    _static,
    _terms,
)
from routing_core.scorers._semantic import Semantic
from routing_core.scorers._weights import DenseWeights, Weights, weights_of
from routing_core.scorers.base import NO_USAGE, RouteText, Scored, ScorerInfo, Term

if TYPE_CHECKING:
    from routing_core.pack import LexicalModel


# A profile fits its floor and near-tie margin on its own texts (route names, descriptions,
# examples, keywords) once it has this many: held out, or scored out of fold under
# CALIBRATION_TEXTS (docs/decisions.md, "Packs of 100-199 texts"). The studio says so.
FITS_THRESHOLDS_FROM = _few.CV_TEXTS
# The word block (stems and bigrams) weighs this much more than the character block once
# each is normalised: whole words are the stronger evidence; n-grams are the safety net.
WORD_BLOCK_WEIGHT = 2.0
# Relevance = softmax(score / TEMPERATURE): scores are probabilities, so a top route at 0.9
# among 150 routes takes ~98% of the bar, and one at 0.5 vs 0.3 about half of it.
TEMPERATURE = 0.1
# The first word of a message makes a bigram with this marker: how a request opens ("what
# is", "can you", "no") says a lot about its intent. Words are letters and digits only, so
# the marker never collides with a word.
START = "^"


def _count_terms(text: str) -> Counter[str]:
    """A route text's terms counted (stems, bigrams, character n-grams).

    Building counts every route text this way; scoring a message resolves the same terms
    through `_Vocabulary.resolve`, word by word, without making their strings.
    """
    terms: list[str] = []
    previous = START
    for word in _terms.message_words(text):
        stemmed, grams = _terms.word_terms(word)
        terms += (stemmed, f"{previous} {stemmed}", *grams)
        previous = stemmed
    return Counter(terms)


def _route_texts(route: RouteText) -> Iterable[str]:
    """Each text of a route, skipped when blank; each is one training document.

    The route's name is its first text: a person names a route for what it is about
    ("refund_request" reads as the words "refund request": underscores and hyphens split
    words), and with few examples per route those words are often the ones a message shares
    with no example (docs/decisions.md, "A route's name is one of its texts").
    """
    for text in (route.name_words, route.description, *route.examples, *route.keywords):
        if text.strip():
            yield text


# Routes whose examples' static vectors a scorer keeps for explaining (`_example_vectors`).
EXPLAINED_ROUTES = 64
# A word of a message, resolved against the vocabulary once: its stem, the stem's term id (-1
# when unknown), the ids of its known character n-grams in order (with repeats), and whether
# it is a content word.
_Word = tuple[str, int, tuple[int, ...], bool]
# Distinct words a scorer keeps resolved (a few MB at most); past this the cache starts
# afresh, so a stream of made-up words cannot grow it without bound.
WORD_CACHE = 16384
# One word of a message as scoring resolved it: the word as typed, its stem id, its known
# character n-gram ids and the id of its bigram with the word before (-1: not a known term).
# Kept with the message's features, so that `explain` does not split and look it up again.
_Resolved = tuple[str, int, tuple[int, ...], int]


@dataclass(frozen=True, slots=True)
class _Vocabulary:
    """Term ids and their inverse document frequencies, fixed at build.

    Scoring a message is mostly finding its terms' ids. A message's 100-200 terms come from
    a dozen words, and words repeat across messages, so each word's share (stem and
    character n-grams) is looked up once and kept in `words`; only the bigrams are looked up
    per message. Same terms, same order, same values as counting the term strings.
    """

    ids: dict[str, int]
    idf: Float32Array
    is_char: npt.NDArray[np.bool_]
    words: dict[str, _Word] = field(default_factory=dict, compare=False)
    # `is_char` as 0 / 1 bytes: a message's blocks index a two-entry table and count in
    # `bincount` without a cast from bool (made once, at load).
    blocks: npt.NDArray[np.uint8] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "blocks", self.is_char.astype(np.uint8))

    def word(self, word: str) -> _Word:
        """The word's stem, stem id, known n-gram ids and content flag (cached)."""
        entry = self.words.get(word)
        if entry is None:
            stemmed, grams = _terms.word_terms(word)
            get = self.ids.get
            known = tuple(i for gram in grams if (i := get(gram)) is not None)
            entry = (stemmed, get(stemmed, -1), known, _terms.is_content(word))
            if len(self.words) >= WORD_CACHE:
                self.words.clear()
            self.words[word] = entry
        return entry

    def resolve(self, text: str) -> tuple[list[_Resolved], bool]:
        """The text's words with their known term ids, and whether it has a content word."""
        resolved, has_content, _ = self.read(text)
        return resolved, has_content

    def read(self, text: str) -> tuple[list[_Resolved], bool, list[int]]:
        """`resolve`, and the text's term ids in text order as `vector` lists them (its
        `occurrences`), gathered in the same pass over the words: a turn reads both."""
        resolved: list[_Resolved] = []
        occurrences: list[int] = []
        get, known = self.ids.get, self.words.get
        previous = START
        has_content = False
        for word in _terms.message_words(text):
            stemmed, stem_id, grams, is_content = known(word) or self.word(word)
            has_content = has_content or is_content
            pair_id = get(f"{previous} {stemmed}", -1)
            resolved.append((word, stem_id, grams, pair_id))
            if stem_id >= 0:
                occurrences.append(stem_id)
            if pair_id >= 0:
                occurrences.append(pair_id)
            occurrences.extend(grams)
            previous = stemmed
        return resolved, has_content, occurrences

    def vector(self, text: str) -> tuple[IntArray, Float32Array]:
        """The text's normalised TF-IDF vector as (term ids, values), ids in first-seen order."""
        return self.weigh(self.read(text)[2])

    def weigh(self, occurrences: list[int]) -> tuple[IntArray, Float32Array]:
        """The normalised TF-IDF vector of the term ids `occurrences`, in text order (per word
        its stem, its bigram with the word before, its n-grams: what `read` gathers)."""
        if not occurrences:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        # Counted in first-seen order, as `Counter` counts (its own C loop, without the
        # class's Python layers): the keys are the distinct terms, the values their tf.
        counts: dict[int, int] = {}
        _count_elements(counts, occurrences)
        if len(counts) == len(occurrences):
            # No term repeats (most messages): the occurrences are the distinct terms in
            # first-seen order, every tf is 1 and 1 + log(1) is exactly 1, so the weights
            # are the idf as it is, without a log and a product.
            ids = np.fromiter(occurrences, np.int64, len(occurrences))
            values: Float32Array = self.idf[ids]
        else:
            ids = np.fromiter(counts, np.int64, len(counts))
            tf = np.fromiter(counts.values(), np.float32, len(counts))
            values = ((1.0 + np.log(tf)) * self.idf[ids]).astype(np.float32, copy=False)
        blocks = self.blocks[ids]
        # One row: the same weighting as `_normalise`, without its per-row bookkeeping. Both
        # blocks' squared norms come from one bincount (0: words, 1: character n-grams) and
        # each value's scale from a two-entry table (float32, as the values).
        word_sq, char_sq = np.bincount(blocks, values * values, 2).tolist()
        word_norm, char_norm = math.sqrt(word_sq), math.sqrt(char_sq)
        total = math.hypot(WORD_BLOCK_WEIGHT if word_norm else 0.0, 1.0 if char_norm else 0.0)
        word_scale = WORD_BLOCK_WEIGHT / (word_norm or 1.0) / total
        char_scale = 1.0 / (char_norm or 1.0) / total
        scales = np.array((word_scale, char_scale), np.float32)
        scaled: Float32Array = values * scales[blocks]
        if scaled.dtype != np.float32:  # an idf of another type (the built ones are float32)
            scaled = scaled.astype(np.float32)
        return ids, scaled


def _normalise(
    values: npt.NDArray[np.floating[Any]],
    rows: IntArray,
    is_char: npt.NDArray[np.bool_],
    n_rows: int,
) -> Float32Array:
    """L2-normalise each row's word and character blocks, weight them, then the row.

    Separate blocks keep the many character n-grams of a text from drowning its few words.
    """
    out = values.astype(np.float32, copy=True)
    # Both blocks' norms from one count over (row, block), each summed in the entries' order
    # as over the block alone: the same values without masked copies of the corpus (at 2,000
    # x 25 its 6 million entries, whose copies were new pages to fault in: 0.25 s).
    blocks = 2 * rows + is_char
    norms = _row_norms(out, blocks, 2 * n_rows)
    scales = np.empty(2 * n_rows, np.float32)
    scales[0::2] = WORD_BLOCK_WEIGHT / norms[0::2]
    scales[1::2] = 1.0 / norms[1::2]
    out *= scales[blocks]
    return out / _row_norms(out, rows, n_rows)[rows]


def _row_norms(values: Float32Array, rows: IntArray, n_rows: int) -> Float32Array:
    norms = np.sqrt(np.bincount(rows, values.astype(np.float64) ** 2, minlength=n_rows))
    norms[norms == 0.0] = 1.0
    return norms.astype(np.float32)


# Building the corpus reports progress every this many routes (about 0.1 s at most).
PROGRESS_ROUTES = 50


@dataclass(frozen=True, slots=True)
class _Counted:
    """One route's texts counted: term ids (of `_TermCounts`), counts, terms per text."""

    ids: npt.NDArray[np.int32]
    counts: npt.NDArray[np.int32]
    lengths: IntArray  # per text: how many distinct terms


class _TermCounts:
    """Each route's counted texts, kept between builds in this process (bounded).

    Counting the texts is the one part of learning done in Python, word by word: at 2,000
    routes about a third of an edit's learning. An edit changes a route or two, so the next
    build counts only those and reads the rest back. A term is numbered once per process;
    a build renumbers its terms in the order it first meets them, as counting did, so the
    corpus (and the model) is exactly what counting every text gives.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.ids: dict[str, int] = {}
        self.routes: dict[tuple[str, ...], _Counted] = {}
        self.entries = 0  # term counts held, over every route
        # Held for a whole build: its routes' ids must come from one numbering.
        self.lock = threading.Lock()

    def make_room(self, n_routes: int) -> None:
        """Start afresh (numbering included) if these routes could overflow the cache, or it
        holds more than COUNTED_ENTRIES term counts; called before a build, never during one."""
        if len(self.routes) + n_routes > self.limit or self.entries > COUNTED_ENTRIES:
            self.routes.clear()
            self.ids.clear()
            self.entries = 0

    def route(self, route: RouteText) -> _Counted:
        """The route's texts counted (from the cache when the same texts were counted)."""
        texts = tuple(_route_texts(route))
        counted = self.routes.get(texts)
        if counted is None:
            counted = self._count(texts)
            self.routes[texts] = counted
            self.entries += len(counted.ids)
        return counted

    def _count(self, texts: tuple[str, ...]) -> _Counted:
        number = self.ids.setdefault
        ids: list[int] = []
        counts: list[int] = []
        lengths = []
        for text in texts:
            terms = _count_terms(text)
            ids.extend([number(term, len(self.ids)) for term in terms])
            counts.extend(terms.values())
            lengths.append(len(terms))
        return _Counted(
            np.asarray(ids, np.int32), np.asarray(counts, np.int32), np.asarray(lengths, np.int64)
        )

    def names(self) -> list[str]:
        """Every numbered term, by number."""
        return list(self.ids)


# Routes whose counted texts are kept, and term counts (8 bytes each) past which the next
# build starts afresh: 2,000 routes x 50 texts hold 12 million (about 100 MB).
COUNTED_ROUTES = 4096
COUNTED_ENTRIES = 25_000_000
_COUNTED = _TermCounts(COUNTED_ROUTES)


def _build_corpus(
    routes: Sequence[RouteText], progress: _corpus.Progress = _corpus.NO_PROGRESS
) -> tuple[_Vocabulary, _corpus.Corpus]:
    """Count every route text once (or read its counts back), number the terms in the order
    they first appear and weight by TF-IDF."""
    counted = []
    with _COUNTED.lock:
        _COUNTED.make_room(len(routes))
        for route_index, route in enumerate(routes):
            if route_index % PROGRESS_ROUTES == 0:
                progress(0.8 * route_index / len(routes))
            counted.append(_COUNTED.route(route))
        names = _COUNTED.names()
    progress(0.85)
    numbered = np.concatenate([np.zeros(0, np.int32), *(c.ids for c in counted)])
    lengths = np.concatenate([np.zeros(0, np.int64), *(c.lengths for c in counted)])
    doc_routes = np.repeat(np.arange(len(routes)), [len(c.lengths) for c in counted])
    seen_in_order = _first_seen(numbered, len(names))  # as counting numbered them
    rank = np.zeros(len(names), np.int64)
    rank[seen_in_order] = np.arange(len(seen_in_order))
    id_array = rank[numbered]
    term_names = [names[t] for t in seen_in_order.tolist()]
    term_ids = {key: i for i, key in enumerate(term_names)}
    row_array = np.repeat(np.arange(len(lengths)), lengths)
    n_docs = len(lengths)
    df = np.bincount(id_array, minlength=len(term_ids))
    idf = (np.log((1.0 + n_docs) / (1.0 + df)) + 1.0).astype(np.float32)
    char_sizes = np.fromiter((_terms.char_size(k) for k in term_ids), np.int64, len(term_ids))
    is_char = char_sizes > 0
    progress(0.95)
    counts = np.concatenate([np.zeros(0, np.int32), *(c.counts for c in counted)])
    tf = 1.0 + np.log(counts.astype(np.float32))
    values = _normalise(tf * idf[id_array], row_array, is_char[id_array], n_docs)
    corpus = _corpus.Corpus(
        row_array, id_array, values, doc_routes.astype(np.int64), len(term_ids), char_sizes
    )
    return _Vocabulary(term_ids, idf, is_char), corpus


def _first_seen(numbered: npt.NDArray[np.int32], n_numbers: int) -> IntArray:
    """The distinct numbers of `numbered` (each below `n_numbers`) in the order they first
    appear: what sorting them (`np.unique` with the first positions) gives, found from each
    number's first position, so only the distinct numbers are sorted (at 2,000 x 25, 82,000
    of 6 million entries: 0.5 s less)."""
    first = np.full(n_numbers, len(numbered), np.int64)
    np.minimum.at(first, numbered, np.arange(len(numbered)))
    present = np.flatnonzero(first < len(numbered))
    ordered: IntArray = present[np.argsort(first[present], kind="stable")]
    return ordered


# What an unknown route is compared with: no texts at all.
_NO_ROUTE = RouteText("", "", ())


def _warm(
    vocabulary: _Vocabulary,
    routes: Sequence[RouteText],
    model: LexicalModel,
    learned_from: Sequence[RouteText],
) -> _model.Warm:
    """An earlier model's weights on these terms and routes, matched by string and name.

    `learned_from`: the routes the earlier model's columns were learned from, in order.
    """
    names = [route.name for route in learned_from]
    seen = {route.name: set(_route_texts(route)) for route in learned_from}
    fresh = [
        text not in seen.get(route.name, ()) for route in routes for text in _route_texts(route)
    ]
    old_terms = {term: i for i, term in enumerate(model.terms)}
    old_routes = {name: i for i, name in enumerate(names)}
    term_map = np.fromiter((old_terms.get(t, -1) for t in vocabulary.ids), np.int64)
    route_map = np.asarray([old_routes.get(r.name, -1) for r in routes], np.int64)
    known_terms, known_routes = term_map >= 0, route_map >= 0
    before = {route.name: route for route in learned_from}
    changed = np.asarray(
        [
            sorted(_route_texts(r)) != sorted(_route_texts(before.get(r.name, _NO_ROUTE)))
            for r in routes
        ],
        bool,
    )
    return _model.Warm(
        _mapped_weights(model, term_map, route_map),
        known_terms,
        known_routes,
        model.temperature,
        np.asarray(fresh, bool),
        floor=model.floor,
        margin=model.margin,
        changed=changed | ~known_routes,
        bias=_encoding.moved_bias(model, route_map),
        semantic_weight=None if model.semantic is None else model.semantic.weight,
        fitted_on=_fit_size(model, learned_from),
        none_logit=model.none_logit,
    )


def _fit_size(model: LexicalModel, learned_from: Sequence[RouteText]) -> int:
    """How many texts the model that fitted `model`'s thresholds had: its `fitted_on`, or
    for a model written before it was recorded, the texts it learned from (`learned_from`)."""
    return model.fitted_on or sum(1 for route in learned_from for _ in _route_texts(route))


def _mapped_weights(model: LexicalModel, term_map: IntArray, route_map: IntArray) -> Float32Array:
    """The model's centred weights (`_encoding.decode`) moved to new term and route indices.

    `term_map` / `route_map`: each new term's / route's index in the model (each at most
    once), or -1 (its cells stay 0). Written from the stored cells straight into the new layout: decoding the old
    matrix and gathering from it would copy most of a GB twice at 2,000 routes.
    """
    cells, values = _encoding.decode_cells(model)
    old_terms, old_routes = np.divmod(cells, max(1, model.routes))
    sums = np.bincount(old_terms, values.astype(np.float64), minlength=len(model.terms))
    means = (sums / max(1, model.routes)).astype(np.float32)
    rows, columns = np.flatnonzero(term_map >= 0), np.flatnonzero(route_map >= 0)
    new_term = np.full(len(model.terms), -1, np.int64)
    new_term[term_map[rows]] = rows
    new_route = np.full(model.routes, -1, np.int64)
    new_route[route_map[columns]] = columns
    weights = np.zeros((len(term_map), len(route_map)), np.float32)
    weights[rows] = -means[term_map[rows], None]  # a known term's cell without a stored value
    weights[:, route_map < 0] = 0.0
    to_term, to_route = new_term[old_terms], new_route[old_routes]
    kept = (to_term >= 0) & (to_route >= 0)
    weights[to_term[kept], to_route[kept]] = values[kept] - means[old_terms[kept]]
    return weights


def text_vectors(
    model: LexicalModel, routes: Sequence[RouteText]
) -> tuple[list[str], Float32Array, IntArray, Float32Array, IntArray]:
    """Every text of `routes` over the model's terms, plus the terms they add.

    A term the model does not know gets an idf as if the model's texts had not held it
    (their number is read back from the largest idf, that of a term in one text).

    Returns:
        The added terms and their idf (ids from `len(model.terms)` on), then every text's
        normalised vector concatenated: (term ids, values, route index).
    """
    idf = _encoding.decode_idf(model)
    n_docs = 2.0 * math.exp(float(idf.max(initial=1.0)) - 1.0) - 1.0
    added: Counter[str] = Counter()
    known = set(model.terms)
    for route in routes:
        for text in _route_texts(route):
            added.update(term for term in _count_terms(text) if term not in known)
    df = np.fromiter(added.values(), np.float32, len(added))
    new_idf = (np.log((1.0 + n_docs) / (1.0 + df)) + 1.0).astype(np.float32)
    vocabulary = _vocabulary_of([*model.terms, *added], np.concatenate([idf, new_idf]))
    ids: list[IntArray] = [np.zeros(0, np.int64)]
    values: list[Float32Array] = [np.zeros(0, np.float32)]
    owners: list[IntArray] = [np.zeros(0, np.int64)]
    for index, route in enumerate(routes):
        for text in _route_texts(route):
            text_ids, text_values = vocabulary.vector(text)
            ids.append(text_ids)
            values.append(text_values)
            owners.append(np.full(len(text_ids), index, np.int64))
    return list(added), new_idf, np.concatenate(ids), np.concatenate(values), np.concatenate(owners)


def _vocabulary_of(names: Sequence[str], idf: Float32Array) -> _Vocabulary:
    terms = {term: i for i, term in enumerate(names)}
    is_char = np.fromiter((t.startswith(_terms.CHAR_PREFIX) for t in terms), bool, len(terms))
    return _Vocabulary(terms, idf, is_char)


@dataclass(slots=True)
class _Features:
    """One message's terms as the scorer saw them (kept for `explain` on the same thread)."""

    message: str
    words: list[_Resolved]
    has_content: bool
    ids: IntArray
    values: Float32Array


# Learned models by fingerprint of their route texts, most recent last. Editing a profile's
# policy, rules or tools leaves its routes' text alone: the studio then recompiles at once
# instead of learning again. Small, because a CLINC150-size model is tens of megabytes.
_LEARNED: dict[str, LexicalModel] = {}
_LEARNED_SIZE = 4
_LEARNING = threading.Lock()


# How far (in calibrated logits) a route must lead the out-of-scope class on a message's
# content words alone to take back a message the class leads on the whole (`_is_out_of_scope`):
# e² ≈ 7 to 1. Chosen on CLINC150 val and the training remainders of Banking77 and HWU64, small
# profiles (bench/bench_oos_small.py): 0 took back 3-10 points more of CLINC150's out-of-scope
# messages, for at most 0.4 points of in-scope decisions; 2 gave up 0-1 point for 0.05-0.2.
CONTENT_LEAD = 2.0

# Shares of a build's progress: counting the texts, then learning (encoding is quick).
_CORPUS_SHARE = 0.2
_TRAIN_END = 0.95
# The name of the class a profile's out-of-scope examples form while learning: route names
# are never empty, so it cannot collide with one.
OUT_OF_SCOPE = ""


def learning_texts(
    routes: Sequence[RouteText], out_of_scope: Sequence[str], background: bool = True
) -> list[RouteText]:
    """What the model learns from: the routes, then the out-of-scope examples as one class.

    Without out-of-scope examples it is the routes alone, so such a pack's model (and its
    fingerprint) is what it was before the examples existed. `background`: whether the
    built-in background may join them (False: the pack's `no_background`).
    """
    extra = _background.background_for(routes, out_of_scope) if background else ()
    negatives = (*out_of_scope, *extra)
    if not any(text.strip() for text in negatives):
        return list(routes)
    return [*routes, RouteText(OUT_OF_SCOPE, "", negatives)]


def learned_model(
    routes: Sequence[RouteText],
    fingerprint: str,
    *,
    progress: _corpus.Progress = _corpus.NO_PROGRESS,
    previous: tuple[LexicalModel, Sequence[RouteText]] | None = None,
) -> LexicalModel:
    """Learn the model for these routes (or reuse this process's copy), always quantised.

    A freshly learned model goes through the same compact encoding a pack stores, so a pack
    that learns at load and one that carries its model score every message identically.
    `progress` is told the fraction done as learning proceeds; what it raises aborts.
    `previous` (an earlier model and the routes its columns learned from) warm-starts
    learning, matched by term and route name. `routes` may end with the out-of-scope class
    (`learning_texts`).
    """
    with _LEARNING:
        model = _LEARNED.pop(fingerprint, None)
        if model is None:
            vocabulary, corpus = _build_corpus(routes, progress.part(0.0, _CORPUS_SHARE))
            warm = None
            if previous is not None and _warm_starts(*previous, corpus, len(routes)):
                warm = _warm(vocabulary, routes, *previous)
            has_none = routes[-1].name == OUT_OF_SCOPE
            trained = _model.train(
                corpus,
                len(routes),
                out_of_scope=has_none,
                warm=warm,
                progress=progress.part(_CORPUS_SHARE, _TRAIN_END),
                vectors=_meaning_vectors(routes, corpus, warm),
            )
            terms = list(vocabulary.ids)
            model = _encoding.encode(
                routes,
                terms,
                vocabulary.idf,
                trained.weights,
                trained.temperature,
                trained.calibrated,
                trained.floor,
                trained.margin,
                bias=trained.bias,
                semantic=trained.semantic,
                fitted_on=trained.fitted_on,
                none_logit=trained.none_logit,
                in_place=True,
                progress=progress.part(_TRAIN_END, 1.0),
                known_fingerprint=fingerprint,
            )
        _LEARNED[fingerprint] = model
        while len(_LEARNED) > _LEARNED_SIZE:
            _LEARNED.pop(next(iter(_LEARNED)))
    progress(1.0)
    return model


# How much a profile's texts may grow (or shrink, as a factor) on warm starts before its
# model is learned afresh, refitting temperature, floor, margin and the view's weight.
REFIT_GROWTH = 1.5


def _warm_starts(
    model: LexicalModel,
    learned_from: Sequence[RouteText],
    corpus: _corpus.Corpus,
    n_routes: int,
) -> bool:
    """Whether an earlier model may start the learning of this corpus's.

    A warm start keeps what the earlier model fitted on held-out texts (its temperature,
    floor and margin, its semantic view's weight) and learns nothing of them anew. That is
    right only when the earlier model fitted them: a profile that grew past the size that
    calibrates (CALIBRATION_TEXTS) from an uncalibrated model would keep temperature 1 and a
    floor fitted by cross-validation on a few texts (0.16 where learning afresh fits 0.60),
    and no second model and no view, edit after edit. So it learns afresh once: when the
    earlier model was not calibrated and this one can be, or when this one could learn a
    semantic view and the earlier model, written before models recorded `fitted_on`, has
    none (it was learned before the view existed; a model that records it and has no view
    was judged to need none, as its words placed the held-out texts). And it learns afresh
    when the texts have grown or shrunk by REFIT_GROWTH since the model that fitted what is kept
    (`fitted_on`; an older model's own texts): a profile calibrated at 200 texts fitted its
    floor on 20 held-out ones, and would keep that floor at 2,000 texts. Growth by half
    again at a time keeps the learning afresh to a few times in a profile's life, their cost
    a geometric series (at most three full learnings of its largest size in all).
    """
    can_calibrate = corpus.n_docs >= _model.CALIBRATION_TEXTS and n_routes >= 2
    if can_calibrate and not model.calibrated:
        return False
    could_see_meaning = (
        _semantic.ENABLED and can_calibrate and n_routes <= _candidates.CANDIDATE_ROUTES
    )
    if could_see_meaning and model.semantic is None and model.fitted_on is None:
        return False
    fitted = _fit_size(model, learned_from)
    return fitted < corpus.n_docs * REFIT_GROWTH and corpus.n_docs < fitted * REFIT_GROWTH


def _meaning_vectors(
    routes: Sequence[RouteText], corpus: _corpus.Corpus, warm: _model.Warm | None
) -> Float32Array | None:
    """Each training text's static vector, in corpus order, when the model can learn a
    semantic view from them (`_model.train` says where); None where it cannot, so that a
    pack that would not use them does not pay for them."""
    if not _semantic.ENABLED or corpus.n_docs < _model.CALIBRATION_TEXTS:
        return None
    if len(routes) > _candidates.CANDIDATE_ROUTES:
        return None
    if warm is not None and warm.semantic_weight is None:
        return None
    return _static.table().vectors([text for route in routes for text in _route_texts(route)])


# `Scored(array=...)` filled in as a draft (routing_core._records): its slots in order,
# `_array`, `_scores` (None: listed when read), `note`, `usage`; one per turn.
_scored_array: Callable[..., Scored] = builder(Scored)

# What `info.details["model"]` says of a model carried over from earlier route texts.
STALE_ORIGIN = "stale: learned before the routes' latest edits, not retrained"


# Why a message the out-of-scope class took was not scored, by what the class learned from:
# (the pack's own examples, the built-in off-topic messages).
_OUT_OF_SCOPE_WORDS = {
    (True, False): "it reads like this profile's out-of-scope examples",
    (False, True): "it reads like off-topic talk: the built-in off-topic messages routing"
    " learns until the profile has out-of-scope examples of its own",
    (True, True): "it reads like this profile's out-of-scope examples or the built-in"
    " off-topic messages",
}


class LexicalScorer:
    """Scores a message against routes by their words; see the module docstring."""

    def __init__(
        self,
        names: Sequence[str],
        vocabulary: _Vocabulary,
        weights: Weights | DenseWeights,
        temperature: float = 1.0,
        origin: str = "trained at load",
        calibrated: bool = False,
        floor: float | None = None,
        margin: float | None = None,
        bias: Float32Array | None = None,
        semantic: Semantic | None = None,
        examples: Mapping[str, tuple[str, ...]] | None = None,
        none_logit: float | None = None,
    ):
        self._names = tuple(names)
        # Each route's examples, for saying which one a message is close to in meaning.
        self._examples = examples or {}
        self._explained: dict[int, Float32Array] = {}  # see `_example_vectors`
        # The router's candidate tuple, once found equal to `_names` (see `_is_every`).
        self._every = self._names
        self._index = {name: i for i, name in enumerate(self._names)}
        self._vocabulary = vocabulary
        self._weights = weights
        self._inverse_temperature = 1.0 / temperature
        self._calibrated = calibrated
        self._floor, self._margin = floor, margin
        self._none_logit = none_logit
        self._bias = bias
        self._semantic = semantic
        if semantic is not None:  # loaded with the pack, not on its first turn
            self._table = _static.table(semantic.table)
            matrix, bias = semantic.folded()
            # Summed in double precision on every machine (docs/pack-format.md, Lexical
            # scorer, its arithmetic).
            self._meaning = (matrix.astype(np.float64), bias)
            self._projection = _static.Projection(self._table, self._meaning[0], bias)
        # `explain` follows `score` on the same message in the router: one entry per thread
        # spares it recomputing the message's terms, and threads never share an entry.
        self._last = threading.local()
        self.info = ScorerInfo(
            name="lexical",
            floor=0.0 if floor is None else floor,
            categorical=False,
            temperature=TEMPERATURE,
            details={
                "routes": len(self._names),
                "terms": weights.n_terms,
                "calibration_temperature": temperature,
                "calibrated": calibrated,
                "fitted_floor": floor,
                "fitted_margin": margin,
                "none_logit": none_logit,
                "out_of_scope_examples": weights.n_routes > len(self._names),
                "semantic_weight": None if semantic is None else semantic.weight,
                "model": origin,
            },
        )

    @classmethod
    def build(
        cls,
        routes: Sequence[RouteText],
        stored: LexicalModel | None = None,
        out_of_scope: Sequence[str] = (),
        background: bool = True,
    ) -> LexicalScorer:
        """Learn every route's term weights from its name, description, examples and keywords.

        Args:
            routes: what to learn from.
            stored: weights learned when the pack was built (`scorer.model`); used when
                they were learned from exactly these routes, otherwise learned again; a
                model marked `stale` is used as it is (`stored.with_stale_model`).
            out_of_scope: messages that belong to no route, learned as a class that is
                never scored, so that messages like them score low on every route.
            background: whether the built-in background joins them (`learning_texts`).

        Raises:
            ValueError: no routes, or two routes with the same name.
        """
        names = [route.name for route in routes]
        if not names:
            raise ValueError("the lexical scorer needs at least one route")
        if len(set(names)) != len(names):
            raise ValueError("route names must be unique")
        texts = learning_texts(routes, out_of_scope, background)
        examples = {route.name: route.examples for route in routes}
        if stored is not None and stored.stale and stored.routes == len(texts):
            return cls._from_model(names, stored, STALE_ORIGIN, examples)
        fingerprint = _encoding.fingerprint(texts)
        if stored is not None and stored.fingerprint == fingerprint and not stored.stale:
            return cls._from_model(names, stored, "stored in the pack", examples)
        origin = "trained at load" if stored is None else "retrained: routes changed since build"
        return cls._from_model(names, learned_model(texts, fingerprint), origin, examples)

    @classmethod
    def _from_model(
        cls,
        names: list[str],
        model: LexicalModel,
        origin: str,
        examples: Mapping[str, tuple[str, ...]] | None = None,
    ) -> LexicalScorer:
        idf = _encoding.decode_idf(model)
        cells, values = _encoding.decode_cells(model)
        weights = weights_of(cells, values, len(model.terms), model.routes)
        vocabulary = _vocabulary_of(model.terms, idf)
        scorer = cls(
            names,
            vocabulary,
            weights,
            model.temperature,
            origin,
            model.calibrated,
            model.floor,
            model.margin,
            _encoding.decode_bias(model),
            _encoding.decode_semantic(model),
            examples,
            model.none_logit,
        )
        # How many texts the profile had when its thresholds were fitted (a warm start keeps
        # them until the texts grow or shrink by REFIT_GROWTH): None when not calibrated.
        scorer.info.details["fitted_on"] = model.fitted_on
        if model.stale:
            scorer.info.details.update(stale=True, trained_fingerprint=model.fingerprint)
        return scorer

    def to_model(self, routes: Sequence[RouteText]) -> LexicalModel:
        """These weights as the pack field `scorer.model` (`routes`: what they learned from,
        `learning_texts` when there were out-of-scope examples)."""
        temperature = 1.0 / self._inverse_temperature
        terms = list(self._vocabulary.ids)
        idf, weights = self._vocabulary.idf, self._weights.dense()
        return _encoding.encode(
            routes,
            terms,
            idf,
            weights,
            temperature,
            self._calibrated,
            self._floor,
            self._margin,
            bias=self._bias,
            semantic=self._semantic,
            none_logit=self._none_logit,
        )

    def score(self, message: str, candidates: Sequence[str]) -> list[float]:
        """Each candidate's calibrated probability for the message, in candidate order.

        All zeros when the message has no known term, or (in a pack too small to calibrate)
        no content word: empty, punctuation, stop words only; and when the profile's
        out-of-scope examples are its likeliest class (Dialogflow's negative intent), so that
        it is unmatched at any floor, even in a pack too small to fit one.

        Raises:
            KeyError: a candidate is not one of the routes this scorer was built from.
        """
        result: list[float] = self._scores_of(message, candidates).tolist()
        return result

    def score_metered(self, message: str, candidates: Sequence[str]) -> Scored:
        """`score` as the cascade reads it, with the scores' array for the policy."""
        return self._scored(message, candidates, following=False)

    def score_following(self, message: str, candidates: Sequence[str]) -> Scored:
        """`score_metered` for a turn that follows a conversation (the cascade pools it with
        the incumbent's prior): the routes' softmax without the out-of-scope column.

        A follow-up ("for two people", "the 7 pm one") can read like the built-in
        background's small talk; zeros, or the routes' small shares beside the class, leave
        the prior too little to keep, and on SGD's conversations the background cost six
        points of turn accuracy that way (docs/decisions.md, "Out of scope is for a first
        turn"). So the class speaks on a first turn only (docs/pack-format.md, Lexical
        scorer, step 8).
        """
        return self._scored(message, candidates, following=True)

    def _scored(self, message: str, candidates: Sequence[str], following: bool) -> Scored:
        chosen = self._scores_of(message, candidates, following)
        chosen.flags.writeable = False
        return _scored_array(chosen, None, None, NO_USAGE)  # `Scored(array=chosen)`

    def _scores_of(
        self, message: str, candidates: Sequence[str], following: bool = False
    ) -> Float32Array:
        """The scores as an array: `score` lists them, `score_metered` hands the array on."""
        columns = None if self._is_every(candidates) else self._columns(candidates)
        # Following a conversation, the softmax is taken over the route columns alone: each
        # route's share of what is not out of scope, p_r / sum of p_s over the routes
        # (docs/pack-format.md, Lexical scorer, step 8), in no more steps than a first turn.
        posterior = self._posterior(message, routes_only=following)
        if posterior is None or (not following and self._is_out_of_scope(message, posterior)):
            return np.zeros(len(candidates), dtype=np.float32)
        # Without reordering, the routes are the first columns (the out-of-scope class follows).
        chosen: Float32Array = (
            posterior[: len(self._names)] if columns is None else posterior[columns]
        )
        return chosen

    def logits(self, message: str) -> Float32Array | None:
        """The message's uncalibrated logits over every route, or None with nothing to score."""
        features = self._features(message)
        if features is None:
            return None
        logits = self._weights.logits(features.ids, features.values)
        if self._bias is not None:
            logits += self._bias
        if self._semantic is not None:
            logits += self._projection.logits(message)
        return logits

    def explain(self, message: str, route: str, limit: int = 5) -> list[Term]:
        """The message's words and bigrams that raised `route` most, strongest first.

        A word's weight includes its character n-grams' share, so "refunds" is credited
        even when only its n-grams were seen in the route's text. Lone stop words are left
        out when the message has a content word (they count in the score but explain
        nothing to a person); a message of stop words only is explained by them. Where the
        semantic view raised the route, what it added is one more term, ranked with the
        words: the route's example nearest the message in meaning (`_meaning_term`), so
        "turn the chandelier up" is explained by "lights up please" and not by "up" alone.

        Raises:
            KeyError: `route` is not one of the routes this scorer was built from.
        """
        column = self._column(route)
        features = self._features(message)
        if features is None or limit <= 0:
            return []
        contributions = features.values * self._weights.column(features.ids, column)
        by_source = _credit(features.words, features.ids, contributions)
        # A lone stop word ("was", "my") does count in the score, but names nothing a person
        # could act on beside a content word; its bigrams ("was charged") are kept.
        kept = [
            (t, w)
            for t, w in by_source.items()
            if w > 0.0 and (_terms.is_content(t) or not features.has_content)
        ]
        terms = [Term(term, weight) for term, weight in kept]
        meaning = self._meaning_term(message, column)
        terms += [meaning] if meaning is not None else []
        return sorted(terms, key=lambda t: (-t.weight, t.term))[:limit]

    def _meaning_term(self, message: str, column: int) -> Term | None:
        """What the semantic view added to the route at `column`, beside the average route
        (as a word's weight is, its weights being centred per term), as the route's example
        nearest the message; None when it added nothing, or the route has no example."""
        examples = self._examples.get(self._names[column], ())
        if self._semantic is None or not examples:
            return None
        vector = self._table.vector(message)
        scores = self._projection.logits(message)  # what the view added to the score
        lead = float(scores[column] - scores.mean())
        if not vector.any() or not lead > 0.0:
            return None
        nearest = int((self._example_vectors(column, examples) @ vector).argmax())
        return Term(examples[nearest], lead, "example")

    def _example_vectors(self, column: int, examples: tuple[str, ...]) -> Float32Array:
        """The route's examples' static vectors, kept for the routes explained lately: a
        hundred examples took 0.6 ms to encode, on every decision explained (an event, a
        playground turn). At most EXPLAINED_ROUTES routes' (about 100 KB each at CLINC150
        size); past it the cache starts afresh."""
        kept = self._explained.get(column)
        if kept is None:
            if len(self._explained) >= EXPLAINED_ROUTES:
                self._explained.clear()
            kept = self._explained[column] = self._table.vectors(examples)
        return kept

    def spelling_share(self, message: str) -> float | None:
        """How much of the message's spelling the model knows, when that is all it read.

        A message none of whose words nor word pairs the model knows is scored on fragments
        of its spelling (character n-grams) alone, and leans on them only by the share of its
        fragments that are known (docs/pack-format.md, Lexical scorer, step 5): that share,
        in [0, 1], so that a person can be told why "temporizadorr" still routes and "blorf
        snarg" does not. None when the message has a known word or pair (read as usual) or
        nothing the model knows.
        """
        features = self._features(message)
        return None if features is None else _spelling_share(features.words)

    def no_route_share(self, message: str) -> float | None:
        """The share of a first turn's mass that went to no route, in [0, 1].

        A model without an out-of-scope class has a "no route" term in a first turn's
        softmax (docs/pack-format.md, Lexical scorer, step 7), so the routes' scores add up
        to less than 1; what is missing is that share, so that a person can be told why an
        off-topic message's best route scored under the floor. None when the model has no
        such term or the message is not scored.
        """
        if self._none_logit is None:
            return None
        posterior = self._posterior(message)
        if posterior is None:
            return None
        return max(0.0, 1.0 - float(np.add.reduce(posterior[: len(self._names)], dtype=np.float64)))

    def nearest_route(self, message: str) -> tuple[str, float, float] | None:
        """When the out-of-scope class took a first turn's message (its routes all score 0:
        docs/pack-format.md, Lexical scorer, step 7), the route that came nearest, its share
        of the softmax over every column, and the class's share; None otherwise.

        A person who thinks the message should have routed sees which route it was closest to
        and by how much the off-topic text outweighed it, which the zeros do not tell."""
        posterior = self._posterior(message)
        if posterior is None or not self._is_out_of_scope(message, posterior):
            return None
        n_routes = len(self._names)
        best = int(np.argmax(posterior[:n_routes]))
        return self._names[best], float(posterior[best]), float(posterior[n_routes:].sum())

    def unscored_reason(
        self, message: str, *, own: bool = True, background: bool = False
    ) -> str | None:
        """Why the message scores zero on every route, said so a person can act on it.

        None when the message is scored. "No route scored above the floor" alone does not
        tell "hi" in a small pack (never scored) from a message the routes do not know.
        `own`, `background`: whether the model's out-of-scope class learned the pack's own
        examples, the built-in off-topic messages (the pack does not say;
        `routing_core.background_left_out` does), so that a profile with no out-of-scope
        examples is not told the message reads like its own.
        """
        if self._features(message) is not None:
            posterior = self._posterior(message)
            if posterior is not None and self._is_out_of_scope(message, posterior):
                return _OUT_OF_SCOPE_WORDS[own or not background, background]
            return None
        words, has_content = self._vocabulary.resolve(message)
        if not words:
            return "the message has no words"
        if not self._scores(has_content):
            return (
                "every word is a stop word, and a profile scores such a message only once it"
                f" has {_model.CALIBRATION_TEXTS} route texts (names, descriptions, examples,"
                " keywords) to calibrate on; an entry rule can route it meanwhile"
            )
        return "none of its words, nor parts of them, appear in any route's texts"

    def _is_every(self, candidates: Sequence[str]) -> bool:
        """Whether the candidates are every route in order: the router's usual call, scored
        without reordering. A tuple found equal is remembered by identity (tuples do not
        change): comparing 2,000 names cost 4 µs a turn."""
        if candidates is self._every:
            return True
        if isinstance(candidates, tuple) and candidates == self._names:
            self._every = candidates
            return True
        return False

    def _is_out_of_scope(self, message: str, posterior: Float32Array) -> bool:
        """Whether the out-of-scope class (the last column, if any) leads, on the whole
        message and on its content words alone.

        The class learns its texts' stop words too, and in a small profile a message's
        opening words could outweigh its one content word: "what is it about my refund"
        went to the class through "what is it about my" (docs/pack-format.md, "Lexical
        scorer"). So where the class leads, a route that leads it by CONTENT_LEAD on the
        content words alone (calibrated logits) takes the message back; a message of stop
        words only, or whose content words no route text has, is judged on the whole.
        Checked only where the class leads: no cost on the usual turn.
        """
        n_routes = len(self._names)
        if len(posterior) <= n_routes or int(posterior.argmax()) < n_routes:
            return False
        words = _terms.message_words(message)
        content = [word for word in words if _terms.is_content(word)]
        if not content or len(content) == len(words):
            return True
        logits = self.logits(" ".join(content))
        if logits is None:
            return True
        lead = (logits[:n_routes].max() - logits[n_routes:].max()) * self._inverse_temperature
        return not lead >= CONTENT_LEAD

    def _scores(self, has_content: bool) -> bool:
        """Whether this pack scores a message with (or, when calibrated, without) a content word."""
        return has_content or self._calibrated

    def _column(self, name: str) -> int:
        return self._columns((name,))[0]

    def _columns(self, names: Sequence[str]) -> list[int]:
        index = self._index
        try:
            return [index[name] for name in names]
        except KeyError as exc:
            raise KeyError(f"unknown route for the lexical scorer: {exc.args[0]!r}") from None

    def _features(self, message: str) -> _Features | None:
        """The message's known terms and TF-IDF values; None when it has nothing to score.

        Nothing to score: no known term, or only stop words in a pack too small to calibrate.
        """
        last: _Features | None = getattr(self._last, "features", None)
        if last is not None and last.message == message:
            return last
        words, has_content, occurrences = self._vocabulary.read(message)
        if not self._scores(has_content):
            return None
        ids, values = self._vocabulary.weigh(occurrences)
        if len(ids) == 0:
            return None
        share = _spelling_share(words)
        if share is not None and share < 1.0:
            values = values * np.float32(share)
        features = _Features(message, words, has_content, ids, values)
        self._last.features = features
        return features

    def _posterior(self, message: str, routes_only: bool = False) -> Float32Array | None:
        """Softmax over every column of the message's calibrated logits (and the "no route"
        term, when the model has one), or None; over the route columns alone (the
        out-of-scope column and the term left out) when `routes_only`."""
        logits = self.logits(message)
        if logits is None:
            return None
        if routes_only:
            logits = logits[: len(self._names)]  # a view: the steps below stay in place
        # In place: the logits are this call's own array (a few allocations fewer per turn).
        logits *= self._inverse_temperature
        top = float(np.maximum.reduce(logits))  # `.max()` without its Python wrapper
        if routes_only or self._none_logit is None:
            logits -= top
            np.exp(logits, out=logits)
            logits /= np.add.reduce(logits)
            return logits
        # A first turn's "no route" column, `none_logit` above the routes' mean: its share is
        # in the sum and in no column (docs/pack-format.md, Lexical scorer, step 7).
        routes = logits[: len(self._names)]
        none = float(np.add.reduce(routes, dtype=np.float64)) / len(routes) + self._none_logit
        top = max(top, none)
        logits -= top
        np.exp(logits, out=logits)
        logits /= float(np.add.reduce(logits)) + math.exp(none - top)
        return logits


def _spelling_share(words: list[_Resolved]) -> float | None:
    """None when the message has a known word or pair of words; else the share of its words'
    character n-grams that the model knows (docs/pack-format.md, Lexical scorer, step 5).
    Such a message is read on spelling alone, and its vector, scaled to norm 1 like any
    other, made one n-gram of "blorf snarg" that a route's word shares as strong as a whole
    known word."""
    known = total = 0
    for word, stem_id, grams, pair_id in words:
        if stem_id >= 0 or pair_id >= 0:
            return None
        known += len(grams)
        total += _terms.char_gram_count(len(word))
    return known / total if total else None


def _credit(words: list[_Resolved], ids: IntArray, contributions: Float32Array) -> dict[str, float]:
    """Each term's contribution, credited to the surface word or pair it first came from.

    Sources read as the person typed them ("charged twice", not the stems "charg twice").
    A term seen twice counts once in the vector, so it is credited once: to its first word.
    """
    weight_of = dict(zip(ids.tolist(), contributions.tolist(), strict=True))
    pop = weight_of.pop
    by_source: dict[str, float] = {}
    previous_word = None
    for word, stem_id, grams, pair_id in words:
        own = pop(stem_id, 0.0) + sum(map(pop, grams, repeat(0.0)))
        by_source[word] = by_source.get(word, 0.0) + own
        pair = word if previous_word is None else f"{previous_word} {word}"
        by_source[pair] = by_source.get(pair, 0.0) + pop(pair_id, 0.0)
        previous_word = word
    return by_source
