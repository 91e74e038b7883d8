"""Refuse regexes that can backtrack catastrophically, before they reach an agent.

Three shapes cause nearly all exponential (or high-polynomial) backtracking in practice:
a repeat nested inside another repeat (`(\\w+\\s?)*`, `(.*a){20}`), an alternation
under an unbounded repeat whose branches can match the same text (`(a|aa)+`), and
unbounded repeats in a row that can match the same characters (`\\d*\\d*\\d*\\D\\d`: each
split of a run of digits between them is tried, n^k ways for k repeats). All are refused
with a reason a person can act on. Alternations whose branches start with
distinct literal characters (`(?:foo|bar)+`) cannot overlap and are allowed. What this
check cannot see is bounded at run time by the turn's regex budget (`routing_core.text`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

# The stdlib's own regex parser (re._parser since Python 3.11): the check reads the same
# tree `re` compiles, so it cannot disagree with the syntax check.
sre_parse: Any = importlib.import_module("re._parser")
sre_compile: Any = importlib.import_module("re._compiler")

_REPEATS = {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"}
# A repeat allowing more than this many rounds counts as unbounded.
_UNBOUNDED = 64


def catastrophic_reason(pattern: str) -> str | None:
    """Why `pattern` may backtrack catastrophically, or None when it looks safe."""
    try:
        parsed = sre_parse.parse(pattern)
    except Exception:  # noqa: BLE001 - syntax is judged elsewhere; nothing to check here
        return None
    reason = _walk(list(parsed), inside_repeat=False, under_unbounded=False)
    return reason or next(
        (r for seq in _sequences(list(parsed)) if (r := _adjacent_reason(seq, parsed.state))), None
    )


def _sequences(items: list[Any]) -> Iterator[list[Any]]:
    """`items` and every sequence nested in it (repeat bodies, groups, branches, lookarounds)."""
    yield items
    for op, arg in items:
        name = str(op)
        if name in _REPEATS:
            children = [arg[2]]
        elif name == "BRANCH":
            children = list(arg[1])
        else:
            children = _group_children(name, arg)
        for child in children:
            yield from _sequences(list(child))


def _group_children(name: str, arg: Any) -> list[Any]:
    """The sequences inside a group, a lookaround or a conditional (none for other nodes)."""
    if name == "SUBPATTERN":
        return [arg[3]]
    if name in ("ASSERT", "ASSERT_NOT"):
        return [arg[1]]
    if name == "ATOMIC_GROUP":
        return [arg]
    if name == "GROUPREF_EXISTS":
        return [c for c in arg[1:] if c is not None]
    return []


def _walk(items: list[Any], *, inside_repeat: bool, under_unbounded: bool) -> str | None:
    for op, arg in items:
        name = str(op)
        if name in _REPEATS:
            low, high, body = arg
            unbounded = high > _UNBOUNDED
            if inside_repeat and high > 1 and unbounded:
                return (
                    "a repeat nested inside another repeat can backtrack catastrophically; "
                    "bound the inner one (e.g. {1,20}) or rewrite without nesting"
                )
            reason = _walk(
                list(body),
                inside_repeat=inside_repeat or high > 1,
                under_unbounded=under_unbounded or unbounded,
            )
        elif name == "BRANCH":
            if under_unbounded and not _disjoint(arg[1]):
                return (
                    "alternatives that can match the same text under '+' or '*' can "
                    "backtrack catastrophically; make them start differently or bound the repeat"
                )
            reason = next(
                (
                    r
                    for b in arg[1]
                    if (
                        r := _walk(
                            list(b), inside_repeat=inside_repeat, under_unbounded=under_unbounded
                        )
                    )
                ),
                None,
            )
        else:
            reason = _walk_children(name, arg, inside_repeat, under_unbounded)
        if reason:
            return reason
    return None


def _walk_children(name: str, arg: Any, inside_repeat: bool, under_unbounded: bool) -> str | None:
    for child in _group_children(name, arg):
        reason = _walk(list(child), inside_repeat=inside_repeat, under_unbounded=under_unbounded)
        if reason:
            return reason
    return None


def _disjoint(branches: list[Any]) -> bool:
    """Every branch starts with a literal character, and no two with the same one."""
    firsts = []
    for branch in branches:
        items = list(branch)
        if not items or str(items[0][0]) != "LITERAL":
            return False
        firsts.append(items[0][1])
    return len(firsts) == len(set(firsts))


# Characters an atom is tested on to see whether two atoms can match the same character.
_PROBES = [chr(c) for c in range(128)] + list(
    "\u00a0\u00e9\u00df\u0416\u4e2d\u0663\u2028\U0001f600"
)


# What each one-character atom matches, by its parsed form and flags: compiling an atom and
# trying every probe costs ~40 µs, and the longest patterns repeat few distinct atoms, so
# validating a pack of the longest regexes stays milliseconds each (docs/pack-format.md,
# Limits). Bounded, so that no stream of patterns grows it without end.
_ATOMS: dict[tuple[str, int], frozenset[str]] = {}
_MAX_ATOMS = 4096


def _adjacent_reason(items: list[Any], state: Any) -> str | None:
    """Unbounded repeats of one character in a row that overlap (`\\d*\\d*`, `\\w+1\\d+`).

    Between two such repeats only optional items or single characters both could match
    may stand; anything else ends the run, so `\\d+-\\d+` and `\\w+\\s+\\w+` stay allowed.
    """
    open_set: frozenset[str] | None = None
    for op, arg in items:
        name = str(op)
        if name in _REPEATS and arg[1] > _UNBOUNDED:
            chars = _single_chars(list(arg[2]), state)
            if chars is not None and open_set is not None and chars & open_set:
                return (
                    "repeats in a row that can match the same characters (like \\d*\\d*) make "
                    "the search slow on long text; merge them into one"
                )
            open_set = chars
        elif name in _REPEATS and arg[0] == 0:
            continue  # an optional item can match nothing: the run goes on
        elif open_set is not None:  # only an open run needs to know what this item matches
            chars = _single_chars([(op, arg)], state)
            if chars is None or not chars & open_set:
                open_set = None
    return None


def _single_chars(items: list[Any], state: Any) -> frozenset[str] | None:
    """The probe characters a one-character body matches, or None when it is not one character."""
    while len(items) == 1 and str(items[0][0]) == "SUBPATTERN":
        items = list(items[0][1][3])
    if len(items) != 1 or str(items[0][0]) not in ("LITERAL", "NOT_LITERAL", "IN", "ANY"):
        return None
    key = (repr(items[0]), state.flags)
    found = _ATOMS.get(key)
    if found is None:
        compiled = sre_compile.compile(sre_parse.SubPattern(state, items), state.flags)
        found = frozenset(c for c in _PROBES if compiled.fullmatch(c))
        if len(_ATOMS) < _MAX_ATOMS:
            _ATOMS[key] = found
    return found
