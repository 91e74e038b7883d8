"""docs/pack-format.md, "Scoring with a stored model", implemented from the text alone, gives
the engine's lexical scores: the specification says what the code does, to float32 rounding.

The one part taken from the engine is what the text points to rather than spells out: the
static table's vector of a message (`scorers/_static.py`, shipped with the engine)."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from routing_core import Pack, Router, dump_pack, load_pack
from routing_core.build import build_pack
from routing_core.scorers import _static
from routing_core.scorers.stored import with_model
from tests.routing_core.test_semantic import _routes as meaning_routes

PACKS = Path(__file__).resolve().parents[1] / "packs"
SPEC = Path(__file__).resolve().parents[2] / "docs" / "pack-format.md"

WORD = regex.compile(r"(?:[\p{L}\p{N}]\p{M}*)+")
UNSPACED = regex.compile(
    r"(?:[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Thai}\p{scx=Lao}]\p{M}*)+"
)
CHARACTER = regex.compile(r"\P{M}\p{M}*")

MESSAGES = [
    "I want a refund",
    "where is my parcel?",
    "why was I charged twice",
    "hi",
    "what",
    "please",
    "",
    "!!!",
    "我想退款",
    "changer mon mot de passe",
    "refunds refunded refunding",
    "the weather tomorrow",
    "play me a song about the rain",
    "is my invoice paid yet",
    "lamp lamp lamp",
    "a guitar and a piano",
    "the hurricane and the candle",
    # The out-of-scope class leads on the whole, and is judged again on the content words.
    "what is it about my refund",
    "tell me about the capital of my invoice",
    "who won the match yesterday",
    # No known word nor pair: read on the fragments of their spelling alone.
    "refundz parcelz",
    "blorf snarg",
    "xqzrefun wthr",
]


def _stop_words() -> set[str]:
    """The stop words as the specification lists them (step 4)."""
    text = SPEC.read_text(encoding="utf-8")
    listed = text.split("The stop words are: `", 1)[1].split("`", 1)[0]
    return set(listed.split())


def _words(text: str) -> list[str]:
    out: list[str] = []
    for word in WORD.findall(text[:4096].lower()):
        last = 0
        for run in UNSPACED.finditer(word):
            if run.start() > last:
                out.append(word[last : run.start()])
            chars = CHARACTER.findall(run.group())
            out += (
                chars
                if len(chars) == 1
                else [a + b for a, b in zip(chars, chars[1:], strict=False)]
            )
            last = run.end()
        if last < len(word):
            out.append(word[last:])
    return [w[:999] for w in out]


def _stem(w: str) -> str:
    if len(w) <= 3 or not w.isalpha():
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("sses"):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    if w.endswith("ing") and len(w) > 5:
        return w[:-3]
    if w.endswith("ed") and len(w) > 4 and not w.endswith("eed"):
        return w[:-2]
    return w


def _array(text: str, dtype: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=dtype).astype(np.float64)


def _counts(message: str, terms: dict[str, int]) -> tuple[dict[str, int], int]:
    """Step 3: the found terms' counts, and how many character n-grams the words make."""
    counts: dict[str, int] = {}
    previous = "^"
    made = 0
    for word in _words(message):
        stem, marked = _stem(word), f"<{word}>"
        grams = ["#" + marked[i : i + n] for n in (3, 4, 5) for i in range(len(marked) - n + 1)]
        made += len(grams)
        for term in [stem, f"{previous} {stem}", *grams]:
            if term in terms:
                counts[term] = counts.get(term, 0) + 1
        previous = stem
    return counts, made


def _vector(
    counts: dict[str, int], made: int, idf: np.ndarray, terms: dict[str, int]
) -> dict[str, float]:
    """Step 5, with its rule for a message read on its spelling alone."""
    x = {t: (1 + math.log(c)) * idf[terms[t]] for t, c in counts.items()}
    for chars, target in ((False, 2.0), (True, 1.0)):
        block = [t for t in x if t.startswith("#") == chars]
        norm = math.sqrt(sum(x[t] ** 2 for t in block))
        for t in block:
            x[t] *= target / norm if norm else 0.0
    total = math.sqrt(sum(v * v for v in x.values()))
    if all(t.startswith("#") for t in counts):
        total *= made / sum(counts.values())
    return {t: v / total for t, v in x.items()}


def spec_scores(model: dict[str, Any], message: str, n_routes: int) -> list[float]:
    """Steps 1-7 of the specification's lexical scoring."""
    logit = _logits(model, message)
    if logit is None:
        return [0.0] * n_routes
    z = logit / model["temperature"]
    p = np.exp(z - z.max())
    p /= p.sum()
    if model["routes"] > n_routes and int(p.argmax()) >= n_routes:
        words = _words(message)
        content = [w for w in words if w not in _stop_words()]
        again = _logits(model, " ".join(content)) if 0 < len(content) < len(words) else None
        lead = -math.inf if again is None else (again[:n_routes].max() - again[n_routes:].max())
        if not lead / model["temperature"] >= 2:
            return [0.0] * n_routes
    return [float(v) for v in p[:n_routes]]


def _logits(model: dict[str, Any], message: str) -> np.ndarray | None:
    """Steps 1-6: the message's logits over every column, or None with nothing to score."""
    terms = {t: i for i, t in enumerate(model["terms"])}
    counts, made = _counts(message, terms)
    stop = _stop_words()
    if not counts or (not model["calibrated"] and all(w in stop for w in _words(message))):
        return None
    columns = model["routes"]
    weights = np.zeros(len(terms) * columns)
    cells = np.frombuffer(base64.b64decode(model["cells"]), dtype="<u4").astype(np.int64)
    weights[cells] = _array(model["weights"], "<f2")
    weights = weights.reshape(len(terms), columns)
    vector = _vector(counts, made, _array(model["idf"], "<f2"), terms)
    logit = sum(v * weights[terms[t]] for t, v in vector.items())
    if model.get("bias"):
        logit = logit + _array(model["bias"], "<f2")
    view = model.get("semantic")
    if view:
        matrix = _array(view["matrix"], "<f2").reshape(-1, columns)
        meaning = _static.table(view["table"]).vector(message).astype(np.float64)
        logit = logit + meaning @ matrix + _array(view["bias"], "<f2")
    return np.asarray(logit, np.float64)


@pytest.fixture(scope="module")
def calibrated() -> Pack:
    out_of_scope = ["what is the capital of france", "tell me a joke", "who won the match"]
    # test_semantic's routes: built so that only their meaning places the held-out texts.
    return build_pack(meaning_routes(), slug="spec", out_of_scope=out_of_scope)


def _model(pack: Pack) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(dump_pack(pack))
    return dict(document["scorer"]["model"])


def _assert_same(pack: Pack) -> None:
    router = Router(load_pack(dump_pack(pack)))
    names = router.pack.route_names
    model = _model(pack)
    for message in MESSAGES + [e for r in pack.routes for e in r.examples[:3]]:
        engine = router.scorer.score(message, names)
        ours = spec_scores(model, message, len(names))
        assert ours == pytest.approx(engine, abs=1e-6), message


def test_a_small_uncalibrated_model_scores_as_specified() -> None:
    pack = with_model(load_pack(PACKS / "support.json"))
    assert not _model(pack)["calibrated"]
    _assert_same(pack)


def test_a_calibrated_model_with_meaning_and_out_of_scope_scores_as_specified(
    calibrated: Pack,
) -> None:
    model = _model(calibrated)
    assert model["calibrated"] and model["semantic"] and model["bias"]
    assert model["routes"] == len(calibrated.routes) + 1  # the out-of-scope column
    _assert_same(calibrated)


# Pieces of the calibrated pack's words and letters no route uses: a message made of them is
# often read on its spelling alone (step 5), with any share of its n-grams known.
_PIECES = st.sampled_from(
    ["ref", "und", "parc", "inv", "oice", "wea", "ther", "qz", "xk", "vv", "z"]
)
_MADE_UP = st.lists(
    st.lists(_PIECES, min_size=1, max_size=4).map("".join), min_size=1, max_size=4
).map(" ".join)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(message=_MADE_UP)
def test_messages_made_of_pieces_of_words_score_as_specified(
    calibrated: Pack, message: str
) -> None:
    router = Router(calibrated)
    names = router.pack.route_names
    engine = router.scorer.score(message, names)
    assert spec_scores(_model(calibrated), message, len(names)) == pytest.approx(engine, abs=1e-6)
