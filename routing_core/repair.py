"""The smallest edit that makes a failing test case pass without failing another one.

Found by trying, not by asking: each candidate edit (add a keyword to the expected route,
add the message as one of its examples, move the closest example over from the route that
won) is applied to a copy of the pack, and the whole suite is run on it. The first
candidate, in order of size, that fixes the case and breaks no case that passed is the
answer. A language model may propose extra wording (keywords) to try; it never decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from routing_core.cases import Case
from routing_core.evaluate import CaseResult, evaluate
from routing_core.pack import Pack, Route
from routing_core.router import Router
from routing_core.scorers._terms import STOP_WORDS
from routing_core.text import words

EditKind = Literal["add_keyword", "add_example", "move_example"]
MAX_CANDIDATES = 24


@dataclass(frozen=True)
class Edit:
    """One change to one route."""

    kind: EditKind
    route: str
    text: str
    source: str | None = None  # the route a moved example leaves

    def describe(self) -> str:
        if self.kind == "add_keyword":
            return f"add the keyword “{self.text}” to {self.route}"
        if self.kind == "add_example":
            return f"add “{self.text}” as an example of {self.route}"
        return f"move the example “{self.text}” from {self.source} to {self.route}"


@dataclass(frozen=True)
class Attempt:
    """A candidate that was tried, and the cases it would break (or that it did not help)."""

    edit: Edit
    fixes: bool
    breaks: tuple[str, ...]


@dataclass(frozen=True)
class RepairReport:
    """The fix (None when no candidate works), every attempt, and why there was none."""

    case: Case
    fix: Edit | None
    attempts: tuple[Attempt, ...] = ()
    reason: str = ""
    pack: Pack | None = field(default=None, repr=False)  # the pack with the fix applied


def find_repair(
    pack: Pack, cases: Sequence[Case], failing: int, *, wording: Sequence[str] = ()
) -> RepairReport:
    """The smallest edit that makes `cases[failing]` pass and keeps every passing case passing.

    Args:
        wording: extra keywords to try for the expected route (e.g. from a language model).
    """
    case = cases[failing]
    baseline = evaluate(Router(pack), cases).results
    if not baseline[failing].failures:
        return RepairReport(case, None, reason="the case already passes")
    if case.expected is None or case.expected not in pack.route_names:
        return RepairReport(
            case, None, reason="only a case expecting one of the routes can be fixed by an edit"
        )
    passing = {i for i, r in enumerate(baseline) if not r.failures}
    attempts = []
    for edit in candidates(pack, case, baseline[failing], wording)[:MAX_CANDIDATES]:
        attempt, edited = _try(pack, cases, failing, passing, edit)
        attempts.append(attempt)
        if attempt.fixes and not attempt.breaks:
            return RepairReport(case, edit, tuple(attempts), pack=edited)
    return RepairReport(
        case, None, tuple(attempts), reason="no single edit fixes it without breaking another"
    )


def check_edit(pack: Pack, cases: Sequence[Case], failing: int, edit: Edit) -> Attempt:
    """Whether `edit` still fixes `cases[failing]` without breaking a case that passes now."""
    baseline = evaluate(Router(pack), cases).results
    passing = {i for i, r in enumerate(baseline) if not r.failures}
    return _try(pack, cases, failing, passing, edit)[0]


def _try(
    pack: Pack, cases: Sequence[Case], failing: int, passing: set[int], edit: Edit
) -> tuple[Attempt, Pack]:
    edited = apply_edit(pack, edit)
    results = evaluate(Router(edited), cases).results
    breaks = tuple(cases[i].text for i in sorted(passing) if results[i].failures)
    return Attempt(edit, not results[failing].failures, breaks), edited


def candidates(
    pack: Pack, case: Case, result: CaseResult, wording: Sequence[str] = ()
) -> list[Edit]:
    """Candidate edits, smallest first: keywords, then the message itself, then a moved example."""
    if case.expected is None:
        return []
    target = _route(pack, case.expected)
    known = {k.lower() for k in target.keywords}
    content = [w for w in dict.fromkeys(words(case.text)) if w not in STOP_WORDS and len(w) > 2]
    keywords = [*wording, *content]
    edits = [
        Edit("add_keyword", target.name, k)
        for k in dict.fromkeys(k.strip() for k in keywords)
        if k and k.lower() not in known and k.lower() in case.text.lower()
    ]
    if case.text.strip() not in target.examples:
        edits.append(Edit("add_example", target.name, " ".join(case.text.split())))
    winner = result.decision.route
    if winner and winner != target.name:
        edits += [
            Edit("move_example", target.name, e, winner) for e in _closest(pack, winner, case.text)
        ]
    return edits


def _closest(pack: Pack, route: str, text: str, limit: int = 3) -> list[str]:
    """The route's examples that share the most content words with the message."""
    mine = {w for w in words(text) if w not in STOP_WORDS}
    shared = [(len(mine & set(words(e))), e) for e in _route(pack, route).examples]
    return [e for n, e in sorted(shared, key=lambda p: -p[0]) if n][:limit]


def apply_edit(pack: Pack, edit: Edit) -> Pack:
    """A copy of the pack with the edit made (validated again: the result must be a pack)."""
    from routing_core.codec import load_pack

    routes = []
    for route in pack.routes:
        if route.name == edit.route:
            route = _add(route, edit)
        elif route.name == edit.source:
            route = route.model_copy(
                update={"examples": tuple(e for e in route.examples if e != edit.text)}
            )
        routes.append(route)
    document = pack.model_dump(mode="json")
    document["routes"] = [r.model_dump(mode="json") for r in routes]
    document["scorer"] = (
        {"kind": "lexical"} if pack.scorer.kind == "lexical" else document["scorer"]
    )
    return load_pack(document)


def _add(route: Route, edit: Edit) -> Route:
    if edit.kind == "add_keyword":
        return route.model_copy(update={"keywords": (*route.keywords, edit.text)})
    return route.model_copy(update={"examples": (*route.examples, edit.text)})


def _route(pack: Pack, name: str) -> Route:
    return next(r for r in pack.routes if r.name == name)
