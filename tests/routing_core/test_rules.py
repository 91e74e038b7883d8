"""Tier 1: rules in declaration order, with evidence (docs/pack-format.md, Tier 1: rules)."""

from __future__ import annotations

import pytest

from routing_core.pack import Rule
from routing_core.rules import RuleSet


def rules(*specs):
    return RuleSet([Rule.model_validate(s) for s in specs])


KEYWORDS = {"route": "billing", "match": {"keywords": ["refund", "visa card", "c++"]}}


@pytest.mark.parametrize(
    ("message", "hit"),
    [
        ("I need a refund", True),
        ("REFUND please", True),
        ("refunds are slow", False),  # word boundary: refund != refunds
        ("prerefund", False),
        ("my Visa   Card was charged", True),  # phrase, any whitespace, any case
        ("my visacard", False),
        ("I write c++ code", True),  # no word boundary needed after '+'
        ("", False),
    ],
)
def test_keywords_match_case_insensitively_at_word_edges(message, hit):
    assert (rules(KEYWORDS).first_match(message) is not None) is hit


def test_evidence_names_the_first_declared_keyword_that_hit():
    evidence = rules(KEYWORDS).first_match("visa card refund")
    assert evidence is not None
    assert evidence.keyword == "refund"
    assert evidence.text == "refund"
    assert evidence.span == (10, 16)


def test_the_first_matching_rule_in_declaration_order_decides():
    rs = rules(
        {"route": "human", "match": {"keywords": ["agent"]}},
        {"route": "billing", "match": {"keywords": ["invoice"]}},
    )
    evidence = rs.first_match("invoice agent")
    assert evidence is not None and (evidence.route, evidence.rule) == ("human", 0)


def test_a_regex_rule_records_its_match_with_whitespace_collapsed():
    rs = rules({"route": "orders", "match": {"regex": r"order\s+#?\d+"}})
    evidence = rs.first_match("about order \n  #12345 today")
    assert evidence is not None
    assert (evidence.text, evidence.keyword, evidence.match) == ("order #12345", None, "regex")


def test_evidence_is_clipped_to_80_characters_with_the_ellipsis():
    rs = rules({"route": "orders", "match": {"regex": r"x+"}})
    evidence = rs.first_match("x" * 200)
    assert evidence is not None and evidence.text is not None
    assert len(evidence.text) == 80 and evidence.text.endswith("…")


@pytest.mark.parametrize("pattern", [r"^", r"\s+", r"(?=a)"])
def test_a_zero_width_or_blank_match_records_no_evidence_text(pattern):
    evidence = rules({"route": "orders", "match": {"regex": pattern}}).first_match("a   b")
    assert evidence is not None
    assert evidence.text is None and evidence.span is None


def test_all_needs_every_part_and_flattens_nested_all():
    rs = rules(
        {
            "route": "billing",
            "match": {"all": [{"regex": r"\binvoice\b"}, {"all": [{"keywords": ["copy"]}]}]},
        }
    )
    assert rs.first_match("invoice please") is None
    assert rs.first_match("a copy please") is None
    evidence = rs.first_match("send a copy of my invoice")
    assert evidence is not None
    assert (evidence.match, evidence.keyword, evidence.text) == ("all", "copy", "invoice")


def test_matches_checks_one_rule_for_the_studio():
    rs = rules(KEYWORDS, {"route": "x", "match": {"regex": "zzz"}})
    assert rs.matches(0, "refund") and not rs.matches(1, "refund")


@pytest.mark.parametrize(
    "pattern",
    [
        r"(a|aa)+$",
        r"(\w+\s?)*$",
        r"(.*a){20}",
        r"(x+x+)+y",
        # Overlapping repeats in a row: polynomial backtracking
        # (docs/pack-format.md, Regular expressions).
        r"\d*\d*\d*\D\d",
        r"\d+\d+\d+x",
        r"\s*#?\s*\d{4,}",
        r"(?i)A*a+x",
        r"[0-9]+\d*x",
        r"\w+1\d+x",
        r"x(?:\d*\d*)y",
    ],
)
def test_a_catastrophic_regex_is_refused_at_validation(pattern):
    from routing_core import PackError, load_pack
    from tests.routing_core.conftest import minimal_doc

    doc = minimal_doc(rules=[{"route": "billing", "match": {"regex": pattern}}])
    with pytest.raises(PackError) as caught:
        load_pack(doc)
    path, message = caught.value.errors[0]
    assert path == "rules[0].match.regex" and message.startswith("unsafe regex:")


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?:foo|bar)+",
        r"(?:\s|-)+",
        r"(a|aa){1,10}",
        r"order\s+#?\d+",
        r"\d+-\d+",
        r"\w+\s+\w+",
        r"\d+\D\d",
        r"[\s#]*\d{4,}",
        r"^\s*(?:hi|hello)\b",
    ],
)
def test_sound_repeats_and_alternations_are_allowed(pattern):
    rules({"route": "orders", "match": {"regex": pattern}})


@pytest.mark.timeout(60)
def test_a_slow_pattern_that_passes_validation_is_bounded_at_run_time(monkeypatch):
    import routing_core.text as text

    # \d+\D\d is quadratic in a run of digits (each start scans the run): slow on a long input.
    rs = rules(
        {"route": "orders", "match": {"regex": r"\d+\D\d"}},
        {"route": "billing", "match": {"keywords": ["invoice"]}},
    )
    monkeypatch.setattr(text, "REGEX_TIMEOUT_S", 0.005)
    evidence = rs.first_match("1" * 5000 + " invoice")
    assert evidence is not None and evidence.route == "billing"
