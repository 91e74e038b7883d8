"""The correction of a large pack, learned against each text's strongest candidate routes only.

Softmax regression over every route costs (texts x terms x routes): at 2,000 routes nearly all
of it is spent pushing down routes that naive Bayes already ranks far below the right one,
whose share of the softmax is nil. Past CANDIDATE_ROUTES routes, each text is therefore
trained against its own route and the CANDIDATES - 1 routes naive Bayes finds strongest for
it on the word terms (the confusable ones), in a softmax over those alone. A step then costs
(texts x terms x CANDIDATES), whatever the number of routes; the first passes push only the
EARLY_CANDIDATES strongest of them (steps of half the cost, while the correction is coarse).
Momentum moves only the cells a step touched. Up to CANDIDATE_ROUTES routes the full softmax is learned (`_model.py`), so the
public data sets' figures do not depend on this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from routing_core._types import Float32Array, IntArray
from routing_core.scorers._corpus import BATCH, BATCHING_SHARE, MOMENTUM, SEED, Corpus, Progress
from routing_core.scorers._memory import zeros_in_small_pages
from routing_core.scorers._sparse import block_cells

if TYPE_CHECKING:
    from scipy import sparse

    from routing_core.scorers._sparse import SparseBayes


# Packs with more routes than this learn against candidates; at most this many per text.
CANDIDATE_ROUTES = 200
# 16, not 12: twelve made the 2,000 x 25 build ~2 s cheaper (12.2-12.8 -> 10.1-10.3 s) but
# cost 0.1-0.15 point on the real 291-route union at 25 examples per route (`quality_dev.py`
# u25, three seeds, beyond the 0.06 a seed moves it), the size real profiles have; eight were
# cheaper still and lost 2.4 points on 2,000 x 50. docs/decisions.md, "Sixteen candidates past
# 200 routes, with a wider margin".
CANDIDATES = 16
# The additive margin of the candidate softmax (the full softmax's is `_model.MARGIN`): a lead
# of 1.5 rather than 1 keeps pushing the confusable candidates (u3 85.22% -> 85.32% at twelve
# candidates; at sixteen u25 76.91-76.97 -> 76.95-76.98% over three seeds; 2.0 lost on the
# generated rows).
CANDIDATE_MARGIN = 1.5
# The last pass over every text reuses the held-out passes' batches and batches only the
# held-out texts anew (the full softmax, `_model._Correction`, batches every text anew):
# 176 of the 196 last-pass batches at 2,000 x 25 are not made twice (~0.8 s of 11 s). The
# batches differ, so the model does, by about what a seed changes (docs/lab/benchmarks.md,
# "fourth pass"). False only to compare with the full softmax step for step.
REUSE_BATCHES = True
# The first EARLY_EPOCHS of the four held-out passes push each text's EARLY_CANDIDATES
# strongest candidates only (its own route first, then naive Bayes' strongest; the softmax is
# still over all of them): those steps read and move only these cells, about half the work
# (2,000 x 25: ~1.6 against ~3.0 ms a step). The fourth held-out pass and the last one push
# every candidate. Over seeds 7-9 the real 291-route union at 25 per route is unchanged (u25
# 76.95-77.00% against 76.95-76.98%, u25b 76.90-76.95 against 76.79-76.92%, u3 85.35-85.53
# against 85.36-85.55%); four early passes or four candidates lost on u25. docs/decisions.md,
# "Early passes against eight candidates".
EARLY_CANDIDATES = 8
EARLY_EPOCHS = 3
# Texts whose naive-Bayes logits over every route are held at once (bounds the memory).
ROWS_AT_ONCE = 2048
# Terms whose cells are found at once (`_compact_cells`): a table of 1,024 x 2,000 bytes
# stays in cache.
TERMS_AT_ONCE = 1024
# Terms whose cells are looked up at once (`gathered_logits`): a table of 256 x 2,000 floats.
GATHERED_TERMS = 256
# Entries whose candidate cells are handled at once (`_block_sums`, `_compact_cells`): their
# entries x candidates temporaries are 1 MB, which the allocator reuses. A block of terms
# has up to a million entries at 2,000 x 25 (the commonest words and 3-grams), and whole
# blocks' temporaries (100 MB) were new pages for the kernel to hand over and zero: 0.4-1.4 s
# of system time per stage, run to run.
GATHERED_ENTRIES = 8192


def candidates(corpus: Corpus, bayes: SparseBayes, progress: Progress | None = None) -> IntArray:
    """Per text, its own route first, then the routes naive Bayes ranks highest on its words.

    A text's logits are its words' counted cells plus, per route, the route's constant for
    each unit of the words' weight (`_sparse.py`); a shift common to every route (the
    centring) changes no ranking, so it is left out. The few words that many routes hold
    are read as dense rows (a product of contiguous rows), the others as sparse cells.
    """
    n_routes = bayes.shape[1]
    words = corpus.char_sizes[corpus.ids] == 0
    held_by = np.diff(bayes.counted.indptr)
    heavy = (corpus.char_sizes == 0) & (held_by > DENSE_SHARE * n_routes)
    dense_rows = bayes.counted[np.flatnonzero(heavy)].toarray()
    heavy_matrix, light_matrix = _split_words(corpus, words, heavy)
    weight = np.bincount(
        corpus.rows[words], corpus.values[words].astype(np.float64), minlength=corpus.n_docs
    ).astype(np.float32)
    width = min(CANDIDATES, n_routes)
    out = np.empty((corpus.n_docs, width), np.int64)
    for first in range(0, corpus.n_docs, ROWS_AT_ONCE):
        if progress is not None:
            progress(first / corpus.n_docs)
        last = min(corpus.n_docs, first + ROWS_AT_ONCE)
        logits = np.asarray(heavy_matrix[first:last] @ dense_rows, np.float32)
        light = light_matrix[first:last] @ bayes.counted
        logits.reshape(-1)[block_cells(light, 0, last - first)] += light.data
        logits += weight[first:last, None] * bayes.empty
        logits[np.arange(last - first), corpus.routes[first:last]] = np.inf
        np.negative(logits, out=logits)  # the strongest first, without a negated copy
        top = np.argpartition(logits, width - 1, axis=1)[:, :width]
        order = np.argsort(np.take_along_axis(logits, top, axis=1), axis=1, kind="stable")
        out[first:last] = np.take_along_axis(top, order, axis=1)
    return out


# A word held by more than this share of the routes is read as a dense row by `candidates`:
# at 2,000 x 25, 456 words (3.6 MB of rows) that are 97% of the products' work.
DENSE_SHARE = 1 / 16


def _split_words(
    corpus: Corpus, words: npt.NDArray[np.bool_], heavy: npt.NDArray[np.bool_]
) -> tuple[sparse.csr_array, sparse.csr_array]:
    """The texts' words as two texts x terms matrices: over the `heavy` terms (numbered
    among themselves) and over the others."""
    from scipy import sparse

    column = np.cumsum(heavy) - 1
    dense_words = words & heavy[corpus.ids]
    light_words = words & ~heavy[corpus.ids]
    heavy_matrix = sparse.csr_array(
        (corpus.values[dense_words], (corpus.rows[dense_words], column[corpus.ids[dense_words]])),
        shape=(corpus.n_docs, int(heavy.sum())),
    )
    light_matrix = sparse.csr_array(
        (corpus.values[light_words], (corpus.rows[light_words], corpus.ids[light_words])),
        shape=(corpus.n_docs, corpus.n_terms),
    )
    return heavy_matrix, light_matrix


def gathered_logits(
    corpus: Corpus, bayes: SparseBayes, chosen: IntArray, progress: Progress | None = None
) -> Float32Array:
    """Every text's naive-Bayes logits on its candidate routes only (texts x candidates),
    less a shift common to a text's candidates (the centring, which changes no softmax).

    A text's weight times each candidate's constant, plus its entries' counted cells on
    its candidates: looked up block of terms by block in a small dense table of their
    cells (a few MB, reused), summed per block into the candidates of the texts it reaches.
    """
    from scipy import sparse

    n_routes = bayes.shape[1]
    by_term = sparse.csc_array(
        (corpus.values, (corpus.rows, corpus.ids)), shape=(corpus.n_docs, corpus.n_terms)
    )
    weight = np.bincount(corpus.rows, corpus.values.astype(np.float64), minlength=corpus.n_docs)
    sums = weight[:, None] * bayes.empty[chosen].astype(np.float64)
    counted = bayes.counted
    table = np.zeros(GATHERED_TERMS * n_routes, np.float32)
    # Scratch naming the texts a block reaches: a block is summed over those texts only, not
    # into a fresh texts x candidates array per block (6.4 MB at 2,000 x 25, in new pages
    # each time: 2 GB over its 320 blocks).
    reached = np.zeros(corpus.n_docs, np.bool_)
    for first in range(0, corpus.n_terms, GATHERED_TERMS):
        if progress is not None:
            progress(first / max(1, corpus.n_terms))
        last = min(corpus.n_terms, first + GATHERED_TERMS)
        cells = block_cells(counted, first, last)
        table[cells] = counted.data[counted.indptr[first] : counted.indptr[last]]
        lo, hi = by_term.indptr[first], by_term.indptr[last]
        reached[by_term.indices[lo:hi]] = True
        present = np.flatnonzero(reached)
        reached[present] = False
        sums[present] += _block_sums(by_term, first, last, table, chosen, present)
        table[cells] = 0.0
    out: Float32Array = sums.astype(np.float32)
    return out


def _block_sums(
    by_term: sparse.csc_array,
    first: int,
    last: int,
    table: Float32Array,
    chosen: IntArray,
    present: IntArray,
) -> npt.NDArray[np.float64]:
    """Terms [first, last)'s counted cells (`table`, their rows) on each candidate of the texts
    `present` (ascending, those the terms reach), times the entries' values, summed per text
    and candidate in the entries' order (as one `bincount` over them would).

    A few thousand entries at a time: the block of the commonest terms has 800,000 entries at
    2,000 x 25, whose entries x candidates temporaries (100 MB each) were new pages to fault
    in; `np.add.at` adds in order, so the chunks' sums are the one pass's.
    """
    n_routes, width = len(table) // GATHERED_TERMS, chosen.shape[1]
    slots = np.arange(width)
    partial = np.zeros(len(present) * width)
    lo, hi = by_term.indptr[first], by_term.indptr[last]
    terms = np.repeat(np.arange(last - first), np.diff(by_term.indptr[first : last + 1]))
    for start in range(lo, hi, GATHERED_ENTRIES):
        end = min(hi, start + GATHERED_ENTRIES)
        docs = by_term.indices[start:end]
        found = np.take(table, terms[start - lo : end - lo, None] * n_routes + chosen[docs])
        found *= by_term.data[start:end, None]
        flat = (np.searchsorted(present, docs)[:, None] * width + slots).ravel()
        np.add.at(partial, flat, found.astype(np.float64).ravel())
    return partial.reshape(-1, width)


def _sum_rows(contributions: Float32Array, rows: IntArray, n_rows: int) -> Float32Array:
    out = np.zeros((n_rows, contributions.shape[1]), np.float32)
    if len(rows):
        starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        out[rows[starts]] = np.add.reduceat(contributions, starts, axis=0)
    return out


@dataclass(frozen=True, slots=True)
class _Batch:
    """One mini-batch, its cells found once so that every epoch only does arithmetic.

    `cells` are the batch's distinct cells (indices into the learner's compact weights),
    `inverse` each entry's candidate cells as positions in `cells`: a step reads and writes
    each distinct cell once and sums the gradient of a shared cell with one `bincount`.
    """

    docs: IntArray
    rows: IntArray
    values: Float32Array
    # The batch's distinct compact cells: first (ascending) those an entry's first
    # EARLY_CANDIDATES candidates name, `early_cells` of them, then the others (ascending).
    cells: IntArray
    early_cells: int
    inverse: npt.NDArray[np.int32]  # entries x candidates: positions in `cells`
    rates: Float32Array  # per distinct cell: its term's learning rate
    row_starts: IntArray
    filled: IntArray


class CandidateCorrection:
    """Softmax regression on candidate routes, on top of fixed candidate `base` logits.

    Same interface as `_model._Correction`: successive `fit` calls continue the weights.
    Only the cells some text's step can touch (a learned term of the text x one of its
    candidates) have a weight: at 2,000 routes about 5 million of 110 million, so the
    weights and momentum are tens of MB instead of most of a GB each, and a step's reads
    and writes stay in cache. Cells no step touches keep their starting value (0, or the
    warm start's) and are added back by `add_to`.
    """

    def __init__(
        self,
        corpus: Corpus,
        chosen: IntArray,
        n_routes: int,
        rates: Float32Array,
        margin: float,
        initial: Float32Array | None = None,
    ):
        self.terms = np.flatnonzero(rates[:, 0] > 0.0)
        row_of = np.full(corpus.n_terms, -1, np.int64)
        row_of[self.terms] = np.arange(len(self.terms))
        learned = row_of[corpus.ids] >= 0
        self.corpus = Corpus(
            corpus.rows[learned],
            row_of[corpus.ids[learned]],
            corpus.values[learned],
            corpus.routes,
            len(self.terms),
            corpus.char_sizes[self.terms],
        )
        self.chosen = chosen
        self.n_routes = n_routes
        self.margin = margin
        self.full_cells, self.entry_cells, self.entry_rows = _compact_cells(
            self.corpus, chosen, n_routes
        )
        # Each cell's learning rate (its term's): a batch reads its cells' rates in their
        # (ascending) order instead of looking up each cell's term (twice the memory read,
        # at random).
        bounds = np.arange(len(self.terms) + 1) * max(1, n_routes)
        per_term = rates[self.terms, 0]  # per learned term, as `corpus` numbers them
        self.cell_rates = np.repeat(per_term, np.diff(np.searchsorted(self.full_cells, bounds)))
        self.initial = initial
        if initial is None:
            self.start = np.zeros(len(self.full_cells), np.float32)
        else:
            term_rows, routes = np.divmod(self.full_cells, max(1, n_routes))
            self.start = initial[self.terms[term_rows], routes]
        # Each cell's weight and momentum side by side, one 8-byte pair: a step reads and
        # writes both at once, in half the cache lines of two arrays (2,000 x 25: 3.5 -> 2.7 ms
        # a step). Gathered and scattered as complex64, one element per pair (a take along
        # axis 0 of the pairs is several times slower); `weights` is a view.
        self._pairs = np.zeros((len(self.full_cells), 2), np.float32)
        if initial is not None:
            self._pairs[:, 0] = self.start
        self.weights = self._pairs[:, 0]
        # Scratch for finding a batch's distinct cells in one pass (`_distinct`).
        self._slot = np.zeros(len(self.full_cells), np.int32)
        # The batches of the last fit of several passes, and its texts (`fit` reuses them).
        self._kept: list[_Batch] = []
        self._kept_docs: npt.NDArray[np.bool_] | None = None

    def scale_rates(self, factor: float) -> None:
        """Scale every learning rate by `factor`. A batch copies its cells' rates when it is
        made, so the batches kept for reuse are dropped: they would step at the old rates."""
        self.cell_rates *= np.float32(factor)
        self._kept, self._kept_docs = [], None

    def add_to(self, weights: Float32Array) -> None:
        """Add the learned correction to full terms x routes `weights`, in place."""
        if self.initial is not None:  # the warm start's cells, touched by a step or not
            for first in range(0, len(self.terms), ROWS_AT_ONCE):
                block = self.terms[first : first + ROWS_AT_ONCE]
                weights[block] += self.initial[block]
        term_rows, routes = np.divmod(self.full_cells, max(1, self.n_routes))
        weights[self.terms[term_rows], routes] += self.weights - self.start

    def add_rows(self, rows: Float32Array, first: int) -> None:
        """Add the learned correction to the rows of terms [first, first + len(rows)) of
        full terms x routes weights, in place (`add_to`, a block of terms at a time)."""
        lo, hi = np.searchsorted(self.terms, [first, first + len(rows)])
        mine = self.terms[lo:hi]
        if self.initial is not None:
            rows[mine - first] += self.initial[mine]
        width = max(1, self.n_routes)
        start, end = np.searchsorted(self.full_cells, [lo * width, hi * width])
        term_rows, routes = np.divmod(self.full_cells[start:end], width)
        rows[self.terms[term_rows] - first, routes] += (
            self.weights[start:end] - self.start[start:end]
        )

    def fit(
        self,
        base: Float32Array,
        docs: npt.NDArray[np.bool_],
        epochs: int,
        seed: int,
        progress: Progress,
        early_epochs: int = 0,
    ) -> None:
        """`epochs` passes over the texts `docs` in mini-batches (order fixed by `seed`), the
        first `early_epochs` of them pushing each text's first EARLY_CANDIDATES candidates."""
        picked = np.flatnonzero(docs)
        if len(picked) == 0 or epochs <= 0:
            progress(1.0)
            return
        # Texts an earlier fit batched keep their batches (made once, reused); the rest are
        # batched anew: the last pass over every text reuses the held-out passes' batches and
        # adds the held-out texts' own.
        known = self._kept_docs
        earlier = (
            self._kept if REUSE_BATCHES and known is not None and (docs >= known).all() else []
        )
        if earlier and known is not None:
            picked = np.flatnonzero(docs & ~known)
            self._kept, self._kept_docs = [], None  # held by `batches` below from here on
        shuffled = picked[np.random.default_rng(SEED).permutation(len(picked))]
        groups = [
            np.sort(shuffled[first : first + BATCH]) for first in range(0, len(picked), BATCH)
        ]
        preparing, learning = progress.part(0.0, BATCHING_SHARE), progress.part(BATCHING_SHARE, 1)
        # One pass needs each batch once: made when it is used, so they are never all held.
        batches: list[_Batch | None] = [*earlier, *([None] * len(groups))]
        groups = [batch.docs for batch in earlier] + groups
        if epochs > 1:
            for index, group in enumerate(groups):
                preparing(index / len(groups))
                if batches[index] is None:
                    batches[index] = self._batch(group)
            self._kept, self._kept_docs = [b for b in batches if b is not None], docs.copy()
        order = np.random.default_rng(seed)
        total, done = epochs * len(groups), 0
        for epoch in range(epochs):
            early = epoch < early_epochs
            for index in order.permutation(len(groups)):
                batch = batches[index]
                self._step(self._batch(groups[index]) if batch is None else batch, base, early)
                done += 1
                learning(done / total)
        progress(1.0)

    def logits(self, docs: npt.NDArray[np.bool_]) -> Float32Array:
        """The correction's logits of the texts `docs` on their candidates."""
        keep = docs[self.corpus.rows]
        rows = (np.cumsum(docs) - 1)[self.corpus.rows[keep]]
        cells = np.take(self.entry_cells, self.entry_rows[keep], axis=0)
        contributions = self.weights[cells] * self.corpus.values[keep, None]
        return _sum_rows(contributions, rows, int(docs.sum()))

    def _batch(self, docs: IntArray) -> _Batch:
        corpus = self.corpus
        starts = np.searchsorted(corpus.rows, docs)
        ends = np.searchsorted(corpus.rows, docs, side="right")
        lengths = ends - starts
        offsets = np.r_[0, np.cumsum(lengths)[:-1]]
        entries = np.repeat(starts - offsets, lengths)
        entries += np.arange(lengths.sum())
        # Entries come text by text in `docs`' order: rows and their starts need no search.
        rows = np.repeat(np.arange(len(docs)), lengths)
        filled = np.flatnonzero(lengths)
        row_starts = offsets[filled]
        cells, inverse, early_cells = _distinct(
            np.take(self.entry_cells, self.entry_rows[entries], axis=0),
            self._slot,
            EARLY_CANDIDATES,
        )
        rates = np.take(self.cell_rates, cells)
        return _Batch(
            docs,
            rows,
            corpus.values[entries],
            cells,
            early_cells,
            inverse,
            rates,
            row_starts,
            filled,
        )

    def _step(self, batch: _Batch, base: Float32Array, early: bool = False) -> None:
        """One momentum-SGD step of the candidate softmax with the additive margin; `early`,
        pushing only each text's first EARLY_CANDIDATES candidates (the softmax is over all):
        it reads and moves only their cells, the batch's first `early_cells`."""
        n_cells = batch.early_cells if early else len(batch.cells)
        cells = batch.cells[:n_cells]
        pairs = np.take(_as_pairs(self._pairs), cells).view(np.float32).reshape(-1, 2)
        weights = pairs[:, 0].copy()
        logits = base[batch.docs]
        pushed = min(EARLY_CANDIDATES, logits.shape[1]) if early else logits.shape[1]
        # A view of the first columns: its take and ravel copy only those (0.3 ms of 2 ms).
        inverse = batch.inverse[:, :pushed]
        if len(batch.rows):
            contributions = np.take(weights, inverse)
            contributions *= batch.values[:, None]
            logits[batch.filled, :pushed] += np.add.reduceat(
                contributions, batch.row_starts, axis=0
            )
        logits[:, 0] -= self.margin
        logits -= logits.max(axis=1, keepdims=True)
        error = np.exp(logits)
        error /= error.sum(axis=1, keepdims=True)
        error[:, 0] -= 1.0
        error /= len(batch.docs)
        if not len(batch.rows):
            return
        # velocity = MOMENTUM * velocity + gradient on the batch's cells, then the step; a
        # cell several entries share is moved once, by the sum of their gradients.
        # bincount sums in float64 whatever it is given, but casts float32 weights on a
        # slow path (7x the whole count): cast first, same sums.
        shares = np.take(error[:, :pushed], batch.rows, axis=0)
        shares *= batch.values[:, None]
        gradient = np.bincount(
            inverse.ravel(), shares.astype(np.float64).ravel(), minlength=n_cells
        )
        velocity = pairs[:, 1] * np.float32(MOMENTUM)
        velocity += gradient
        pairs[:, 1] = velocity
        weights -= velocity * batch.rates[:n_cells]
        pairs[:, 0] = weights
        _as_pairs(self._pairs)[cells] = _as_pairs(pairs)


def _as_pairs(pairs: Float32Array) -> npt.NDArray[np.complex64]:
    """A C-contiguous (n, 2) float32 array as n complex64 elements (the same memory)."""
    flat: npt.NDArray[np.complex64] = pairs.view(np.complex64).reshape(-1)
    return flat


def _compact_cells(
    corpus: Corpus, chosen: IntArray, n_routes: int
) -> tuple[IntArray, npt.NDArray[np.int32], IntArray]:
    """The cells a step can touch, and each entry's candidate cells among them.

    Found block of terms by block, in one small table reused for every block: a table of
    every term x route (650 MB at 2,000 routes) cost more to have the kernel hand over and
    zero than the marking itself (1.3 s of system time). The entries' cells are held in the
    terms' order, the order they are found in: written front to back, each block's local
    cells first, then renumbered where they are (no second pass over the corpus, no
    entries x candidates temporary: the commonest terms' block has a million entries at
    2,000 x 25).

    Returns:
        The cells as ascending `term * n_routes + route` (terms of `corpus`); per entry in
        the terms' order x candidate, the index of its cell in that array; and each corpus
        entry's row there.
    """
    by_term = np.argsort(corpus.ids, kind="stable")
    bounds = np.searchsorted(corpus.ids[by_term], np.arange(0, corpus.n_terms + 1, TERMS_AT_ONCE))
    bounds = np.r_[bounds, len(by_term)]
    seen = np.zeros(TERMS_AT_ONCE * n_routes, np.bool_)
    table = np.empty(TERMS_AT_ONCE * n_routes, np.int32)
    # Written once, front to back: ordinary pages (`_memory`: 0.5 s less system time).
    entry_cells = zeros_in_small_pages((len(corpus.ids), chosen.shape[1]), np.int32)
    found: list[IntArray] = [np.zeros(0, np.int64)]
    done = 0
    for block, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=False)):
        first = block * TERMS_AT_ONCE
        for start in range(lo, hi, GATHERED_ENTRIES):
            end = min(hi, start + GATHERED_ENTRIES)
            entries = by_term[start:end]
            local = entry_cells[start:end]
            local[:] = (corpus.ids[entries, None] - first) * n_routes + chosen[corpus.rows[entries]]
            seen[local] = True
        cells = np.flatnonzero(seen)
        seen[cells] = False
        table[cells] = np.arange(done, done + len(cells), dtype=np.int32)
        for start in range(lo, hi, GATHERED_ENTRIES):
            local = entry_cells[start : min(hi, start + GATHERED_ENTRIES)]
            local[:] = table[local]
        found.append(cells + first * n_routes)
        done += len(cells)
    rows = np.empty(len(by_term), np.int64)
    rows[by_term] = np.arange(len(by_term))
    return np.concatenate(found), entry_cells, rows


def _distinct(
    cells: npt.NDArray[np.int32], slot: npt.NDArray[np.int32], split: int | None = None
) -> tuple[IntArray, npt.NDArray[np.int32], int]:
    """The distinct values of `cells` (entries x candidates), those its first `split` columns
    hold first, each part ascending; each cell's position among them; and how many come first.

    Ascending, because a step reads and writes the weights and momentum at these cells: in
    order, they are 19 MB arrays read front to back instead of at random (a step at 2,000 x 25
    5.2 -> 3.9 ms, the same sums); the first part is all an early step reads. Found in one
    pass, then only the distinct ones sorted: `slot` (one int per possible value, any content)
    is scribbled on, each value's slot first naming one of its positions (the one whose slot
    names itself stands for it; the later columns are written first, so a value the first
    `split` columns hold is named by one of those), then its rank.
    `np.unique` sorts every cell, not only the distinct ones: several times the cost.
    """
    split = cells.shape[1] if split is None else min(split, cells.shape[1])
    positions = np.arange(cells.size, dtype=np.int32).reshape(cells.shape)
    slot[cells[:, split:]] = positions[:, split:]
    slot[cells[:, :split]] = positions[:, :split]
    named = np.take(slot, cells) == positions
    early = cells[:, :split][named[:, :split]].astype(np.int64)
    late = cells[:, split:][named[:, split:]].astype(np.int64)
    early.sort()
    late.sort()
    slot[early] = np.arange(len(early), dtype=np.int32)
    slot[late] = np.arange(len(early), len(early) + len(late), dtype=np.int32)
    inverse = np.take(slot, cells)
    return np.concatenate((early, late)), inverse, len(early)
