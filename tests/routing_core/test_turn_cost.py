"""The shortcuts that make a turn cheaper give exactly what the long way gives.

A turn's words are tokenised once and shared (`turn_words`); a turn after the first pools
with one reduction each (`pooled_turn`); a message without repeated terms is weighted
without counting them (`_Vocabulary.vector`). Each is checked against the plain way it
replaced, value for value, so a shortcut that drifted would move a decision.
"""

from __future__ import annotations

import dataclasses
import math
import re
import threading
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core import Router
from routing_core._records import builder, draft_class
from routing_core.conversation import (
    Prior,
    carries_no_topic,
    is_distribution,
    is_new_topic,
    no_topic_words,
    pool,
    pooled_turn,
)
from routing_core.decision import Decision, Evidence, RegexReport, TierRecord
from routing_core.policy import Ranking, Verdict, _rank
from routing_core.scorers.base import RouteText, Scored, Term
from routing_core.scorers.lexical import WORD_BLOCK_WEIGHT, LexicalScorer
from routing_core.text import turn_words, words
from routing_core.triage import TriageVerdict

TEXTS = [
    "will i get getting my new card anytime soon",
    "the the the the",
    "yes please",
    "at 7pm on the 2nd",
    "ça va très bien merci",
    "",
    "Book a table, then BOOK a taxi",
]


@pytest.mark.parametrize("text", TEXTS)
def test_turn_words_are_the_words(text: str) -> None:
    assert turn_words(text) == tuple(words(text))
    assert turn_words(text) == tuple(words(text))  # remembered: the same answer again


def test_turn_words_follow_the_text_they_are_asked_about() -> None:
    assert turn_words("cancel my card") == ("cancel", "my", "card")
    assert turn_words("yes please") == ("yes", "please")
    assert carries_no_topic("yes please")
    assert not carries_no_topic("cancel my card")


def test_turn_words_are_per_thread() -> None:
    seen: list[tuple[str, ...]] = []
    turn_words("a message on this thread")
    worker = threading.Thread(target=lambda: seen.append(turn_words("another one")))
    worker.start()
    worker.join()
    assert seen == [("another", "one")]
    assert turn_words("a message on this thread") == ("a", "message", "on", "this", "thread")


def _slow_no_topic(text: str) -> bool:
    """The check as first written: every word quiet or a number, in order."""
    import re

    number = re.compile(r"\d+(?:st|nd|rd|th|am|pm|h|h\d+|er|e|º|ª)?")
    quiet = no_topic_words()
    return all(w in quiet or number.fullmatch(w) for w in words(text))


# Words of a turn with no topic, and others: numbers in other scripts ("٣", "７pm" are decimal
# digits, "²" and "½" are not), a topic word, an emoji.
_NO_TOPIC_PARTS = "yes ok 7pm 2nd the hotel 19h30 x7 😀 ٣ ² ７pm ½ 7".split()


@given(st.lists(st.sampled_from(_NO_TOPIC_PARTS)))
@settings(max_examples=200, deadline=None)
def test_no_topic_check_is_the_word_by_word_one(parts: list[str]) -> None:
    text = " ".join(parts)
    assert carries_no_topic(text) == _slow_no_topic(text)


def _slow_pooled(scores: np.ndarray, prior: Prior) -> tuple[np.ndarray, int] | None:
    """The three steps as the policy first called them."""
    if len(prior) != len(scores) or not is_distribution(scores) or is_new_topic(scores):
        return None
    return pool(scores, prior), int(scores.argmax())


_SCORE = st.one_of(
    st.floats(0.0, 1.0), st.just(0.0), st.just(-0.1), st.just(math.nan), st.just(math.inf)
)


@given(st.lists(_SCORE, min_size=0, max_size=8), st.integers(0, 2**32 - 1))
@settings(max_examples=300, deadline=None)
def test_pooled_turn_is_check_then_pool(values: list[float], seed: int) -> None:
    scores = np.array(values, np.float64)
    if len(scores) and math.isfinite(scores.sum()) and scores.sum() > 0 and min(values) >= 0:
        scores = scores / scores.sum() * np.random.default_rng(seed).uniform(0.3, 1.0)
    prior = Prior.of(np.random.default_rng(seed).dirichlet(np.ones(max(1, len(scores)))))
    fast, slow = pooled_turn(scores, prior), _slow_pooled(scores, prior)
    if slow is None or len(scores) == 0:
        assert fast is None
        return
    assert fast is not None
    assert fast[1] == slow[1]
    assert fast[0].tobytes() == slow[0].tobytes()


def _counted_vector(vocabulary, resolved):  # type: ignore[no-untyped-def]
    """The message's vector by counting every term, as before the no-repeat shortcut."""
    occurrences: list[int] = []
    for _, stem_id, grams, pair_id in resolved:
        occurrences += [stem_id] if stem_id >= 0 else []
        occurrences += [pair_id] if pair_id >= 0 else []
        occurrences.extend(grams)
    counts = Counter(occurrences)
    ids = np.fromiter(counts.keys(), np.int64, len(counts))
    tf = np.fromiter(counts.values(), np.float32, len(counts))
    values = (1.0 + np.log(tf)) * vocabulary.idf[ids]
    is_char = vocabulary.is_char[ids]
    word_sq, char_sq = np.bincount(is_char, values * values, minlength=2).tolist()
    word_norm, char_norm = math.sqrt(word_sq), math.sqrt(char_sq)
    total = math.hypot(WORD_BLOCK_WEIGHT if word_norm else 0.0, 1.0 if char_norm else 0.0)
    scales = np.array(
        [WORD_BLOCK_WEIGHT / (word_norm or 1.0) / total, 1.0 / (char_norm or 1.0) / total],
        np.float32,
    )
    return ids, (values * np.take(scales, is_char)).astype(np.float32)


def test_a_vector_without_repeats_is_the_counted_one() -> None:
    routes = [
        RouteText("card_status", "where a card is", ("when will my new card arrive",)),
        RouteText("book_table", "book a table", ("book a table for two tonight",)),
    ]
    vocabulary = LexicalScorer.build(routes)._vocabulary
    for text in [*TEXTS, "new card", "book book book a table", "my card my card"]:
        resolved = vocabulary.resolve(text)[0]
        ids, values = vocabulary.vector(text)
        if not len(ids):
            continue
        want_ids, want_values = _counted_vector(vocabulary, resolved)
        assert ids.tolist() == want_ids.tolist(), text
        assert values.dtype == np.float32
        assert values.tobytes() == want_values.tobytes(), text


_ROUTES = [
    RouteText("card_status", "where a card is", ("when will my new card arrive",)),
    RouteText("book_table", "book a table", ("book a table for two tonight", "a table, a booking")),
]
_VOCABULARY = LexicalScorer.build(_ROUTES)._vocabulary
_WORDS = ["book", "books", "a", "table", "card", "my", "new", "ta", "boo", "tonight", "zzz", "two"]


@given(st.lists(st.sampled_from(_WORDS), max_size=12))
@settings(max_examples=300, deadline=None)
def test_a_vector_counted_in_one_pass_is_the_counted_one(parts: list[str]) -> None:
    """Whether its terms repeat or not (one count tells), a message's vector is the one
    `Counter` gives, id for id and bit for bit, from the term ids gathered while resolving
    its words (`read`, what a turn does)."""
    text = " ".join(parts)
    resolved, _, occurrences = _VOCABULARY.read(text)
    ids, values = _VOCABULARY.weigh(occurrences)
    vector_ids, vector_values = _VOCABULARY.vector(text)
    assert vector_ids.tolist() == ids.tolist()
    assert vector_values.tobytes() == values.tobytes()
    if not len(ids):
        assert not any(s >= 0 or p >= 0 or g for _, s, g, p in resolved)
        return
    want_ids, want_values = _counted_vector(_VOCABULARY, resolved)
    assert ids.tolist() == want_ids.tolist()
    assert values.dtype == np.float32
    assert values.tobytes() == want_values.tobytes()


_RAW = st.one_of(
    st.sampled_from([0.0, -0.0, 0.5, 0.25, 1.0, math.nan, math.inf, -math.inf]),
    st.floats(-3.0, 3.0),
)


def _same_rows(a: Ranking, b: Ranking) -> bool:
    """Row for row, NaN scores equal to NaN (a ranking keeps them raw)."""
    return len(a) == len(b) and all(
        x.route == y.route
        and np.array([x.score, x.relevance]).tobytes() == np.array([y.score, y.relevance]).tobytes()
        for x, y in zip(a, b, strict=True)
    )


@given(st.lists(_RAW, max_size=40), st.sampled_from([None, 0.0, 0.3, -1.0]))
@settings(max_examples=400, deadline=None)
def test_alive_routes_sorted_small_are_the_stable_argsort(
    values: list[float], floor: float | None
) -> None:
    """Few alive routes are sorted in Python (`_best_first`), many by numpy: both give the
    order the stable argsort gave, ties (0.0 and -0.0 among them) in declaration order."""
    raw = np.array(values, np.float64)
    names = tuple(f"r{i}" for i in range(len(values)))
    ranking, alive = _rank(names, raw, 1.0, floor)
    finite = np.isfinite(raw)
    # All finite or not, the ranking is the one of the scores with non-finite ones as -inf.
    plain = Ranking(names, raw, None, rankable=np.where(finite, raw, -np.inf), temperature=1.0)
    assert _same_rows(ranking, plain)
    living = finite if floor is None else finite & (raw > floor)
    want = np.flatnonzero(living)
    want = want[np.argsort(-raw[want], kind="stable")].tolist()
    assert alive == want


@given(
    st.one_of(
        st.text(),
        st.lists(
            st.sampled_from(
                [
                    "Book",
                    "a",
                    "ÉTÉ",
                    "x_y",
                    "7pm",
                    "İ",
                    "١٢",
                    "½",
                    "\u00a0",
                    " ",
                    "\t",
                    "what's",
                    "ß",
                ]
            )
        ).map("".join),
    )
)
@settings(max_examples=500, deadline=None)
def test_words_split_at_spaces_are_the_regex_words(text: str) -> None:
    """A message of alphanumeric parts between spaces is split in C: the same words as the
    word regex finds, whatever the script, digits or spaces."""
    assert words(text) == re.findall(r"[^\W_]+", text.lower())


def _tiny_router() -> Router:
    return Router(
        {
            "profile": {"slug": "t", "name": "t"},
            "routes": [
                {"name": "card_status", "description": "where a card is",
                 "examples": ["when will my new card arrive", "is my card on its way"]},
                {"name": "book_table", "description": "book a table",
                 "examples": ["book a table for two tonight", "reserve a table"]},
            ],
            "rules": [{"route": "book_table", "match": {"keywords": ["reserve"]}}],
        }
    )  # fmt: skip


@pytest.mark.parametrize(
    ("message", "incumbent"),
    [("when will my card arrive", None), ("reserve a table", None), ("ok", "card_status"),
     ("book a table", "card_status"), ("", None), ("zzz", "nope")],
)  # fmt: skip
def test_a_sealed_decision_is_the_constructed_one(message: str, incumbent: str | None) -> None:
    """The router fills its Decision in as a draft and seals it (`routing_core._records`):
    the result is a Decision like any other, every field set, equal to the one the
    constructor makes from the same values, and read-only."""
    decision = _tiny_router().route(message, incumbent)
    assert type(decision) is Decision
    values = {f.name: getattr(decision, f.name) for f in dataclasses.fields(Decision)}
    assert decision == Decision(**values)
    assert repr(decision) == repr(Decision(**values))
    with pytest.raises(dataclasses.FrozenInstanceError):
        decision.route = "other"  # type: ignore[misc]
    assert dataclasses.replace(decision, route="x").route == "x"
    assert decision.to_event()["route"] == decision.route


def test_a_draft_has_its_records_slots_in_order() -> None:
    assert draft_class(Decision).__slots__ == tuple(f.name for f in dataclasses.fields(Decision))
    assert draft_class(Decision) is draft_class(Decision)


@pytest.mark.parametrize("record", [Verdict, TierRecord, TriageVerdict, RegexReport])
def test_a_built_record_is_the_constructed_one(record: type) -> None:
    """`builder(cls)(*values)`, the hot paths' way to make these records, gives what the
    constructor gives: the same class, equal, the same repr and hash, read-only."""
    values = [f"v{i}" if i % 2 else (i,) for i in range(len(dataclasses.fields(record)))]
    built, constructed = builder(record)(*values), record(*values)
    assert type(built) is record
    assert built == constructed
    assert repr(built) == repr(constructed)
    assert hash(built) == hash(constructed)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(built, dataclasses.fields(record)[0].name, "x")


def test_a_builder_refuses_a_record_whose_constructor_does_more() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        value: int

        def __post_init__(self) -> None:
            assert self.value >= 0

    with pytest.raises(ValueError, match="does more"):
        builder(Checked)


def test_evidence_filled_in_as_a_draft_is_evidence() -> None:
    class Kept(Evidence):
        __slots__ = ("extra",)

    made = Evidence("rule", "r", 1, "keywords", "t", "k", (0, 1), reason="why")
    assert type(made) is Evidence
    assert made == Kept("rule", "r", 1, "keywords", "t", "k", (0, 1), reason="why")
    assert type(Kept("rule", "r")) is Kept
    lazy = Evidence("scorer", "r", explain=lambda: [Term("card", 0.5)])
    assert lazy.terms == (Term("card", 0.5),)
    with pytest.raises(AttributeError, match="read-only"):
        made.route = "other"  # type: ignore[misc]


def test_metered_scores_are_scored_with_the_array() -> None:
    """The lexical scorer hands its array on through a builder (`Scored(array=...)`)."""
    scorer = LexicalScorer.build(_ROUTES)
    metered = scorer.score_metered("book a table", ("card_status", "book_table"))
    assert type(metered) is Scored
    assert metered.array is not None
    plain = Scored(array=metered.array)
    assert (metered.scores, metered.usage, metered.note) == (
        plain.scores,
        plain.usage,
        plain.note,
    )
    assert metered == plain
    with pytest.raises(AttributeError, match="read-only"):
        metered.note = "x"  # type: ignore[misc]
