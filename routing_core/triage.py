"""Triage: is this turn an action, a request for knowledge, or unclear?

Specified in docs/pack-format.md, Triage.

The classifier is a transparent scorecard, not a model: every point it gives is a signal a
person can name, so the studio can show *why* a turn was judged an action.

Default lexicons (our judgement, for English; `routing_core.lexicons` holds them and the
built-in lexicons of other languages a profile can start from):
- action verbs are imperatives that change state or start a transaction ("cancel", "refund",
  "book"...). Words that are mostly nouns in support conversations ("issue", "file", "log",
  "post", and "order", "charge", "request", "return": "where is my order", "a charge I do not
  recognise") are left out because they would turn questions into actions. The specification counts
  every lexicon word wherever it stands, so the lexicon is where a noun is kept out; a profile
  that wants "order" as a verb adds it to its own lexicon.
- knowledge verbs are verbs of understanding ("explain", "compare") plus the interrogatives
  ("what", "how"...), which open most knowledge questions.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from routing_core._records import builder
from routing_core.keywords import KeywordGroups
from routing_core.lexicons import ENGLISH, is_question_pattern, question_pattern
from routing_core.scorers._terms import has_unspaced_script
from routing_core.text import (
    REGEX_TEXT_CHARS,
    RegexBudget,
    compile_user_regex,
    search_bounded,
    turn_words,
)

Label = Literal["action", "knowledge", "ambiguous"]

DEFAULT_ACTION_VERBS: frozenset[str] = ENGLISH.action_verbs

# Both nouns and verbs, mostly nouns in support conversations: kept out of the defaults above.
NOUN_LIKE_VERBS: frozenset[str] = frozenset({"order", "charge", "request", "return"})

DEFAULT_KNOWLEDGE_VERBS: frozenset[str] = ENGLISH.knowledge_verbs

DEFAULT_QUESTION_PATTERN = question_pattern(ENGLISH.question_starts)

_LANE_CAP = 1.2


@dataclass(frozen=True, slots=True)
class TriageVerdict:
    """The triage outcome, with the signals behind it."""

    label: Label
    confidence: float
    matched_tools: tuple[str, ...]
    reasoning: str
    action_score: float
    knowledge_score: float
    signals: tuple[str, ...] = ()

    def to_event(self) -> dict[str, Any]:
        """JSON-safe form, numbers rounded to 3 decimals."""
        return {
            "label": self.label,
            "confidence": round(self.confidence, 3),
            "matched_tools": list(self.matched_tools),
            "reasoning": self.reasoning,
            "action_score": round(self.action_score, 3),
            "knowledge_score": round(self.knowledge_score, 3),
            "signals": list(self.signals),
        }


# `TriageVerdict(...)`, filled in as a draft (routing_core._records): one on every turn.
_triage_verdict: Callable[..., TriageVerdict] = builder(TriageVerdict)


class _Lane(NamedTuple):
    """One lane's score and what fired (a tuple: two are made on every turn)."""

    score: float
    hits: tuple[str, ...]
    first: bool
    signals: tuple[str, ...]


class ToolMatcher:
    """Finds which tools' trigger keywords occur in a message; compiled once per tool set.

    Every tool's words go into one automaton (`routing_core.keywords`): one pass over the
    message, however many tools and words.
    """

    def __init__(self, tool_keywords: Mapping[str, Sequence[str]]) -> None:
        self._groups = KeywordGroups(tool_keywords)

    def matches(self, message: str) -> tuple[str, ...]:
        """Names of tools whose keywords occur, in tool order."""
        return self._groups.matches(message)


class IntentClassifier:
    """Action / knowledge / ambiguous, as docs/pack-format.md, Triage, says. Stateless."""

    def __init__(
        self,
        ambiguity_confidence_floor: float = 0.55,
        min_action_signals: int = 2,
        action_verbs: Iterable[str] | None = None,
        knowledge_verbs: Iterable[str] | None = None,
        question_pattern: str | None = None,
        tool_keywords: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """Raises ValueError outside the ranges of docs/pack-format.md, Triage settings."""
        if not 0.0 <= ambiguity_confidence_floor <= 1.0:
            raise ValueError(
                f"ambiguity_confidence_floor must be in 0..1, not {ambiguity_confidence_floor}"
            )
        if isinstance(min_action_signals, bool) or min_action_signals < 1:
            raise ValueError(f"min_action_signals must be at least 1, not {min_action_signals}")
        self.ambiguity_confidence_floor = ambiguity_confidence_floor
        self.min_action_signals = min_action_signals
        self.action_verbs = _lexicon(action_verbs, DEFAULT_ACTION_VERBS)
        self.knowledge_verbs = _lexicon(knowledge_verbs, DEFAULT_KNOWLEDGE_VERBS)
        pattern = DEFAULT_QUESTION_PATTERN if question_pattern is None else question_pattern
        self.question = compile_user_regex(pattern)
        # A pattern the lexicons write is searched in linear time: outside the turn's regex
        # budget, without the bounded search's clocks (docs/pack-format.md, Regular
        # expressions).
        self._question_is_linear = is_question_pattern(pattern)
        self._tools = ToolMatcher(tool_keywords or {})
        self._scripts = frozenset().union(*map(scripts, self.action_verbs | self.knowledge_verbs))
        self._action_inside = _inside(self.action_verbs)
        self._knowledge_inside = _inside(self.knowledge_verbs)

    def classify(
        self,
        message: str,
        tool_keywords: Mapping[str, Sequence[str]] | None = None,
        budget: RegexBudget | None = None,
    ) -> TriageVerdict:
        """Classify one message.

        Args:
            message: the user's text; never raises on any string.
            tool_keywords: tool name → trigger keywords; when None, the tools given at
                construction are used.
            budget: the turn's regex time, shared with the rules (see `RegexBudget`).
        """
        if not message or not message.strip():
            return _ambiguous("empty query")
        tokens = turn_words(message)
        if not tokens:
            return _ambiguous("no tokens")
        matcher = self._tools if tool_keywords is None else ToolMatcher(tool_keywords)
        tools = matcher.matches(message)
        if self._question_is_linear:
            found = self.question.search(message[:REGEX_TEXT_CHARS])
        else:
            found = search_bounded(self.question, message, budget, "triage.question_pattern")
        is_question = found is not None
        action = _lane(
            tokens, self.action_verbs, self._action_inside, bonus=bool(tools), bonus_name="tool"
        )
        knowledge = _lane(
            tokens,
            self.knowledge_verbs,
            self._knowledge_inside,
            bonus=is_question,
            bonus_name="question",
        )
        verdict = self._resolve(action, knowledge, tools)
        if verdict.action_score == verdict.knowledge_score == 0:
            return self._uncovered(message, verdict) or verdict
        return verdict

    def _uncovered(self, message: str, verdict: TriageVerdict) -> TriageVerdict | None:
        """The no-signal verdict said as "not my language" when no letter of the message is
        in a script of the lexicons (a Chinese message against English verbs), else None."""
        if message.isascii() and "Latin" in self._scripts:
            return None
        found = scripts(message[:_SCRIPT_SAMPLE])
        if not found or found & self._scripts:
            return None
        names = ", ".join(sorted(found))
        reason = f"no signals: the triage lexicons do not cover this language ({names} script)"
        return dataclasses.replace(verdict, reasoning=reason)

    def _resolve(self, action: _Lane, knowledge: _Lane, tools: tuple[str, ...]) -> TriageVerdict:
        a, k = action.score, knowledge.score
        signals = (*action.signals, *knowledge.signals)
        why = _describe(action, knowledge, tools)
        if a == 0 and k == 0:
            return _triage_verdict("ambiguous", 0.0, tools, f"no signals; {why}", a, k, signals)
        label: Label
        if a > k and len(action.signals) >= self.min_action_signals:
            label, outcome = "action", "action leads"
        elif a > k:
            label = "ambiguous"
            outcome = f"action leads on {len(action.signals)} signal(s) < {self.min_action_signals}"
        elif k > a:
            label, outcome = "knowledge", "knowledge leads"
        else:
            label, outcome = "ambiguous", "tie"
        confidence = min(1.0, max(a, k))
        if label != "ambiguous" and confidence < self.ambiguity_confidence_floor:
            outcome = (
                f"{outcome} but {confidence:.2f} < floor {self.ambiguity_confidence_floor:.2f}"
            )
            label = "ambiguous"
        return _triage_verdict(label, confidence, tools, f"{outcome}; {why}", a, k, signals)


# Unicode names a script's letters share a first word with, said the way people name them.
_SCRIPT_NAMES = {"CJK": "Han", "FULLWIDTH": "Latin"}
# Characters of a message looked at to name its scripts (its language shows early).
_SCRIPT_SAMPLE = 1000


def scripts(text: str) -> frozenset[str]:
    """The scripts of the text's letters, by the first word of their Unicode names."""
    found = {unicodedata.name(c, "").split(" ")[0] for c in text if c.isalpha()}
    return frozenset(_SCRIPT_NAMES.get(s, s.title()) for s in found if s)


def _lexicon(given: Iterable[str] | None, default: frozenset[str]) -> frozenset[str]:
    return default if given is None else frozenset(w.lower() for w in given)


def _inside(lexicon: frozenset[str]) -> tuple[str, ...]:
    """The lexicon's words in scripts without spaces: found inside tokens, not only as one."""
    return tuple(sorted(w for w in lexicon if has_unspaced_script(w)))


def _found_inside(token: str, inside: tuple[str, ...]) -> list[str]:
    """The words of `inside` in the token, in order, leaving out one found only within a
    longer one ("什么" within "为什么" is one question word, not two)."""
    spans = []
    for word in inside:
        start = token.find(word)
        while start >= 0:
            spans.append((start, start + len(word), word))
            start = token.find(word, start + 1)
    # By start, the longer first: a span lies within another exactly when an earlier one in
    # this order reaches as far (one sweep; comparing every pair took seconds on a long message).
    spans.sort(key=lambda span: (span[0], -span[1]))
    kept, reach = [], -1
    for a, b, w in spans:
        if b > reach:
            kept.append((a, b, w))
        reach = max(reach, b)
    return [w for _, _, w in sorted(kept)]


def _hits(tokens: Sequence[str], lexicon: frozenset[str], inside: tuple[str, ...]) -> list[str]:
    """The tokens in the lexicon and, within tokens in a script without spaces, the lexicon
    words of that script they contain (docs/pack-format.md, Triage, step 4)."""
    if not inside:
        return [t for t in tokens if t in lexicon]
    found = []
    for token in tokens:
        if token in lexicon:
            found.append(token)
        elif has_unspaced_script(token):
            found += _found_inside(token, inside)
    return found


def _lane(
    tokens: Sequence[str],
    lexicon: frozenset[str],
    inside: tuple[str, ...],
    *,
    bonus: bool,
    bonus_name: str,
) -> _Lane:
    hits = tuple(dict.fromkeys(_hits(tokens, lexicon, inside)))
    first = tokens[0] in lexicon or tokens[0].startswith(inside)
    score = (0.4 + 0.1 * min(len(hits) - 1, 3) if hits else 0.0) + (0.2 if first else 0.0)
    score += 0.3 if bonus else 0.0
    signals: tuple[str, ...] = ("verb",) if hits else ()
    if first:
        signals += ("first-word",)
    if bonus:
        signals += (bonus_name,)
    return _Lane(min(score, _LANE_CAP), hits, first, signals)


def _describe(action: _Lane, knowledge: _Lane, tools: tuple[str, ...]) -> str:
    def part(name: str, lane: _Lane, extra: str) -> str:
        bits = []
        if lane.hits:
            bits.append("verbs " + ", ".join(lane.hits) + (" (first word)" if lane.first else ""))
        if extra:
            bits.append(extra)
        return f"{name} {lane.score:.2f}: " + ("; ".join(bits) if bits else "none")

    tool_text = "tools " + ", ".join(tools) if tools else ""
    question = "question" if "question" in knowledge.signals else ""
    return part("action", action, tool_text) + " | " + part("knowledge", knowledge, question)


def _ambiguous(reason: str) -> TriageVerdict:
    return TriageVerdict("ambiguous", 0.0, (), reason, 0.0, 0.0)
