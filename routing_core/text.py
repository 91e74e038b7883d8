"""Text helpers shared by triage, rules and tool narrowing: word tokens and keyword matching."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterable

import regex

# Unicode-aware "word": letters and digits of any script; underscores split words.
_WORD = re.compile(r"[^\W_]+")
_SPACE = re.compile(r"\s+")

EVIDENCE_LIMIT = 80
# A safety net, not the guard: validation refuses the catastrophic shapes (regex_safety),
# and this bounds whatever slips past. Generous, so a busy machine never trips it on a
# sound pattern (a wall-clock timeout that fired under load would make routing
# nondeterministic).
REGEX_TIMEOUT_S = 0.25
# One turn's regexes (every rule and the question pattern) share this much time (CPU);
# past it the rest are skipped and recorded in the decision (`RegexBudget`).
REGEX_BUDGET_S = 0.050
# A pattern is searched in the first REGEX_TEXT_CHARS characters of a message only: even a
# linear-looking pattern (`\\d+\\D\\d`) costs time quadratic in the text it searches, and a
# routing request states its intent well within it.
REGEX_TEXT_CHARS = 2_000

log = logging.getLogger("routing_core")

UserPattern = regex.Pattern[str]


def compile_user_regex(pattern: str) -> UserPattern:
    """Compile a regex a person wrote (rules, the question pattern) with the bounded engine.

    Python's `re` syntax is the contract (it judges the syntax); the `regex` engine runs it
    because it can time out.

    Raises:
        ValueError: when the pattern does not compile or may backtrack catastrophically.
    """
    from routing_core.regex_safety import catastrophic_reason

    try:
        re.compile(pattern)
        compiled = regex.compile(pattern)
    except (re.error, regex.error, RecursionError, OverflowError, ValueError) as exc:
        raise ValueError(f"invalid regex: {exc}") from None
    reason = catastrophic_reason(pattern)
    if reason:
        raise ValueError(f"unsafe regex: {reason}")
    return compiled


def search_bounded(
    pattern: UserPattern, text: str, budget: RegexBudget | None = None, where: str = ""
) -> regex.Match[str] | None:
    """`pattern.search` on the first REGEX_TEXT_CHARS characters of `text`, bounded in time.

    With a `budget` the search gets what is left of it (and none once it is spent: the
    pattern is skipped and recorded under `where`); without one, REGEX_TIMEOUT_S. A search
    that runs out of time is logged and treated as no match.
    """
    if budget is not None:
        return budget.search(pattern, text, where)
    return _search(pattern, text, REGEX_TIMEOUT_S)


def _search(pattern: UserPattern, text: str, timeout: float) -> regex.Match[str] | None:
    found, _, ran_out = search_within(pattern, text, timeout)
    if ran_out:
        log.warning(
            "regex %r timed out after %.0f ms; treated as no match", pattern.pattern, timeout * 1000
        )
    return found


# How many times a search may start over after the engine stopped it early (see
# `search_within`): a bound on the retries; the time is bounded by the allowance.
_ATTEMPTS = 8


def search_within(
    pattern: UserPattern, text: str, allowance: float
) -> tuple[regex.Match[str] | None, float, bool]:
    """Search the first REGEX_TEXT_CHARS characters with `allowance` seconds of this thread's
    CPU time: (the match or None, the CPU time spent, whether it ran out).

    The engine's own timeout counts the whole process's CPU time (C's `clock()`), so the
    work of other threads (another turn, numpy, a hash) made a sound, quick search time out
    and the same turn route differently under load. A stop that came before this thread had
    spent its allowance is the other threads' doing: the search starts over with what is
    left, on a clock scaled by how much faster the process's ran than this thread's, and
    holding the GIL so that other threads' Python code no longer runs on it. One attempt
    never gets more than REGEX_TIMEOUT_S of the engine's clock, the safety net of any search.
    """
    text = text[:REGEX_TEXT_CHARS]
    started = attempt = time.thread_time()
    timeout = min(allowance, REGEX_TIMEOUT_S)
    hold_gil = False  # at first the engine's default: release the GIL while searching
    for _ in range(_ATTEMPTS):
        try:
            # Passing `concurrent` at all costs the engine a fifth of a short search.
            if hold_gil:
                found = pattern.search(text, timeout=timeout, concurrent=False)
            else:
                found = pattern.search(text, timeout=timeout)
        except TimeoutError:
            pass
        else:
            return found, time.thread_time() - started, False
        now = time.thread_time()
        left = allowance - (now - started)
        if left <= 0:
            break
        # The engine's clock ran `timeout` while this thread's ran `now - attempt`.
        ratio = timeout / max(now - attempt, 1e-6)
        timeout = min(left * max(ratio, 1.0), REGEX_TIMEOUT_S)
        hold_gil, attempt = True, now
    return None, time.thread_time() - started, True


class RegexBudget:
    """The time one turn may spend in the pack's own regexes, shared by all of them.

    Counted in this thread's CPU time (`search_within`; the engine's own timeout counts the
    whole process's): so a pack of many slow patterns costs a turn at most REGEX_BUDGET_S of
    work, and the wall time that takes is that times how busy the machine is. (A wall-clock count also charged the turn for
    other threads holding the GIL between two searches: eight threads routing at once then
    skipped sound rules, and the same turn routed differently.) What could not run is
    recorded in `skipped` and ends up in the decision.
    """

    def __init__(self, seconds: float = REGEX_BUDGET_S) -> None:
        self.seconds = seconds
        self.spent = 0.0
        self.skipped: list[str] = []

    def search(self, pattern: UserPattern, text: str, where: str) -> regex.Match[str] | None:
        """Search with what is left; no time left (or none left after it) → skipped."""
        left = min(self.seconds - self.spent, REGEX_TIMEOUT_S)
        if left <= 0:
            self.skipped.append(where)
            return None
        found, spent, ran_out = search_within(pattern, text, left)
        self.spent += spent
        if ran_out:
            self.skipped.append(where)
        return found


def words(text: str) -> list[str]:
    """Lowercased word tokens, split on anything that is not a letter or a digit."""
    return _words_of(text.lower())


def _words_of(lowered: str) -> list[str]:
    """`_WORD.findall(lowered)`; most messages are words between spaces, split in C.

    `[^\\W_]` is exactly the characters `str.isalnum` accepts (the regex engine and the
    method test the same Unicode properties), and white space is never one of them: when
    every part `split()` gives is alphanumeric, the parts are the word runs themselves.
    """
    parts = lowered.split()
    if all(map(str.isalnum, parts)):
        return parts
    return _WORD.findall(lowered)


# The last text `turn_words` tokenised, and its words, per thread.
_LAST_WORDS = threading.local()


def turn_words(text: str) -> tuple[str, ...]:
    """`words(text)` as a tuple, remembered for the last text this thread asked about.

    One turn reads its message's words three times: triage, the no-topic check of a turn
    after the first, and the lexical scorer. Tokenising once spares the other two (the cost
    of following a conversation, docs/benchmarks.md). A tuple, so no reader can change what
    the next one reads; per thread, so threads never share an entry.
    """
    last: tuple[str, tuple[str, ...]] | None = getattr(_LAST_WORDS, "pair", None)
    if last is not None and last[0] == text:
        return last[1]
    found = tuple(_words_of(text.lower()))
    _LAST_WORDS.pair = (text, found)
    return found


def keyword_pattern(keyword: str) -> str:
    """A regex for one keyword, word-bounded only where the keyword starts/ends with a word char.

    So "refund" does not match "refunds", "visa card" matches as a phrase (any run of
    whitespace between its words), and "c++" still matches after a space.
    """
    stripped = keyword.strip()
    body = r"\s+".join(re.escape(part) for part in stripped.split())
    head = r"(?<!\w)" if is_word_char(stripped[:1]) else ""
    tail = r"(?!\w)" if is_word_char(stripped[-1:]) else ""
    return f"{head}{body}{tail}"


def is_word_char(char: str) -> bool:
    """The regex engine's `\\w` on str: a letter or a digit of any script, or the underscore."""
    return char.isalnum() or char == "_"


def compile_keywords(keywords: Iterable[str]) -> re.Pattern[str] | None:
    """One case-insensitive alternation of the keywords, or None when there are none.

    The definition of what a keyword matches. Routing does not search with it (a regex
    alternation costs time in keywords × message length): `routing_core.keywords` matches
    the same in one pass, and the equivalence test holds it to this.
    """
    patterns = [keyword_pattern(k) for k in keywords if k.strip()]
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


def clip_evidence(text: str) -> str | None:
    """Collapse whitespace and clip to EVIDENCE_LIMIT characters (the `…` included).

    Returns None for text that is empty once collapsed: a zero-width or blank match is
    no evidence at all.
    """
    collapsed = _SPACE.sub(" ", text).strip()
    if not collapsed:
        return None
    if len(collapsed) <= EVIDENCE_LIMIT:
        return collapsed
    return collapsed[: EVIDENCE_LIMIT - 1] + "…"
