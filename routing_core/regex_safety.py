"""Refuse regexes that can backtrack catastrophically, before they reach an agent.

Two shapes cause nearly all exponential (or high-polynomial) backtracking in practice:
a repeat nested inside another repeat (`(\\w+\\s?)*`, `(.*a){20}`), and an alternation
under an unbounded repeat whose branches can match the same text (`(a|aa)+`). Both are
refused with a reason a person can act on. Alternations whose branches start with
distinct literal characters (`(?:foo|bar)+`) cannot overlap and are allowed. What this
check cannot see is bounded at run time by a timeout (see `routing_core.text`).
"""

from __future__ import annotations

import importlib
from typing import Any

# The stdlib's own regex parser (re._parser since Python 3.11): the check reads the same
# tree `re` compiles, so it cannot disagree with the syntax check.
sre_parse: Any = importlib.import_module("re._parser")

_REPEATS = {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"}
# A repeat allowing more than this many rounds counts as unbounded.
_UNBOUNDED = 64


def catastrophic_reason(pattern: str) -> str | None:
    """Why `pattern` may backtrack catastrophically, or None when it looks safe."""
    try:
        parsed = sre_parse.parse(pattern)
    except Exception:  # noqa: BLE001 - syntax is judged elsewhere; nothing to check here
        return None
    return _walk(list(parsed), inside_repeat=False, under_unbounded=False)


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
    children: list[Any] = []
    if name == "SUBPATTERN":
        children = [arg[3]]
    elif name in ("ASSERT", "ASSERT_NOT"):
        children = [arg[1]]
    elif name == "ATOMIC_GROUP":
        children = [arg]
    elif name == "GROUPREF_EXISTS":
        children = [c for c in arg[1:] if c is not None]
    for child in children:
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
