"""The semantic view's logits a word at a time (`_static.Projection`): the same numbers as
the message's static vector times the view's matrix (docs/pack-format.md, Lexical scorer,
step 6), whatever the projection's cache holds, however it is shared between threads."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core.codec import load_pack
from routing_core.router import Router
from routing_core.scorers import _static
from routing_core.scorers.lexical import LexicalScorer

SUITE = Path(__file__).resolve().parents[2] / "conformance"
# Words the table knows, words it cuts into several pieces, and words it does not know.
WORDS = [
    "card", "cancel", "refund", "my", "the", "order", "flight", "tomorrow", "chandelier",
    "unbelievably", "transferring", "zxqvj", "🙂", "ß", "naïve", "北京", "?", "",
]  # fmt: skip


@pytest.fixture(scope="module")
def scorer() -> LexicalScorer:
    router = Router(load_pack((SUITE / "packs" / "synthetic150.json").read_bytes()))
    assert isinstance(router.scorer, LexicalScorer) and router.scorer._semantic is not None
    return router.scorer


def _by_vector(scorer: LexicalScorer, text: str) -> np.ndarray:
    """`v · M + b` from the whole message's static vector, in double precision."""
    matrix, bias = scorer._meaning
    vector = scorer._table.pieces.take(_pieces(scorer, text), axis=0).astype(np.float64)
    summed = vector.sum(axis=0)
    norm = float(np.sqrt(summed @ summed))
    out = summed @ matrix / norm if norm > 0.0 else np.zeros(matrix.shape[1])
    return out + bias.astype(np.float64)


def _pieces(scorer: LexicalScorer, text: str) -> list[int]:
    words = text[: _static.MAX_CHARS].split()
    known = scorer._table._ids_of(set(words))
    return [i for word in words for i in known[word]][: _static.MAX_PIECES]


def _row_width(scorer: LexicalScorer) -> int:
    return 1 + scorer._table.dimensions + len(scorer._meaning[1])


def _fresh(scorer: LexicalScorer) -> _static.Projection:
    matrix, bias = scorer._meaning
    return _static.Projection(scorer._table, matrix, bias)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=30))
def test_a_message_s_view_logits_are_its_vector_times_the_matrix(
    scorer: LexicalScorer, words: list[str]
) -> None:
    text = " ".join(words)
    want = _by_vector(scorer, text)
    projection = _fresh(scorer)
    first = projection.logits(text)  # its words learned
    again = projection.logits(text)  # its words read back
    np.testing.assert_allclose(first, want, rtol=0, atol=1e-9)
    assert first.tobytes() == again.tobytes()


def test_a_message_of_no_known_piece_adds_the_bias_alone(scorer: LexicalScorer) -> None:
    _, bias = scorer._meaning
    for text in ("", "   ", "🙂🙂"):
        assert not _pieces(scorer, text), text
        assert _fresh(scorer).logits(text).tolist() == bias.astype(np.float64).tolist()


def test_pieces_past_the_limit_are_cut_as_the_vector_cuts_them(scorer: LexicalScorer) -> None:
    """512 pieces at most, cut inside the word that passes the limit: such a message takes
    the vector's path, and the words before it are still read back from the cache."""
    text = " ".join(["unbelievably transferring chandelier"] * 90)
    assert len(_pieces(scorer, text)) == _static.MAX_PIECES
    projection = _fresh(scorer)
    projection.logits("unbelievably transferring chandelier")  # its words in the cache
    np.testing.assert_allclose(projection.logits(text), _by_vector(scorer, text), atol=1e-9)


def test_the_cache_grows_and_starts_afresh_without_changing_a_number(
    scorer: LexicalScorer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past PROJECTED_BYTES (here 96 words) the cache starts over; while it grows its rows
    move to a larger array. Every message scores as it did before either happened."""
    monkeypatch.setattr(_static, "PROJECTED_BYTES", 96 * 8 * _row_width(scorer))
    projection = _fresh(scorer)
    texts = [f"card w{i} refund order{i % 7}" for i in range(200)]
    first = [projection.logits(text).tobytes() for text in texts]
    assert len(projection._generation.index) <= 96
    again = [projection.logits(text).tobytes() for text in texts]
    assert first == again
    alone = [_fresh(scorer).logits(text).tobytes() for text in texts]
    assert first == alone


def test_threads_learning_new_words_at_once_get_the_numbers_one_thread_gets(
    scorer: LexicalScorer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Words are added while other threads read (and the cache grows and starts afresh):
    a reader never sees a row that is not there yet, nor another word's row."""
    monkeypatch.setattr(_static, "PROJECTED_BYTES", 256 * 8 * _row_width(scorer))
    texts = [f"cancel word{i} card{i % 13} the order {i}" for i in range(600)]
    want = [_fresh(scorer).logits(text).tobytes() for text in texts]
    projection = _fresh(scorer)
    got: dict[int, list[bytes]] = {}

    def run(offset: int) -> None:
        order = texts[offset:] + texts[:offset]
        got[offset] = [projection.logits(text).tobytes() for text in order]

    threads = [threading.Thread(target=run, args=(k * 150,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for offset, results in got.items():
        assert results == want[offset:] + want[:offset]
