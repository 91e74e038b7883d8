"""The default lexical scorer: routing by words, confidences in [0, 1], never raising."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core.scorers import _terms
from routing_core.scorers.base import RouteText, Scorer
from routing_core.scorers.lexical import OUT_OF_SCOPE, LexicalScorer, _route_texts

# How the profile's own texts are learned, without the built-in background (conftest).
pytestmark = pytest.mark.usefixtures("without_background")

ROUTES = (
    RouteText(
        "billing",
        "invoices, charges and payment methods",
        ("why was I charged twice", "download my invoice", "update my credit card"),
        ("invoice", "refund"),
    ),
    RouteText(
        "orders",
        "questions about an existing order and its delivery",
        ("where is my order", "my parcel has not arrived", "track my package"),
    ),
    RouteText(
        "human",
        "the customer is frustrated or asks for a person",
        ("let me talk to someone", "I want a real person", "this bot is useless"),
    ),
    RouteText("weather", "", ("will it rain tomorrow", "what is the forecast for paris")),
)
NAMES = [route.name for route in ROUTES]


@pytest.fixture(scope="module")
def scorer() -> LexicalScorer:
    return LexicalScorer.build(ROUTES)


def top(scorer: LexicalScorer, message: str) -> str:
    scores = scorer.score(message, NAMES)
    return NAMES[max(range(len(NAMES)), key=scores.__getitem__)]


def test_it_satisfies_the_scorer_protocol(scorer: LexicalScorer) -> None:
    assert isinstance(scorer, Scorer)
    assert scorer.info.name == "lexical"
    assert scorer.info.categorical is False
    assert scorer.info.floor == 0.0
    assert scorer.info.temperature > 0


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("download my invoice", "billing"),
        ("where is my order", "orders"),
        ("let me talk to someone", "human"),
        ("will it rain tomorrow", "weather"),
    ],
)
def test_an_exact_example_routes_to_its_route(
    scorer: LexicalScorer, message: str, expected: str
) -> None:
    assert top(scorer, message) == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("I was charged two times on my card", "billing"),
        ("can I get a refund please", "billing"),
        ("my package still has not arrived", "orders"),
        ("tracking the orders I placed", "orders"),
        ("I want to talk to a real human person", "human"),
        ("rain forecast for tomorrow in Paris?", "weather"),
    ],
)
def test_a_paraphrase_with_shared_words_routes_right(
    scorer: LexicalScorer, message: str, expected: str
) -> None:
    assert top(scorer, message) == expected


def test_a_clear_message_is_decisive_under_the_default_margin(scorer: LexicalScorer) -> None:
    scores = sorted(scorer.score("download my invoice", NAMES), reverse=True)
    # The policy calls a turn decisive when tanh((top - second) / 2) >= 0.15.
    assert math.tanh((scores[0] - scores[1]) / 2) >= 0.15


@pytest.mark.parametrize(
    "message", ["", "   \n\t", "the and of", "What is it?", "!!! ??? ...", "I want to know"]
)
def test_a_small_pack_scores_a_message_without_content_words_all_zero(
    scorer: LexicalScorer, message: str
) -> None:
    assert scorer.score(message, NAMES) == [0.0] * len(NAMES)


def test_a_message_of_unknown_words_scores_all_zero(scorer: LexicalScorer) -> None:
    assert scorer.score("zzqx", NAMES) == [0.0] * len(NAMES)


def test_scores_are_probabilities_over_all_routes(scorer: LexicalScorer) -> None:
    scores = scorer.score("refund my order", NAMES)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert sum(scores) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("candidates", [["billing", "nope"], ["Billing"], [""]])
def test_an_unknown_candidate_raises(scorer: LexicalScorer, candidates: list[str]) -> None:
    with pytest.raises(KeyError):
        scorer.score("download my invoice", candidates)


def test_explain_refuses_an_unknown_route(scorer: LexicalScorer) -> None:
    with pytest.raises(KeyError):
        scorer.explain("download my invoice", "nope")


@pytest.mark.parametrize(
    ("message", "route", "word"),
    [
        ("please download the invoice", "billing", "invoice"),
        ("where is my parcel", "orders", "parcel"),
        ("talk to a person now", "human", "person"),
    ],
)
def test_explain_names_a_shared_word(
    scorer: LexicalScorer, message: str, route: str, word: str
) -> None:
    terms = scorer.explain(message, route)
    assert word in [t.term for t in terms]
    assert all(t.weight > 0 for t in terms)
    assert [t.weight for t in terms] == sorted((t.weight for t in terms), reverse=True)


def test_explain_respects_the_limit_and_is_empty_without_content(
    scorer: LexicalScorer,
) -> None:
    assert len(scorer.explain("refund my invoice for the credit card charge", "billing", 2)) <= 2
    assert scorer.explain("the and of", "billing") == []
    assert scorer.explain("invoice", "billing", limit=0) == []


def test_explain_does_not_credit_words_of_another_route(scorer: LexicalScorer) -> None:
    terms = scorer.explain("download my invoice", "weather")
    assert "invoice" not in [t.term for t in terms]


def test_two_builds_give_identical_scores() -> None:
    first, second = LexicalScorer.build(ROUTES), LexicalScorer.build(ROUTES)
    for message in ("refund my order", "rain in paris", "talk to someone about my invoice"):
        assert first.score(message, NAMES) == second.score(message, NAMES)


def test_permuting_candidates_permutes_scores(scorer: LexicalScorer) -> None:
    message = "my invoice for the order that has not arrived"
    by_name = dict(zip(NAMES, scorer.score(message, NAMES), strict=True))
    shuffled = ["weather", "orders", "billing", "human"]
    assert scorer.score(message, shuffled) == [by_name[n] for n in shuffled]
    assert scorer.score(message, ["orders"]) == [by_name["orders"]]
    assert scorer.score(message, []) == []


def test_keywords_and_description_count_as_route_text() -> None:
    routes = (
        RouteText("r1", "", ("hello there",), ("zebra",)),
        RouteText("r2", "giraffes and their necks", ("hello there",)),
    )
    scorer = LexicalScorer.build(routes)
    assert top_of(scorer, "zebra", ["r1", "r2"]) == "r1"
    assert top_of(scorer, "a giraffe", ["r1", "r2"]) == "r2"


def test_the_out_of_scope_class_gets_no_name_text() -> None:
    # The class the out-of-scope examples form is named "" so that no route can collide
    # with it; a blank name must stay out of its texts (it would be a text of no words).
    assert OUT_OF_SCOPE == ""
    assert list(_route_texts(RouteText(OUT_OF_SCOPE, "", ("what is the capital of france",)))) == [
        "what is the capital of france"
    ]
    assert list(_route_texts(RouteText("gift_cards", "", ("my card",)))) == [
        "gift cards",
        "my card",
    ]


def test_a_routes_name_counts_as_route_text() -> None:
    routes = (
        RouteText("refund_request", "", ("hello there",)),
        RouteText("delivery", "", ("hello there",)),
    )
    scorer = LexicalScorer.build(routes)
    assert top_of(scorer, "i want a refund", ["refund_request", "delivery"]) == "refund_request"
    assert top_of(scorer, "my requests", ["refund_request", "delivery"]) == "refund_request"
    assert top_of(scorer, "where is the delivery", ["refund_request", "delivery"]) == "delivery"


def top_of(scorer: LexicalScorer, message: str, names: list[str]) -> str:
    scores = scorer.score(message, names)
    return names[max(range(len(names)), key=scores.__getitem__)]


@pytest.mark.parametrize(
    "routes",
    [(), (RouteText("a"), RouteText("a"))],
    ids=["no routes", "duplicate names"],
)
def test_build_refuses_no_routes_and_duplicate_names(routes: tuple[RouteText, ...]) -> None:
    with pytest.raises(ValueError):
        LexicalScorer.build(routes)


def test_a_route_without_any_text_builds_and_scores() -> None:
    scorer = LexicalScorer.build((RouteText("empty"), RouteText("full", "", ("book a table",))))
    scores = scorer.score("book a table", ["empty", "full"])
    assert scores[1] > scores[0] >= 0.0


@pytest.mark.parametrize(
    ("word", "stemmed"),
    [
        ("refunds", "refund"),
        ("charges", "charge"),
        ("deliveries", "delivery"),
        ("booking", "book"),
        ("cancelled", "cancell"),
        ("address", "address"),
        ("status", "status"),
        ("bus", "bus"),
        ("need", "need"),
        ("42s", "42s"),
    ],
)
def test_stemming_is_light(word: str, stemmed: str) -> None:
    assert _terms.stem(word) == stemmed


@pytest.mark.parametrize(
    "message",
    [
        "x" * 1_000_000,
        "invoice " * 200_000,
        "\x00\x01\xff\ufffe",
        "\ud800 lone surrogate \udfff invoice",
        "𝔦𝔫𝔳𝔬𝔦𝔠𝔢 😀 \U0010ffff",
        "Rechnung herunterladen, straße, 請求書, счёт",
        bytes(range(256)).decode("latin-1"),
    ],
    ids=["1MB word", "long text", "control", "surrogates", "astral", "scripts", "bytes"],
)
def test_it_never_raises_on_hostile_input(scorer: LexicalScorer, message: str) -> None:
    scores = scorer.score(message, NAMES)
    assert len(scores) == len(NAMES)
    assert all(math.isfinite(s) and 0.0 <= s <= 1.0 for s in scores)
    scorer.explain(message, "billing")


@settings(max_examples=200, deadline=None)
@given(message=st.text(), candidates=st.permutations(NAMES))
def test_score_never_raises_and_returns_one_probability_per_candidate(
    scorer: LexicalScorer, message: str, candidates: list[str]
) -> None:
    scores = scorer.score(message, candidates)
    assert len(scores) == len(candidates)
    assert all(isinstance(s, float) and math.isfinite(s) and 0.0 <= s <= 1.0 for s in scores)
    assert sum(scores) == pytest.approx(1.0, abs=1e-4) or sum(scores) == 0.0


def test_explained_pairs_read_as_the_person_typed_them():
    scorer = LexicalScorer.build(
        [
            RouteText("billing", examples=("I was charged twice", "charged twice for one order")),
            RouteText("shipping", examples=("where is my parcel", "parcel not delivered")),
        ]
    )
    terms = [t.term for t in scorer.explain("why was I charged twice", "billing", limit=10)]
    assert "charged twice" in terms
    assert not any("charg " in t for t in terms)


# -- the fast path against the plain definition ---------------------------------------------------
# Scoring resolves a message's terms word by word through a cache of term ids; these tests
# spell out what that must equal: count the term strings, keep the known ones in first-seen
# order, weight them; credit each known term once, to the first word (or pair) it came from.

WORDS = ["invoice", "invoices", "charged", "twice", "my", "the", "parcel", "banana", "zzq", "rain"]


def _plain_terms(message: str) -> tuple[list[str], list[str]]:
    """Every term of the message with the surface word or pair it came from, in order."""
    terms: list[str] = []
    sources: list[str] = []
    previous, previous_word = "^", ""
    for word in _terms.message_words(message):
        stemmed, grams = _terms.word_terms(word)
        pair = word if previous == "^" else f"{previous_word} {word}"
        terms += [stemmed, f"{previous} {stemmed}", *grams]
        sources += [word, pair, *([word] * len(grams))]
        previous, previous_word = stemmed, word
    return terms, sources


def _plain_explanation(scorer: LexicalScorer, message: str, route: str) -> dict[str, float]:
    vocabulary = scorer._vocabulary
    features = scorer._features(message)
    assert features is not None
    column = NAMES.index(route)
    weight = dict(
        zip(
            features.ids.tolist(),
            features.values * scorer._weights.dense()[:, column][features.ids],
            strict=True,
        )
    )
    credited: dict[str, float] = {}
    for term, source in zip(*_plain_terms(message), strict=True):
        term_id = vocabulary.ids.get(term)
        if term_id is not None and term_id in weight:
            credited[source] = credited.get(source, 0.0) + float(weight.pop(term_id))
    return credited


@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), max_size=12))
def test_a_messages_vector_is_its_counted_known_terms_in_first_seen_order(
    scorer: LexicalScorer, words: list[str]
) -> None:
    message = " ".join(words)
    vocabulary = scorer._vocabulary
    terms, _ = _plain_terms(message)
    known = [vocabulary.ids[t] for t in terms if t in vocabulary.ids]
    first_seen = list(dict.fromkeys(known))
    features = scorer._features(message)
    if features is None:
        assert not known or not any(_terms.is_content(w) for w in words)
        return
    assert features.ids.tolist() == first_seen
    counts = np.array([known.count(i) for i in first_seen], np.float32)
    raw = (1.0 + np.log(counts)) * vocabulary.idf[first_seen]
    chars = vocabulary.is_char[first_seen]
    # Each block (words weigh 2, character n-grams 1) normalised, then the whole row.
    blocks = raw.copy()
    for block, weight in ((~chars, 2.0), (chars, 1.0)):
        if block.any():
            blocks[block] *= weight / np.linalg.norm(raw[block])
    assert features.values == pytest.approx(blocks / np.linalg.norm(blocks), abs=1e-5)


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), route=st.sampled_from(NAMES)
)
def test_each_term_is_credited_once_to_the_first_word_it_came_from(
    scorer: LexicalScorer, words: list[str], route: str
) -> None:
    message = " ".join(words)
    if scorer._features(message) is None:
        assert scorer.explain(message, route) == []
        return
    plain = _plain_explanation(scorer, message, route)
    expected = sorted(
        ((t, w) for t, w in plain.items() if w > 0.0 and _terms.is_content(t)),
        key=lambda item: (-item[1], item[0]),
    )
    found = scorer.explain(message, route, limit=len(plain) + 1)
    assert [t.term for t in found] == [t for t, _ in expected]
    assert [t.weight for t in found] == pytest.approx([w for _, w in expected], abs=1e-5)


def test_the_word_cache_stays_bounded(scorer: LexicalScorer, monkeypatch) -> None:
    from routing_core.scorers import lexical

    monkeypatch.setattr(lexical, "WORD_CACHE", 50)
    for n in range(500):
        scorer.score(f"invoice word{n}", NAMES)
    assert len(scorer._vocabulary.words) <= 50
    assert top(scorer, "download my invoice") == "billing"


@settings(max_examples=80, deadline=None)
@given(numbers=st.lists(st.integers(0, 30), max_size=200), spare=st.integers(0, 5))
def test_first_seen_numbers_are_the_distinct_ones_in_the_order_they_appear(
    numbers: list[int], spare: int
) -> None:
    """What the corpus numbers its terms by: sorting them with their first positions."""
    from routing_core.scorers.lexical import _first_seen

    numbered = np.asarray(numbers, np.int32)
    terms, first = np.unique(numbered, return_index=True)
    expected = terms[np.argsort(first, kind="stable")]
    got = _first_seen(numbered, 31 + spare)
    np.testing.assert_array_equal(got, expected)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_rows=st.integers(1, 12), n_entries=st.integers(0, 80))
def test_normalising_both_blocks_at_once_is_normalising_each_block_apart(
    seed: int, n_rows: int, n_entries: int
) -> None:
    """The word and character blocks normalised apart (the plain definition), to the bit."""
    from routing_core.scorers import lexical

    rng = np.random.default_rng(seed)
    rows = np.sort(rng.integers(0, n_rows, n_entries))
    values = rng.random(n_entries).astype(np.float32) * 3.0
    is_char = rng.random(n_entries) < 0.6
    expected = values.astype(np.float32, copy=True)
    for mask, weight in ((~is_char, lexical.WORD_BLOCK_WEIGHT), (is_char, 1.0)):
        norms = lexical._row_norms(expected[mask], rows[mask], n_rows)
        expected[mask] *= weight / norms[rows[mask]]
    expected = expected / lexical._row_norms(expected, rows, n_rows)[rows]
    got = lexical._normalise(values, rows, is_char, n_rows)
    np.testing.assert_array_equal(got, expected)
