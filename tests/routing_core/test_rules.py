"""Tier 1: rules in declaration order, with evidence (DESIGN §3)."""

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
