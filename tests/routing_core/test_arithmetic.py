"""A turn's sums do not depend on the order they are added in (docs/pack-format.md, Lexical
scorer, its arithmetic).

Two CPUs' BLAS kernels add a vector-matrix product's terms in different orders; in float32
that moved CLINC150-size scores by up to 8e-6 between an Intel and an AMD machine, past the
conformance suite's 1e-6. The engine sums in double precision, where the float32 products
are exact and any order gives the same float32 result. These tests add the terms of real
packs' turns in reverse, as another kernel or runtime might, and want the very same numbers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from routing_core.codec import load_pack
from routing_core.router import Router
from routing_core.scorers import _static
from routing_core.scorers._weights import rows_dot
from routing_core.scorers.lexical import LexicalScorer

SUITE = Path(__file__).resolve().parents[2] / "conformance"


@pytest.fixture(scope="module")
def scorer() -> LexicalScorer:
    router = Router(load_pack((SUITE / "packs" / "synthetic150.json").read_bytes()))
    assert isinstance(router.scorer, LexicalScorer)
    return router.scorer


@pytest.fixture(scope="module")
def messages() -> list[str]:
    cases = json.loads((SUITE / "cases" / "synthetic150.json").read_text())["cases"]
    return [c["message"] for c in cases if c.get("message")]


def _exact(values: np.ndarray, rows: np.ndarray, dtype: type = np.float32) -> np.ndarray:
    """Each column's sum of products, correctly rounded (`math.fsum`), in `dtype`."""
    products = values.astype(np.float64)[:, None] * rows.astype(np.float64)
    return np.array([math.fsum(column) for column in products.T], dtype)


def test_the_terms_of_a_turn_sum_to_the_exact_sum() -> None:
    """The exact sum is what any order of double-precision additions rounds to in float32;
    float32 sums, in a kernel's order, miss it by an ulp on some cells of long messages."""
    rng = np.random.default_rng(7)
    for size in (2, 5, 12, 25, 40, 60, 120):
        # Term values as a message's TF-IDF vector has them, weights as the pack's float16.
        values = rng.random(size).astype(np.float32)
        values /= np.float32(np.linalg.norm(values))
        matrix = rng.normal(0.0, 1.0, (size + 10, 150)).astype(np.float16).astype(np.float32)
        rows = rng.permutation(size + 10)[:size]
        want = _exact(values, np.take(matrix, rows, axis=0))
        assert rows_dot(values, matrix, rows).tobytes() == want.tobytes(), size
        backward = rows_dot(values[::-1], matrix, rows[::-1])
        assert backward.tobytes() == want.tobytes(), size


def test_a_messages_meaning_vector_is_divided_by_its_exact_norm() -> None:
    table = _static.table(_static.TABLE)
    words = " ".join(f"word{i} route{i % 7} cancel order refund card" for i in range(40))
    for message in ("where is my card", "cancel the order i placed yesterday please", words):
        table.vector(message)  # learns the message's words' pieces
        ids = [i for word in message.split() for i in table._pieces_of[word]]
        summed = np.add.reduce(table.pieces.take(ids[: _static.MAX_PIECES], axis=0), axis=0)
        wide = summed.astype(np.float64)
        want = summed / np.float32(math.sqrt(math.fsum(wide * wide)))
        assert table.vector(message).tobytes() == want.tobytes(), message


def _meaning_exact(scorer: LexicalScorer, message: str) -> np.ndarray:
    """The meaning view's `v · M + b` with every sum correctly rounded (`math.fsum`), the
    message's words taken backwards: the static vector's rows, its norm, the product."""
    table = scorer._table
    table.vector(message)  # learns the message's words' pieces
    ids = [i for word in reversed(message.split()) for i in table._pieces_of[word]]
    rows = table.pieces.take(ids, axis=0).astype(np.float64)
    summed = np.array([math.fsum(column) for column in rows.T])
    norm = math.sqrt(math.fsum(summed * summed))
    matrix, bias = scorer._meaning
    products = summed[:, None] * np.asarray(matrix, np.float64)
    out = np.array([math.fsum(column) for column in products.T])
    return (out / norm if norm > 0.0 else out * 0.0) + bias.astype(np.float64)


def test_a_turns_logits_are_the_same_summed_in_reverse(
    scorer: LexicalScorer, messages: list[str]
) -> None:
    """The whole of step 6 (the terms, then the meaning view), its sums taken backwards and
    correctly rounded: the engine's double-precision sums round to the same float32."""
    matrix = scorer._weights.dense()
    compared = 0
    for message in messages[:300]:
        features = scorer._features(message)
        engine = scorer.logits(message)
        if features is None or engine is None:
            continue
        ours = rows_dot(features.values[::-1], matrix, features.ids[::-1])
        if scorer._bias is not None:
            ours += scorer._bias
        ours += _meaning_exact(scorer, message)
        assert engine.tobytes() == ours.tobytes(), message
        compared += 1
    assert compared > 50
