"""The action / knowledge / ambiguous classifier, rule by rule (docs/pack-format.md, Triage)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from routing_core.triage import (
    DEFAULT_ACTION_VERBS,
    DEFAULT_KNOWLEDGE_VERBS,
    NOUN_LIKE_VERBS,
    IntentClassifier,
    _found_inside,
)

TOOLS = {"delete_file": ["delete"], "refund_order": ["refund", "money back"]}


@pytest.fixture
def classify():
    return IntentClassifier().classify


@pytest.mark.parametrize(
    ("message", "label", "confidence", "reason"),
    [
        ("", "ambiguous", 0.0, "empty query"),
        ("   \n\t", "ambiguous", 0.0, "empty query"),
        ("?!... ---", "ambiguous", 0.0, "no tokens"),
    ],
)
def test_empty_and_tokenless_messages_are_ambiguous(classify, message, label, confidence, reason):
    verdict = classify(message)
    assert (verdict.label, verdict.confidence, verdict.reasoning) == (label, confidence, reason)


def test_a_bare_first_word_verb_is_a_decisive_action(classify):
    verdict = classify("delete the file", tool_keywords={})
    assert verdict.label == "action"
    assert verdict.action_score == pytest.approx(0.6)
    assert verdict.confidence == pytest.approx(0.6)


def test_one_action_verb_inside_a_question_is_not_an_action(classify):
    # action 0.4 (one signal) vs knowledge 0.3 (question): action leads, too few signals
    verdict = classify("could you delete it?", tool_keywords={})
    assert verdict.action_score == pytest.approx(0.4)
    assert verdict.knowledge_score == pytest.approx(0.3)
    assert verdict.label == "ambiguous"


def test_a_matched_tool_adds_a_signal_and_point_three(classify):
    verdict = classify("could you delete it?", tool_keywords=TOOLS)
    assert verdict.matched_tools == ("delete_file",)
    assert verdict.action_score == pytest.approx(0.7)
    assert verdict.label == "action"


def test_distinct_hits_add_a_tenth_each_up_to_three_more(classify):
    verdict = classify("please cancel refund delete remove reset book this", tool_keywords={})
    # six distinct verbs: 0.4 + 0.1 * min(5, 3) = 0.7, first word "please" is no verb
    assert verdict.action_score == pytest.approx(0.7)


def test_repeated_words_count_once(classify):
    assert classify("x cancel cancel cancel", tool_keywords={}).action_score == pytest.approx(0.4)


def test_each_lane_tops_out_at_one_point_two(classify):
    verdict = classify("cancel refund delete remove reset book the money back", tool_keywords=TOOLS)
    assert verdict.action_score == pytest.approx(1.2)
    assert verdict.confidence == 1.0


def test_a_question_feeds_the_knowledge_lane(classify):
    verdict = classify("what is your return policy?", tool_keywords={})
    # what (first, knowledge verb) 0.6 + question 0.3
    assert verdict.knowledge_score == pytest.approx(0.9)
    assert verdict.label == "knowledge"


def test_the_leading_lane_wins_and_equal_scores_are_ambiguous(classify):
    verdict = classify("explain and cancel", tool_keywords={})
    # explain: knowledge 0.4 + 0.2 first; cancel: action 0.4 — knowledge wins here
    assert verdict.label == "knowledge"
    tie = IntentClassifier(action_verbs=["go"], knowledge_verbs=["see"]).classify("x go see")
    assert (tie.action_score, tie.knowledge_score, tie.label) == (0.4, 0.4, "ambiguous")


def test_a_confidence_below_the_floor_is_ambiguous_and_keeps_its_confidence():
    c = IntentClassifier(ambiguity_confidence_floor=0.65, min_action_signals=1)
    verdict = c.classify("delete the file", tool_keywords={})
    assert verdict.label == "ambiguous"
    assert verdict.confidence == pytest.approx(0.6)


def test_min_action_signals_one_lets_a_single_verb_decide():
    c = IntentClassifier(min_action_signals=1, ambiguity_confidence_floor=0.3)
    assert c.classify("x please cancel it", tool_keywords={}).label == "action"


def test_no_signal_at_all_is_ambiguous_with_zero_confidence(classify):
    verdict = classify("banana smoothie", tool_keywords={})
    assert (verdict.label, verdict.confidence) == ("ambiguous", 0.0)


def test_tool_keywords_match_phrases_with_word_boundaries(classify):
    assert classify("I want my money back", tool_keywords=TOOLS).matched_tools == ("refund_order",)
    assert classify("refunds please", tool_keywords=TOOLS).matched_tools == ()
    assert classify("REFUND now", tool_keywords=TOOLS).matched_tools == ("refund_order",)


def test_custom_lexicons_replace_the_defaults():
    c = IntentClassifier(action_verbs=["annuler"], knowledge_verbs=["pourquoi"])
    assert c.classify("annuler la commande", tool_keywords={}).label == "action"
    assert c.classify("cancel the order", tool_keywords={}).label == "ambiguous"


def test_a_custom_question_pattern_is_searched_on_the_raw_text():
    c = IntentClassifier(question_pattern=r"\bhuh\b")
    verdict = c.classify("it broke huh", tool_keywords={})
    assert verdict.knowledge_score == pytest.approx(0.3)
    assert "question" in verdict.signals


def test_the_event_form_rounds_to_three_decimals(classify):
    event = classify("please cancel cancel refund", tool_keywords={}).to_event()
    assert event["action_score"] == 0.5
    assert set(event) >= {"label", "confidence", "matched_tools", "reasoning", "action_score"}


def test_the_default_lexicons_hold_the_everyday_verbs():
    assert {
        "create",
        "delete",
        "cancel",
        "book",
        "send",
        "update",
        "refund",
    } <= DEFAULT_ACTION_VERBS
    assert {"explain", "describe", "compare", "what"} <= DEFAULT_KNOWLEDGE_VERBS
    assert not DEFAULT_ACTION_VERBS & DEFAULT_KNOWLEDGE_VERBS


def test_the_reasoning_names_the_signals_that_fired(classify):
    reasoning = classify("cancel my order", tool_keywords={"cancel_order": ["cancel"]}).reasoning
    assert "cancel" in reasoning and "cancel_order" in reasoning


@given(st.text(max_size=300))
def test_classify_never_raises_and_stays_in_range(message):
    verdict = IntentClassifier().classify(message, tool_keywords=TOOLS)
    assert verdict.label in ("action", "knowledge", "ambiguous")
    assert 0.0 <= verdict.confidence <= 1.0
    assert 0.0 <= verdict.action_score <= 1.2 and 0.0 <= verdict.knowledge_score <= 1.2


@pytest.mark.parametrize("noun", sorted(NOUN_LIKE_VERBS))
def test_a_word_that_is_mostly_a_noun_in_support_is_no_default_action_verb(classify, noun):
    verdict = classify(f"where is my {noun}", tool_keywords={})

    assert noun not in DEFAULT_ACTION_VERBS
    assert verdict.action_score == 0


def test_my_order_is_not_an_action_but_cancel_my_order_still_is(classify):
    assert classify("my order", tool_keywords={}).action_score == 0
    assert classify("cancel my order", tool_keywords={}).label == "action"


def test_a_profile_may_put_order_back_as_a_verb():
    c = IntentClassifier(action_verbs=[*DEFAULT_ACTION_VERBS, "order"])

    assert c.classify("order a new card", tool_keywords={}).label == "action"


@pytest.mark.parametrize(
    "settings",
    [
        {"ambiguity_confidence_floor": 1.5},
        {"ambiguity_confidence_floor": -0.1},
        {"ambiguity_confidence_floor": float("nan")},
        {"min_action_signals": 0},
        {"min_action_signals": -2},
    ],
)
def test_a_threshold_outside_its_design_range_is_refused(settings):
    with pytest.raises(ValueError, match=next(iter(settings))):
        IntentClassifier(**settings)


@pytest.mark.parametrize(
    "settings",
    [
        {"ambiguity_confidence_floor": 0.0},
        {"ambiguity_confidence_floor": 1.0},
        {"min_action_signals": 1},
    ],
)
def test_the_ends_of_each_range_are_accepted(settings):
    IntentClassifier(**settings)


def _inside_by_pairs(token: str, inside: tuple[str, ...]) -> list[str]:
    """docs/pack-format.md's rule read literally: every occurrence, less those lying wholly
    within another occurrence."""
    spans = [
        (start, start + len(word), word)
        for word in inside
        for start in range(len(token))
        if token.startswith(word, start)
    ]
    kept = [
        (a, b, w)
        for a, b, w in spans
        if not any(c <= a and b <= d and (c, d) != (a, b) for c, d, _ in spans)
    ]
    return [w for _, _, w in sorted(kept)]


@given(
    st.text(alphabet="为什么了解不同吗", max_size=40),
    st.sets(st.text(alphabet="为什么了解不同吗", min_size=1, max_size=3), max_size=6),
)
def test_words_inside_an_unspaced_token_follow_the_specs_longest_rule(token, words):
    inside = tuple(sorted(words))
    assert _found_inside(token, inside) == _inside_by_pairs(token, inside)
