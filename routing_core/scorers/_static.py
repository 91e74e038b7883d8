"""Static sentence vectors: a word-piece table read by the lexical scorer's semantic view.

The lexical scorer knows only the words a route's texts use; a message that says "lamp"
where the examples say "light" gets nothing from its word. A sentence encoder knows, but a
transformer costs torch, 90 MB and about 10 ms a message. A table keeps most of that
knowledge at none of the cost: one vector per word piece of an encoder's vocabulary,
distilled from the model itself (`scripts/distill-static-table`, model2vec's method), so a
message's vector is the mean of its pieces' rows: a tokenizer call and a small gather, tens
of microseconds, no model at run time. docs/decisions.md, "A semantic view in the lexical
scorer", says why it is part of the default scorer.

Two tables ship with routing_core (`routing_core/static/`, NOTICE.md there says where each
comes from): `minilm-l6-static-256`, from all-MiniLM-L6-v2 (English, BERT's WordPiece), and
`e5-small-static-256`, from multilingual-e5-small (about 100 languages, XLM-RoBERTa's
SentencePiece unigram pieces), whose pieces carry meaning across languages: "lumière" and
"light" land near each other. A pack names the table its view learned on; a table is loaded
once per process, on first use, and only by packs that learned a view on it.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from routing_core._stored_arrays import MINILM, TABLES

# The table new views learn on; bench/bench_languages.py sets it to measure another.
from routing_core._stored_arrays import TABLE as TABLE
from routing_core._types import Float32Array, Float64Array
from routing_core.scorers._terms import MAX_CHARS

if TYPE_CHECKING:
    from tokenizers import Tokenizer


_FOLDER = Path(__file__).resolve().parents[1] / "static"
# Pieces past this many are not read (the model's own limit; a message states its intent early).
MAX_PIECES = 512
# Distinct words whose pieces are kept (a few MB); past it the cache starts afresh.
WORD_CACHE = 65536


class StaticTable:
    """The word-piece vectors and their tokenizer; `vectors(texts)` encodes texts."""

    def __init__(
        self,
        pieces: Float32Array,
        tokenizer: Tokenizer,
        unknown: str = "[UNK]",
        normalise: dict[int, str] | None = None,
    ) -> None:
        """`pieces`: each piece's vector, float32 (30 MB: summing float16 rows costs a turn
        three times as much); `unknown`: the tokenizer's unknown piece (left out of every
        vector); `normalise`: a per-character map applied to a word before the tokenizer
        sees it (the teacher's own normalisation, `str.translate`'s table)."""
        self.pieces = pieces
        self.dimensions = pieces.shape[1]
        self._tokenizer = tokenizer
        self._unknown = tokenizer.token_to_id(unknown)
        self._normalise = normalise
        # word -> its pieces' ids. Texts repeat their words, so the tokenizer sees each word
        # once (a CLINC150-size build: 15,000 texts, about 6,000 words) and a turn's words are
        # mostly known already. Bounded like the lexical scorer's word cache.
        self._pieces_of: dict[str, tuple[int, ...]] = {}
        self._lock = threading.Lock()

    def vectors(self, texts: Sequence[str]) -> Float32Array:
        """One L2-normalised row per text: the mean of its word pieces' vectors (a text with
        no piece the table knows is a row of zeros).

        A text is split at white space, and each part cut into the model's pieces by its
        own tokenizer (lower case, accents, punctuation and CJK characters one piece each,
        as the table was distilled); the parts' pieces are cached, so a build tokenizes
        each distinct part once.
        """
        if len(texts) == 1:
            return self.vector(texts[0])[None, :]
        out = self._means([text[:MAX_CHARS].split() for text in texts])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0.0] = 1.0
        out /= norms
        return out

    def vector(self, text: str) -> Float32Array:
        """A turn's message: `vectors([text])[0]`, by a gather and one sum (no sparse
        matrix to set up, no lock unless a word is new)."""
        known = self._pieces_of
        ids: list[int] = []
        for word in text[:MAX_CHARS].split():
            pieces = known.get(word)
            if pieces is None:
                pieces = self._ids_of({word})[word]
            ids.extend(pieces)
        if not ids:
            return np.zeros(self.dimensions, np.float32)
        # The ufunc's reduction: `.sum(axis=0)` goes through a Python wrapper every turn.
        out: Float32Array = np.add.reduce(self.pieces.take(ids[:MAX_PIECES], axis=0), axis=0)
        wide = out.astype(np.float64)  # an exact sum's order-free twin (see `rows_dot`)
        norm = math.sqrt(float(wide @ wide))
        if norm > 0.0:
            out /= np.float32(norm)
        return out

    def _means(self, split: list[list[str]]) -> Float32Array:
        """Each text's summed piece vectors, as (texts x words) @ (words x summed pieces).

        Summed by word, so that the work done per text is numpy's (a CLINC150-size build
        is 15,000 texts of some 120,000 words over 6,000 distinct ones).
        """
        from scipy import sparse  # building only: a turn's message never needs it

        ids_of = self._ids_of({word for words in split for word in words})
        known = list(ids_of)
        index = {word: i for i, word in enumerate(known)}
        sizes = np.fromiter((len(ids_of[word]) for word in known), np.int64, len(known))
        flat_ids = np.fromiter((i for word in known for i in ids_of[word]), np.int64)
        sums = np.zeros((len(known), self.dimensions), np.float32)
        if len(flat_ids):
            starts_of = np.concatenate([[0], np.cumsum(sizes)[:-1]])
            has = sizes > 0
            rows = self.pieces.take(flat_ids, axis=0)
            sums[has] = np.add.reduceat(rows, starts_of[has], axis=0)
        flat = np.fromiter((index[w] for words in split for w in words), np.int64)
        starts = np.zeros(len(split) + 1, np.int64)
        np.cumsum([len(words) for words in split], out=starts[1:])
        words = sparse.csr_array(
            (np.ones(len(flat), np.float32), flat, starts), shape=(len(split), len(known))
        )
        # Sums, not means: each row is normalised after, which makes them the same vector.
        out: Float32Array = np.asarray(words @ sums, np.float32)
        return out

    def _ids_of(self, words: set[str]) -> dict[str, tuple[int, ...]]:
        """Each word's piece ids ([UNK] left out), tokenizing only the words not seen before."""
        with self._lock:
            new = [word for word in words if word not in self._pieces_of]
            if len(self._pieces_of) + len(new) > WORD_CACHE:
                self._pieces_of.clear()
                new = list(words)
            # One word at a time: `encode_batch` starts the tokenizer's thread pool, whose
            # threads go on spinning after the batch and took a core from the turns that
            # followed (route() p50 130 -> 145-230 us on 2 cores), and a pool started before
            # a fork makes the child warn. A word is a few microseconds on its own.
            for word in new:
                ids = self._encode(word)
                self._pieces_of[word] = tuple(i for i in ids if i != self._unknown)
            return {word: self._pieces_of[word] for word in words}

    def _encode(self, word: str) -> list[int]:
        """The word's piece ids; a lone surrogate (which no UTF-8 tokenizer accepts, and a
        JSON message may carry) is read as U+FFFD, as a decoder would have."""
        if self._normalise is not None:
            word = word.translate(self._normalise)
        try:
            ids: list[int] = self._tokenizer.encode(word, add_special_tokens=False).ids
        except (TypeError, UnicodeEncodeError):
            clean = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in word)
            ids = self._tokenizer.encode(clean, add_special_tokens=False).ids
        return ids


# Memory a view's word cache may take (`Projection`): a row of 1 + dimensions + routes float64
# numbers a word, 3.3 KB at CLINC150 size, so about 7,600 words there (CLINC150's test split
# has 4,316 distinct ones). Past it the cache starts afresh, as the table's does. Rows of the
# products alone, the norm taken from the pieces, held twice the words and cost 35,000
# instructions a turn more (docs/lab/benchmarks.md, "The meaning view a word at a time").
PROJECTED_BYTES = 24 << 20
# Rows a projection's cache starts with; it doubles as words come, up to its bound.
_FIRST_ROWS = 64


class _Generation:
    """One generation of a projection's word cache: `rows[i]` is the word `index` maps to i.

    Rows are written before their word enters `index`, and `rows` is replaced by a larger
    copy (never resized in place), so a reader that looks its words up first and reads
    `rows` after finds every row it was told of, whatever another thread adds meanwhile.
    """

    __slots__ = ("index", "rows", "used")

    def __init__(self, width: int) -> None:
        self.index: dict[str, int] = {}
        self.rows = np.empty((_FIRST_ROWS, width), np.float64)
        self.used = 0


class Projection:
    """What a semantic view adds to a message's logits, `v · M + b` (docs/pack-format.md,
    Lexical scorer, step 6), computed a word at a time.

    `v` is the message's pieces summed, divided by the sum's norm; so `v · M` is the sum of
    each word's own pieces times `M`, divided by that norm. A word's row holds its number of
    pieces, its pieces' sum `s` and `s · M`, in double precision: a turn gathers its words'
    rows and adds them up, where `v · M` was a (dimensions x routes) product on every message
    (CLINC150: 256 x 151, a third of the scorer's numpy work). The same numbers as the
    product of the float32 vector, to float32's precision (and closer to the binary64 the
    specification asks for); a message of more than MAX_PIECES pieces, which the sum cuts
    inside a word, is summed from its pieces. A word's row is made by the same steps
    whenever it is made, and a message's rows are added in its words' order, so the numbers
    depend on the message alone, never on what the cache held before (a word met for the
    first time pays for its row: a product with the matrix, which the message's own product
    cost before).
    """

    def __init__(self, table: StaticTable, matrix: Float64Array, bias: Float32Array) -> None:
        self._table = table
        self._matrix = matrix
        self._bias = bias.astype(np.float64)
        self._dimensions = table.dimensions
        width = 1 + table.dimensions + matrix.shape[1]
        self._capacity = max(_FIRST_ROWS, PROJECTED_BYTES // (8 * width))
        self._generation = _Generation(width)
        self._lock = threading.Lock()

    def logits(self, text: str) -> Float64Array:
        """`v · M + b` for the message `text`: a new array, the caller's to change."""
        words = text[:MAX_CHARS].split()
        generation = self._generation
        get = generation.index.get
        looked_up = [get(word) for word in words]
        if None in looked_up:
            generation = self._learn(words)
            rows = [generation.index[word] for word in words]
        else:
            rows = cast(list[int], looked_up)
        if not rows:
            return self._bias.copy()
        summed = np.add.reduce(generation.rows.take(rows, axis=0), axis=0)
        if summed[0] > MAX_PIECES:
            return self._cut(words)
        vector = summed[1 : 1 + self._dimensions]
        norm = math.sqrt(float(vector @ vector))
        out: Float64Array = summed[1 + self._dimensions :]
        if norm > 0.0:
            out /= norm
        out += self._bias
        return out

    def _cut(self, words: list[str]) -> Float64Array:
        """`logits` of a message past MAX_PIECES pieces, cut where the vector cuts it (inside
        a word, perhaps): its pieces summed as they are, in the same double precision."""
        known = self._table._ids_of(set(words))
        ids = [i for word in words for i in known[word]][:MAX_PIECES]
        summed = self._table.pieces.take(ids, axis=0).astype(np.float64).sum(axis=0)
        norm = math.sqrt(float(summed @ summed))
        out: Float64Array = summed @ self._matrix
        if norm > 0.0:
            out /= norm
        out += self._bias
        return out

    def _learn(self, words: list[str]) -> _Generation:
        """Add the rows of the words not kept yet; the generation that holds all of `words`."""
        with self._lock:
            generation = self._generation
            new = [word for word in dict.fromkeys(words) if word not in generation.index]
            if generation.used + len(new) > self._capacity:
                generation = self._generation = _Generation(generation.rows.shape[1])
                new = list(dict.fromkeys(words))
            pieces_of = self._table._ids_of(set(new))
            for word in new:
                self._add(generation, word, pieces_of[word])
            return generation

    def _add(self, generation: _Generation, word: str, pieces: tuple[int, ...]) -> None:
        if generation.used == len(generation.rows):
            size = min(2 * len(generation.rows), max(self._capacity, generation.used + 1))
            larger = np.empty((size, generation.rows.shape[1]), np.float64)
            larger[: generation.used] = generation.rows[: generation.used]
            generation.rows = larger
        row = generation.rows[generation.used]
        ids = np.asarray(pieces, np.intp)
        summed = self._table.pieces.take(ids, axis=0).astype(np.float64).sum(axis=0)
        row[0] = len(pieces)
        row[1 : 1 + self._dimensions] = summed
        row[1 + self._dimensions :] = summed @ self._matrix
        generation.index[word] = generation.used
        generation.used += 1


_loaded: dict[str, StaticTable] = {}
_lock = threading.Lock()


def table(name: str | None = None) -> StaticTable:
    """The table called `name` (TABLE when None), loaded once per process.

    Raises:
        ValueError: this version of routing_core has no table of that name.
    """
    name = TABLE if name is None else name
    with _lock:
        if name not in _loaded:
            _loaded[name] = _load(name)
        return _loaded[name]


def _load(name: str) -> StaticTable:
    if name not in TABLES:
        raise ValueError(f"unknown semantic table {name!r} (this routing_core knows {TABLES})")
    with np.load(_FOLDER / f"{name}.npz") as data:  # int8 x a float32 scale per piece
        pieces = (data["pieces"] * data["scales"][:, None]).astype(np.float32, copy=False)
        vocabulary = data["vocabulary"].tobytes().decode("utf-8").split("\n")
        if name == MINILM:
            return StaticTable(pieces, word_piece_tokenizer(vocabulary))
        scores = data["scores"].astype(np.float64).tolist()
        codes = data["normalise_from"].tolist()
        outputs = data["normalise_to"].tobytes().decode("utf-8").split("\n")
    normalise: dict[int, str] = dict(zip(codes, outputs, strict=True))
    return StaticTable(pieces, unigram_tokenizer(vocabulary, scores), "<unk>", normalise)


def word_piece_tokenizer(vocabulary: Sequence[str]) -> Tokenizer:
    """all-MiniLM-L6-v2's tokenizer (BERT's uncased WordPiece) over `vocabulary`, piece i
    having id i: its settings are BERT's, so only the pieces need storing (the table's
    `vocabulary`, one piece a line) and not the model's tokenizer file."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordPiece

    ids = {piece: i for i, piece in enumerate(vocabulary)}
    tokenizer = Tokenizer(WordPiece(ids, unk_token="[UNK]", max_input_chars_per_word=100))
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.add_special_tokens(["[PAD]", "[UNK]"])
    return tokenizer


def unigram_tokenizer(vocabulary: Sequence[str], scores: Sequence[float]) -> Tokenizer:
    """XLM-RoBERTa's SentencePiece unigram tokenizer over `vocabulary` (piece i, id i, with
    its log-probability `scores[i]`; the last piece is the unknown one): words are cut into
    the most probable sequence of the kept pieces, each word starting with the metaspace
    '▁', as multilingual-e5 cuts them. Its normalisation (NFKC, control characters
    dropped) is the table's per-character map, applied by `StaticTable` before this."""
    from tokenizers import Tokenizer, pre_tokenizers
    from tokenizers.models import Unigram

    pieces = list(zip(vocabulary, scores, strict=True))
    tokenizer = Tokenizer(Unigram(pieces, unk_id=len(pieces) - 1, byte_fallback=False))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement="▁", prepend_scheme="always", split=True
    )
    return tokenizer
