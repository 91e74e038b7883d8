"""Keywords and trigger words found in one pass over the message: time linear in its length.

Rules' keywords and tools' trigger words used to be one regex alternation searched over the
whole message: the engine tries every keyword at every position, so a few hundred long
keywords sharing a prefix ("a a a … z") cost seconds on a long message. Here they go into one
Aho-Corasick automaton (pyahocorasick, in C) and the message is read once.

The matching is exactly `text.keyword_pattern`'s under `re.IGNORECASE`, which stays the
definition (the equivalence test compares the two on random keywords and messages):

- case: two characters match when Python's regex engine says so, i.e. when their simple
  lowercase forms are equal or are one of its extra case pairs (`ſ`/`s`, `µ`/`μ`, …);
  `_fold` maps each character to one representative of that class, one character for one;
- whitespace: any run of whitespace in the message matches the space between two words of a
  keyword, so both are read with each run as a single space;
- word boundaries: a keyword that starts (ends) with a word character matches only where the
  character before (after) it is not one. Both the message and each keyword are read with a
  mark before and after every run of word characters (`_OPEN`, `_CLOSE`), so a keyword
  "refund" is "⟨refund⟩" and occurs in "⟨refunds⟩" nowhere: the automaton reports only
  occurrences the regex would accept, never ones that a check must then throw away (which
  could be the whole message times the keywords, for keywords nested in one another);
- evidence: each keyword's leftmost occurrence and its span in the message as written.

One character breaks the marks: the combining ypogegrammeni (U+0345) is not a word
character, yet the regex matches it with ι, which is one. Keywords that hold one of that
case class are also searched without marks, with explicit boundary checks (`_Checked`), for
the messages where it matters (those with a U+0345, or keywords with one).

Keywords nested in one another can make the automaton report many occurrences at each
place ("a", "a a", "a a a", … on "a a a …"). Past a number of reports linear in the message,
the keywords still unresolved are looked up one by one (`str.find`, linear as well).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from re import _casefix  # type: ignore[attr-defined]  # the engine's own extra case pairs
from typing import Any

import ahocorasick  # type: ignore[import-not-found]  # no type stubs

from routing_core.text import is_word_char

Span = tuple[int, int]
Found = dict[int, Span]  # keyword index -> its leftmost span in the message

_WORD_RUN = re.compile(r"\w+")  # the regex engine's own \w: the boundary the patterns use
_SPACE_RUN = re.compile(r"\s+")
_ODD_SPACE = re.compile(r"[^\S ]| {2}")  # whitespace other than one plain space
_EXTRA_CASES: Mapping[int, tuple[int, ...]] = _casefix._EXTRA_CASES
# Never in a folded text: every cased character folds to its lower-case class (a test checks
# all of Unicode).
_OPEN, _CLOSE = "A", "B"
_MARKS = _OPEN + _CLOSE
_YPOGEGRAMMENI = "\u0345"
_IOTA = frozenset("\u0345\u0399\u03b9\u1fbe")  # the class whose members differ in word-ness
_FOLD_CACHE = 65_536  # distinct characters whose fold is kept
_REPORTS_PER_CHAR = 1  # automaton reports per view character before the one-by-one lookups


class _FoldTable(dict[int, int]):
    """`str.translate` table: a character to its case class's representative, filled lazily."""

    def __missing__(self, code: int) -> int:
        folded = ord(_fold(chr(code)))
        if len(self) < _FOLD_CACHE:
            self[code] = folded
        return folded


def _fold(char: str) -> str:
    """The representative of `char`'s class under `re.IGNORECASE` (a single character).

    A word character's representative is a word character (ι for the iota class, whose
    U+0345 is not one), so word runs can be found on the folded text.
    """
    lower = char.lower()[:1] or char  # "İ".lower() is "i̇": the engine's simple lowercase is "i"
    extra = _EXTRA_CASES.get(ord(lower))
    if not extra:
        return lower
    rep = chr(min(ord(lower), *extra))
    return "\u03b9" if rep == _YPOGEGRAMMENI else rep


_FOLD = _FoldTable()


class _View:
    """A text as the automaton reads it: folded, each whitespace run one space, and (marked)
    each word run between `_OPEN` and `_CLOSE`. Positions map back to the text on demand."""

    def __init__(self, text: str, *, marked: bool) -> None:
        # ASCII folds as lower() does (its extra pairs, s/ſ, k/K, i/ı, all fold to ASCII).
        folded = text.lower() if text.isascii() else text.translate(_FOLD)
        # Each longer whitespace run: where its one space stands, and the characters removed
        # up to its end (what a later position of the collapsed text adds back).
        self._spaces: list[int] = []
        self._removed: list[int] = []
        if _ODD_SPACE.search(folded):
            removed = 0
            for run in _SPACE_RUN.finditer(folded):
                if run.end() - run.start() > 1:
                    self._spaces.append(run.start() - removed)
                    removed += run.end() - run.start() - 1
                    self._removed.append(removed)
            folded = _SPACE_RUN.sub(" ", folded)
        self.text = _WORD_RUN.sub(_OPEN + r"\g<0>" + _CLOSE, folded) if marked else folded
        self._marked = marked

    def spans(self, raw: Mapping[int, tuple[int, int]]) -> Found:
        """Each (first, last) view position of a match's first and last characters (marks
        excluded) as the match's span in the text."""
        wanted = sorted({p for first_last in raw.values() for p in first_last})
        original: dict[int, int] = {}
        marks, at = 0, 0
        for position in wanted:
            if self._marked:
                marks += sum(self.text.count(m, at, position) for m in _MARKS)
                at = position
            original[position] = self._uncollapsed(position - marks)
        return {i: (original[first], original[last] + 1) for i, (first, last) in raw.items()}

    def _uncollapsed(self, position: int) -> int:
        """A position of the collapsed text as a position of the text."""
        before = bisect.bisect_left(self._spaces, position)  # runs whose space is before it
        return position + (self._removed[before - 1] if before else 0)


class _Goal:
    """What a caller needs from a scan: every keyword's leftmost span unless narrowed.

    A match is recorded as its view and the view positions of its first and last characters;
    `spans()` turns them into spans of the message once the scan is over.
    """

    def __init__(self, indexes: Sequence[int]) -> None:
        self.found: dict[int, tuple[_View, int, int]] = {}
        self._left = len(indexes)

    def wants(self, index: int) -> bool:
        """Is `index`'s span still worth finding? (Called for every report: O(1).)"""
        return index not in self.found

    def add(self, index: int, view: _View, first: int, last: int) -> None:
        self.found[index] = (view, first, last)
        self._left -= 1

    def done(self) -> bool:
        """Nothing more to find. (Called only when something was found.)"""
        return self._left == 0

    def spans(self) -> Found:
        by_view: dict[int, tuple[_View, dict[int, tuple[int, int]]]] = {}
        for index, (view, first, last) in self.found.items():
            by_view.setdefault(id(view), (view, {}))[1][index] = (first, last)
        return {i: span for view, raw in by_view.values() for i, span in view.spans(raw).items()}


class _Any(_Goal):
    def done(self) -> bool:
        return bool(self.found)


class _First(_Goal):
    """The first declared keyword that occurs: only keywords before the best so far count."""

    def __init__(self, indexes: Sequence[int]) -> None:
        super().__init__(indexes)
        self._best = max(indexes) + 1 if indexes else 0
        self._first = indexes[0] if indexes else 0

    def wants(self, index: int) -> bool:
        return index < self._best

    def add(self, index: int, view: _View, first: int, last: int) -> None:
        super().add(index, view, first, last)
        self._best = min(self._best, index)

    def done(self) -> bool:
        return self._best == self._first


class _Groups(_Goal):
    """Keywords by group: once a group has one, its other keywords no longer count."""

    def __init__(self, indexes: Sequence[int], owner: Sequence[int]) -> None:
        super().__init__(indexes)
        self._owner = owner
        self.groups: set[int] = set()
        self._possible = len({owner[i] for i in indexes})

    def wants(self, index: int) -> bool:
        return self._owner[index] not in self.groups

    def add(self, index: int, view: _View, first: int, last: int) -> None:
        super().add(index, view, first, last)
        self.groups.add(self._owner[index])

    def done(self) -> bool:
        return len(self.groups) == self._possible


class _Marked:
    """Keywords with their word marks in one automaton: every report is a real match."""

    def __init__(self, keywords: Mapping[int, str]) -> None:
        self.keys = {i: _View(k, marked=True).text for i, k in keywords.items()}
        # Stands in for U+0345 in a message (see the module's docstring): not a word character
        # (so it ends a word as U+0345 does) and in no keyword (so it matches nothing, as U+0345
        # matches no keyword here).
        self._stand_in = next(c for c in map(chr, range(1, 0x110000)) if _stands_in(c, keywords))
        by_key: dict[str, list[int]] = {}
        for index, key in self.keys.items():
            by_key.setdefault(key, []).append(index)
        self._automaton: Any = ahocorasick.Automaton()
        for key, indexes in by_key.items():
            self._automaton.add_word(key, (len(key), tuple(indexes)))
        if by_key:
            self._automaton.make_automaton()

    def scan(self, message: str, goal: _Goal, skip: frozenset[int] = frozenset()) -> None:
        """Give `goal` the leftmost match of each keyword (but `skip`) it wants."""
        if not self.keys:
            return
        view = _View(message.replace(_YPOGEGRAMMENI, self._stand_in), marked=True)
        budget = _REPORTS_PER_CHAR * len(view.text) + 64
        for last, (size, indexes) in self._automaton.iter(view.text):
            for index in indexes:
                if goal.wants(index) and index not in skip:
                    goal.add(index, view, *_inner(view.text, last - size + 1, last))
                    if goal.done():
                        return
            budget -= len(indexes)
            if budget < 0:
                return self._one_by_one(view, goal, skip)

    def _one_by_one(self, view: _View, goal: _Goal, skip: frozenset[int]) -> None:
        """Too many reports (nested keywords): each keyword still wanted, found on its own."""
        for index, key in self.keys.items():
            if goal.wants(index) and index not in skip:
                at = view.text.find(key)
                if at >= 0:
                    goal.add(index, view, *_inner(view.text, at, at + len(key) - 1))
                    if goal.done():
                        return


def _stands_in(char: str, keywords: Mapping[int, str]) -> bool:
    return (
        not is_word_char(char)
        and not char.isspace()
        and _fold(char) == char
        and char not in _MARKS
        and not any(char in k for k in keywords.values())
    )


def _inner(text: str, first: int, last: int) -> tuple[int, int]:
    """A match's first and last view positions without the marks around its words."""
    return first + (text[first] == _OPEN), last - (text[last] == _CLOSE)


class _Checked:
    """Keywords without marks, each report checked for its word boundaries on the message."""

    def __init__(self, keywords: Mapping[int, str]) -> None:
        self._automaton: Any = ahocorasick.Automaton()
        by_key: dict[str, list[tuple[int, bool, bool]]] = {}
        for index, keyword in keywords.items():
            edges = (index, is_word_char(keyword[0]), is_word_char(keyword[-1]))
            by_key.setdefault(_View(keyword, marked=False).text, []).append(edges)
        for key, entries in by_key.items():
            self._automaton.add_word(key, (len(key), tuple(entries)))
        self._empty = not by_key
        if by_key:
            self._automaton.make_automaton()

    def scan(self, message: str, goal: _Goal, only: frozenset[int]) -> None:
        """Give `goal` the leftmost match of each keyword of `only` it wants."""
        if self._empty or not only:
            return
        view = _View(message, marked=False)
        for last, (size, entries) in self._automaton.iter(view.text):
            for index, head, tail in entries:
                if index not in only or not goal.wants(index):
                    continue
                first = last - size + 1
                (start, end), *_ = view.spans({0: (first, last)}).values()
                if head and start > 0 and is_word_char(message[start - 1]):
                    continue
                if tail and end < len(message) and is_word_char(message[end]):
                    continue
                goal.add(index, view, first, last)
                if goal.done():
                    return


class KeywordMatcher:
    """Finds which of `keywords` occur in a message, each at its leftmost place.

    Args:
        keywords: in declaration order; blank ones never match (as `compile_keywords` skips
            them), and indexes count every keyword given.
    """

    def __init__(self, keywords: Sequence[str]) -> None:
        self.keywords = tuple(keywords)
        stripped = {i: k.strip() for i, k in enumerate(self.keywords) if k.strip()}
        self.indexes = tuple(stripped)
        self._iota = frozenset(i for i, k in stripped.items() if _IOTA & set(k))
        self._always_checked = frozenset(i for i, k in stripped.items() if _YPOGEGRAMMENI in k)
        marked = {i: k for i, k in stripped.items() if i not in self._always_checked}
        self._marked = _Marked(marked)
        self._checked = _Checked({i: stripped[i] for i in self._iota})

    def leftmost(self, message: str) -> Found:
        """Each keyword that occurs -> its leftmost span."""
        return self._scan(message, _Goal(self.indexes))

    def search(self, message: str) -> bool:
        """Does any keyword occur?"""
        return bool(self._scan(message, _Any(self.indexes)))

    def first_declared(self, message: str) -> tuple[str, Span] | None:
        """The first keyword in declaration order that occurs, with its leftmost span."""
        found = self._scan(message, _First(self.indexes))
        if not found:
            return None
        first = min(found)
        return self.keywords[first], found[first]

    def _scan(self, message: str, goal: _Goal) -> Found:
        if not self.indexes:
            return {}
        if _YPOGEGRAMMENI in message:  # its marks would differ from ι's: see the docstring
            self._marked.scan(message, goal, skip=self._iota)
            if not goal.done():
                self._checked.scan(message, goal, self._iota)
        else:
            self._marked.scan(message, goal)
            if not goal.done():
                self._checked.scan(message, goal, self._always_checked)
        return goal.spans()


class KeywordGroups:
    """Which groups (tools) have a keyword in a message, all groups in one pass.

    Args:
        groups: group name -> its keywords; a group with no keyword that can match is never
            reported.
    """

    def __init__(self, groups: Mapping[str, Sequence[str]]) -> None:
        self._names = list(groups)
        self._owner = [g for g, words in enumerate(groups.values()) for _ in words]
        self._matcher = KeywordMatcher([w for words in groups.values() for w in words])

    def matches(self, message: str) -> tuple[str, ...]:
        """Names of the groups with a keyword in `message`, in the groups' order."""
        if not self._names:  # a pack without tools: every turn asks
            return ()
        goal = _Groups(self._matcher.indexes, self._owner)
        if self._matcher.indexes:
            self._matcher._scan(message, goal)
        return tuple(name for g, name in enumerate(self._names) if g in goal.groups)
