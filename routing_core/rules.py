"""Tier 1: rules that send a turn to a route before any scoring, with the evidence that fired."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from routing_core.decision import Evidence, EvidenceMatch
from routing_core.keywords import KeywordMatcher
from routing_core.pack import AllMatch, KeywordsMatch, Match, RegexMatch, Rule
from routing_core.text import (
    RegexBudget,
    clip_evidence,
    compile_user_regex,
    search_bounded,
)


@dataclass(frozen=True, slots=True)
class _Hit:
    span: tuple[int, int]
    keyword: str | None = None


class _Keywords:
    """Keywords in one pass over the message (`routing_core.keywords`), so outside the regex
    budget: their time is linear in the message whatever the keywords are."""

    def __init__(self, match: KeywordsMatch) -> None:
        self._matcher = KeywordMatcher(match.keywords)

    def hit(self, message: str, budget: RegexBudget | None = None) -> _Hit | None:
        # Evidence names the first *declared* keyword that occurs, not the leftmost one.
        found = self._matcher.first_declared(message)
        return None if found is None else _Hit(found[1], found[0])


class _Regex:
    def __init__(self, match: RegexMatch, where: str) -> None:
        self._pattern = compile_user_regex(match.regex)
        self._where = where

    def hit(self, message: str, budget: RegexBudget | None = None) -> _Hit | None:
        found = search_bounded(self._pattern, message, budget, self._where)
        return _Hit(found.span()) if found else None


class _All:
    def __init__(self, parts: Sequence[_Keywords | _Regex]) -> None:
        self._parts = parts

    def hit(self, message: str, budget: RegexBudget | None = None) -> _Hit | None:
        hits = []
        for part in self._parts:
            found = part.hit(message, budget)
            if found is None:
                return None
            hits.append(found)
        shown = next((h for h in hits if _has_text(message, h.span)), hits[0])
        keyword = next((h.keyword for h in hits if h.keyword), None)
        return _Hit(shown.span, keyword)


def _has_text(message: str, span: tuple[int, int]) -> bool:
    return clip_evidence(message[span[0] : span[1]]) is not None


def _flatten(match: Match) -> list[KeywordsMatch | RegexMatch]:
    if isinstance(match, AllMatch):
        return [leaf for part in match.all for leaf in _flatten(part)]
    return [match]


def _compile(match: Match, where: str) -> _Keywords | _Regex | _All:
    if isinstance(match, KeywordsMatch):
        return _Keywords(match)
    if isinstance(match, RegexMatch):
        return _Regex(match, where)
    return _All([_compile(leaf, where) for leaf in _flatten(match)])  # type: ignore[misc]


class RuleSet:
    """The pack's rules, compiled once; `first_match` runs them in declaration order."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self._rules = [
            (i, rule.route, _kind(rule.match), _compile(rule.match, f"rules[{i}]"))
            for i, rule in enumerate(rules)
        ]

    def first_match(self, message: str, budget: RegexBudget | None = None) -> Evidence | None:
        """Evidence of the first rule that matches, or None.

        With a `budget`, regex rules share its time (see `RegexBudget`); without one, each
        search has the engine's own timeout.
        """
        for index, route, kind, matcher in self._rules:
            hit = matcher.hit(message, budget)
            if hit is not None:
                return _evidence(message, index, route, kind, hit)
        return None

    def matches(self, index: int, message: str) -> bool:
        """Does rule `index` match `message`? (The studio checks rule examples with it.)"""
        return self._rules[index][3].hit(message) is not None


def _kind(match: Match) -> EvidenceMatch:
    if isinstance(match, KeywordsMatch):
        return "keywords"
    return "regex" if isinstance(match, RegexMatch) else "all"


def _evidence(message: str, index: int, route: str, kind: EvidenceMatch, hit: _Hit) -> Evidence:
    text = clip_evidence(message[hit.span[0] : hit.span[1]])
    return Evidence(
        source="rule",
        route=route,
        rule=index,
        match=kind,
        text=text,
        keyword=hit.keyword,
        span=hit.span if text is not None else None,
    )
