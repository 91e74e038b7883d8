"""The one-pass keyword matcher against the regex that defines keyword matching.

`text.compile_keywords` / `keyword_pattern` (case-insensitive, word-bounded at word-character
edges, any whitespace run between a keyword's words) is the definition; `KeywordMatcher`
must find the same keywords at the same leftmost spans on any keywords and any message,
including the characters where case-insensitive matching is unusual (ſ, K, µ, ı, İ, final
sigma, the combining iota that is not a word character but matches ι).
"""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from routing_core.keywords import KeywordGroups, KeywordMatcher
from routing_core.pack import KeywordsMatch, Rule
from routing_core.rules import RuleSet
from routing_core.text import compile_keywords, keyword_pattern

# Few characters, so that keywords and messages collide often; the unusual case pairs; word
# and non-word characters; every kind of whitespace the regex's \s takes.
TRICKY = (
    list("aAbB_-+.'")
    + list("sSſkKKµμΜiIıİσςΣιΙ\u0345\u1fbe")
    + list("1٣")
    + [
        " ",
        "\t",
        "\n",
        "\u00a0",
        "\u2003",
    ]
)
chars = st.one_of(st.sampled_from(TRICKY), st.characters(codec="utf-8"))
keywords = st.lists(st.text(chars, min_size=1, max_size=6), min_size=1, max_size=8)


@st.composite
def keywords_and_message(draw: st.DrawFn) -> tuple[list[str], str]:
    """Keywords, and a message made of some of them (recased) between random text."""
    words = draw(keywords)
    pieces = []
    for _ in range(draw(st.integers(0, 6))):
        pieces.append(draw(st.text(chars, max_size=4)))
        if draw(st.booleans()):
            word = draw(st.sampled_from(words))
            pieces.append(draw(st.sampled_from([word, word.upper(), word.lower(), word.title()])))
    return words, "".join(pieces)


def _reference(words: list[str], message: str) -> dict[int, tuple[int, int]]:
    """Each keyword's leftmost span as the regex finds it."""
    spans = {}
    for i, word in enumerate(words):
        if word.strip():
            found = re.compile(keyword_pattern(word), re.IGNORECASE).search(message)
            if found:
                spans[i] = found.span()
    return spans


def _leftmost(words: list[str], message: str) -> dict[int, tuple[int, int]]:
    return KeywordMatcher(words).leftmost(message)


@settings(max_examples=600)
@given(keywords_and_message())
@example((["visa card"], "my VISA \t\n card"))
@example((["ι"], "\u0345"))  # a non-word character that matches a word character
@example((["α"], "α\u0345"))
@example((["c++"], "c++x"))
@example((["-x"], "a-x"))
@example((["İ"], "i"))
@example((["αιβ", "β", "α"], "ᾳβ α\u0345 ͅβ"))  # spanning, ending and starting at a U+0345
@example((["\u0345b", "ι"], "ιb Ιb"))
def test_every_keyword_is_found_at_the_regex_s_leftmost_span(case):
    words, message = case
    assert _leftmost(words, message) == _reference(words, message)


@settings(max_examples=200)
@given(keywords_and_message())
def test_search_agrees_with_the_alternation(case):
    words, message = case
    pattern = compile_keywords(words)
    assert KeywordMatcher(words).search(message) == bool(pattern and pattern.search(message))


@settings(max_examples=200)
@given(keywords_and_message())
def test_a_keyword_rule_names_the_first_declared_keyword_and_its_leftmost_span(case):
    words, message = case
    words = [w for w in words if w.strip()] or ["x"]
    rules = RuleSet([Rule(match=KeywordsMatch(keywords=words), route="r")])
    evidence = rules.first_match(message)
    expected = _reference(words, message)
    if not expected:
        assert evidence is None
        return
    first = min(expected)
    assert evidence is not None and evidence.keyword == words[first]
    assert evidence.span in (expected[first], None)  # None: a match of blanks shows no text


@settings(max_examples=200)
@given(st.lists(keywords, min_size=1, max_size=5), st.text(chars, max_size=30))
def test_tool_groups_agree_with_one_alternation_per_tool(groups, message):
    named = {f"t{i}": words for i, words in enumerate(groups)}
    expected = tuple(
        name
        for name, words in named.items()
        if (pattern := compile_keywords(words)) is not None and pattern.search(message)
    )
    assert KeywordGroups(named).matches(message) == expected


def test_keywords_nested_in_one_another_are_found_past_the_automaton_s_report_budget():
    # "a", "a a", … on "a a a …": each place ends a match of every keyword; past a number of
    # reports the matcher looks the rest up one by one, and must still find each leftmost.
    words = [" ".join(["a"] * n) for n in range(40, 0, -1)] + ["b a", "a a c"]
    message = "b " + "a " * 300 + "a\tc"
    assert _leftmost(words, message) == _reference(words, message)
    assert KeywordMatcher(words).first_declared(message) == (words[0], (2, 81))
    groups = {"nested": words[:40], "never": ["z"], "late": ["c"]}
    assert KeywordGroups(groups).matches(message) == ("nested", "late")


def test_the_word_marks_and_ascii_folding_hold_for_every_character():
    from routing_core.keywords import _fold

    assert all(_fold(chr(c)) == chr(c).lower() for c in range(128))
    assert not [c for c in range(0x110000) if _fold(chr(c)) in "AB"]
    # Word-ness survives folding (runs are found on the folded text), but for U+0345.
    changed = [
        c
        for c in range(0x110000)
        if (chr(c).isalnum() or c == 0x5F) != (_fold(chr(c)).isalnum() or _fold(chr(c)) == "_")
    ]
    assert changed == [0x345]


def test_every_cased_character_folds_as_the_regex_engine_compares():
    """The case classes `_fold` builds are exactly those of re.IGNORECASE, character by character."""
    from routing_core.keywords import _fold

    cased = [
        chr(c) for c in range(0x110000) if chr(c).lower() != chr(c) or chr(c).upper() != chr(c)
    ]
    by_class: dict[str, list[str]] = {}
    for char in cased:
        by_class.setdefault(_fold(char), []).append(char)
    everything = "".join(cased)
    for char in cased:
        same = re.findall(re.escape(char), everything, re.IGNORECASE)
        assert sorted(same) == sorted(by_class[_fold(char)]), char
