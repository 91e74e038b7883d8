"""The smallest edit that makes a failing test case pass without failing another one.

Found by trying, not by asking: each candidate edit is applied to a copy of the pack and the
whole suite is run on it. The first candidate, in order of size, that fixes the case and
breaks no case that passed is the answer. A language model may propose extra wording
(keywords) to try; it never decides.

An edit that copies the case's own message into what the scorer learns from (the message
as an example, an out-of-scope example or a whole-message keyword) is tried last: the case
would then pass because it is a training example, and test nothing any more. When only such
an edit works, the report says so (`RepairReport.copies_case`, `RepairReport.warning`).

The candidates follow what the case missed (`CaseResult.failures`):
- a route expected, another route / a menu / unmatched came out: a keyword from the message
  or the message itself for the expected route, or the closest example of the route that
  competed with it moved over;
- unmatched expected, a route came out: the message as an out-of-scope example, or a keyword
  of the route that took it removed (when that keyword is in the message);
- a verdict expected: a decisive move or stay where a menu came out, the near-tie margin
  lowered to this turn's gap (and the route edits); a menu where a decisive turn came out,
  the margin raised just past its gap; unmatched, the out-of-scope edits. A case expecting
  a menu must name a route the menu offers (`evaluate`), so one without is told so;
- a triage label expected: a word of the message added to the lexicon of that label, or a
  word that fired for the wrong label removed from its lexicon;
- tools expected kept or dropped: a word of the message added to the tool's trigger
  keywords, or a trigger keyword in the message removed.
At most `MAX_CANDIDATES` are tried, so a big suite stays a job-sized task.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from routing_core.cases import Case
from routing_core.errors import PackError
from routing_core.evaluate import CaseResult, Progress, evaluate, run_case
from routing_core.keywords import KeywordMatcher
from routing_core.pack import Pack, Route
from routing_core.repair_edits import EDIT_KINDS, ROUTE_KINDS, Edit, EditKind, apply_edit, lexicon
from routing_core.router import Router
from routing_core.scorers import _model
from routing_core.scorers._terms import STOP_WORDS
from routing_core.text import words

__all__ = [
    "EDIT_KINDS",
    "MAX_CANDIDATES",
    "ROUTE_KINDS",
    "Attempt",
    "Edit",
    "EditKind",
    "Progress",
    "RepairReport",
    "apply_edit",
    "candidates",
    "check_edit",
    "copies_case",
    "copy_warning",
    "find_repair",
    "lexicon",
]

MAX_CANDIDATES = 24
# Called as progress(tried, to_try) before the first candidate and after each one (a job's
# page shows "candidate 3 of 12"); whatever it raises stops the search (a cancel).
_PER_LIST = 4  # words tried from the message per lexicon or tool
_QUOTED = 3  # broken cases named in one explanation
# Kinds that put a text where the scorer learns from it: a copy of the case's own message
# there makes the case pass by memory.
_LEARNED_TEXT = frozenset({"add_keyword", "add_example", "move_example", "add_out_of_scope"})


@dataclass(frozen=True)
class Attempt:
    """A candidate that was tried: did it fix the case, which passing cases it breaks, and
    what the case still missed when it did not fix it (then `breaks` is not looked for:
    the whole suite runs only for an edit that fixes the case)."""

    edit: Edit
    fixes: bool
    breaks: tuple[str, ...]
    still: tuple[str, ...] = ()

    def explain(self) -> str:
        """What happened, in a sentence: "adding … fixed it but made ‘…’ fail"."""
        doing = self.edit.doing()
        if self.fixes and not self.breaks:
            return f"{doing} fixes it and keeps every other case passing"
        if self.fixes:
            named = ", ".join(f"‘{text}’" for text in self.breaks[:_QUOTED])
            more = len(self.breaks) - _QUOTED
            named += f" and {more} more" if more > 0 else ""
            return f"{doing} fixed it but made {named} fail"
        why = f" (still {self.still[0]})" if self.still else ""
        return f"{doing} did not fix it{why}"


@dataclass(frozen=True)
class RepairReport:
    """The fix (None when no candidate works), every attempt, and why there was none."""

    case: Case
    fix: Edit | None
    attempts: tuple[Attempt, ...] = ()
    reason: str = ""
    pack: Pack | None = field(default=None, repr=False)  # the pack with the fix applied
    misses: tuple[str, ...] = ()  # what the case missed before any edit

    @property
    def explanations(self) -> list[str]:
        """Every attempt in plain words, in the order they were tried."""
        return [attempt.explain() for attempt in self.attempts]

    @property
    def copies_case(self) -> bool:
        """The fix makes the case's own message a training (or out-of-scope) example."""
        return self.fix is not None and copies_case(self.fix, self.case)

    @property
    def warning(self) -> str:
        """What a person must know before applying a fix that copies the case, else ""."""
        return copy_warning(self.fix, self.case) if self.fix is not None else ""


def copies_case(edit: Edit, case: Case) -> bool:
    """Whether the edit teaches the scorer the case's own message (whitespace and case aside).

    A case whose message is a training text passes by memory: it no longer tells whether
    the route is learned from other wording.
    """
    return edit.kind in _LEARNED_TEXT and _same(edit.text, case.text)


def copy_warning(edit: Edit, case: Case) -> str:
    """The plain sentence shown beside a fix that copies the case, or "" for any other."""
    if not copies_case(edit, case):
        return ""
    where = "an out-of-scope example" if edit.kind == "add_out_of_scope" else "a training example"
    return (
        f"This edit makes the test's own message {where}: the case will pass because it is "
        "now learned word for word, so it no longer proves anything. No edit that leaves the "
        "message out of the training worked; if you apply it, write a new test case in other "
        "words."
    )


def _same(one: str, other: str) -> bool:
    return " ".join(one.lower().split()) == " ".join(other.lower().split())


def find_repair(
    pack: Pack,
    cases: Sequence[Case],
    failing: int,
    *,
    wording: Sequence[str] = (),
    progress: Progress | None = None,
) -> RepairReport:
    """The smallest edit that makes `cases[failing]` pass and keeps every passing case passing.

    Args:
        wording: extra keywords to try for the expected route (e.g. from a language model).
        progress: told `(tried, to_try)` before the first candidate and after each one, since
            one candidate can take seconds on a big suite; what it raises propagates.
    """
    case = cases[failing]
    baseline = evaluate(Router(pack), cases).results
    if not baseline[failing].failures:
        return RepairReport(case, None, reason="the case already passes")
    if case.expected is not None and case.expected not in pack.route_names:
        return RepairReport(
            case, None, reason=f"the expected route {case.expected} is not a route of the pack"
        )
    if case.expected_verdict == "menu" and case.expected is None:
        # no route expected means unmatched, which no menu is: the case contradicts itself
        return RepairReport(
            case,
            None,
            reason="a case expecting a menu must name a route the menu offers: give it one",
        )
    misses = tuple(baseline[failing].failures)
    tried = _within_budget(candidates(pack, case, baseline[failing], wording), case)
    if not tried:
        return RepairReport(
            case, None, reason="no edit of the pack could change this", misses=misses
        )
    passing = {i for i, r in enumerate(baseline) if not r.failures}
    attempts = []
    if progress is not None:
        progress(0, len(tried))
    # Every candidate is the pack with one small edit: a pack of 100-199 texts learns each on
    # the schedule the first candidate chose, at its thresholds (`_model.one_schedule`, as
    # the overlap checkup does), where fitting them again would cost five to ten fold models a
    # candidate.
    with _model.one_schedule():
        for edit in tried:
            attempt, edited = _try(pack, cases, failing, passing, edit)
            attempts.append(attempt)
            if progress is not None:
                progress(len(attempts), len(tried))
            if attempt.fixes and not attempt.breaks:
                return RepairReport(case, edit, tuple(attempts), pack=edited, misses=misses)
    reason = "no single edit fixes it without breaking another"
    return RepairReport(case, None, tuple(attempts), reason=reason, misses=misses)


def _within_budget(edits: list[Edit], case: Case) -> list[Edit]:
    """At most `MAX_CANDIDATES`, keeping the copies of the case (tried last, never cut off:
    they are the answer when nothing else works)."""
    copies = [e for e in edits if copies_case(e, case)]
    others = [e for e in edits if not copies_case(e, case)]
    return others[: max(0, MAX_CANDIDATES - len(copies))] + copies[:MAX_CANDIDATES]


def check_edit(pack: Pack, cases: Sequence[Case], failing: int, edit: Edit) -> Attempt:
    """Whether `edit` still fixes `cases[failing]` without breaking a case that passes now.

    Raises:
        PackError: the edit does not give a valid pack.
    """
    baseline = evaluate(Router(pack), cases).results
    passing = {i for i, r in enumerate(baseline) if not r.failures}
    return _try(pack, cases, failing, passing, edit)[0]


def _try(
    pack: Pack, cases: Sequence[Case], failing: int, passing: set[int], edit: Edit
) -> tuple[Attempt, Pack | None]:
    try:
        edited = apply_edit(pack, edit)
    except PackError as exc:
        return Attempt(edit, False, (), (f"the pack refuses it: {exc}",)), None
    router, case = Router(edited), cases[failing]
    if case.conversation is None:  # a lone turn: its own result needs no other case
        alone = run_case(router, case, case.incumbent).failures
        if alone:
            return Attempt(edit, False, (), tuple(alone)), edited
    results = evaluate(router, cases).results
    breaks = tuple(cases[i].text for i in sorted(passing) if results[i].failures)
    still = tuple(results[failing].failures)
    return Attempt(edit, not still, breaks, still), edited


def candidates(
    pack: Pack, case: Case, result: CaseResult, wording: Sequence[str] = ()
) -> list[Edit]:
    """Candidate edits for what the case missed, smallest first within each kind of miss,
    and those that copy the case's message into the training last (`copies_case`)."""
    d = result.decision
    edits: list[Edit] = []
    if not result.route_ok:
        edits += _route_edits(pack, case, result, wording)
    if case.expected_verdict and d.verdict != case.expected_verdict:
        edits += _verdict_edits(pack, case, result)
    label = d.triage.label if d.triage else None
    if case.expected_triage and label != case.expected_triage:
        edits += _triage_edits(pack, case, result)
    edits += _tool_edits(pack, case, result)
    unique = list(dict.fromkeys(edits))
    return [e for e in unique if not copies_case(e, case)] + [
        e for e in unique if copies_case(e, case)
    ]


# -- the route -------------------------------------------------------------------------------------


def _route_edits(pack: Pack, case: Case, result: CaseResult, wording: Sequence[str]) -> list[Edit]:
    if case.expected is None:
        return _out_of_scope_edits(pack, case, result)
    target = _route(pack, case.expected)
    known = {k.lower() for k in target.keywords}
    keywords = [*wording, *_content(case.text)]
    edits = [
        Edit("add_keyword", target.name, k)
        for k in dict.fromkeys(k.strip() for k in keywords)
        if k and k.lower() not in known and k.lower() in case.text.lower()
    ]
    if " ".join(case.text.split()) not in target.examples:
        edits.append(Edit("add_example", target.name, " ".join(case.text.split())))
    rival = _rival(result, target.name)
    if rival is not None:
        edits += [
            Edit("move_example", target.name, e, rival) for e in _closest(pack, rival, case.text)
        ]
    return edits


def _rival(result: CaseResult, target: str) -> str | None:
    """The route that competed with the expected one: the one taken, else the best offered
    or ranked other route (a menu or an unmatched turn)."""
    d = result.decision
    if d.route and d.route != target:
        return d.route
    ranked = [o for o in d.offered if o != target] + [
        r.route for r in d.ranked if r.route != target and math.isfinite(r.score)
    ]
    return ranked[0] if ranked else None


def _out_of_scope_edits(pack: Pack, case: Case, result: CaseResult) -> list[Edit]:
    """A message that belongs to no route: learn it as such, or unhook the keyword of the
    route that took it (or of a route on the menu)."""
    text = " ".join(case.text.split())
    edits = [] if text in pack.out_of_scope else [Edit("add_out_of_scope", "", text)]
    d = result.decision
    for taken in (d.route,) if d.route else d.offered:  # the route that took it, or the menu
        edits += [
            Edit("remove_keyword", taken, k)
            for k in _route(pack, taken).keywords
            if _occurs(k, case.text)
        ]
    return edits


# -- the verdict -----------------------------------------------------------------------------------


def _verdict_edits(pack: Pack, case: Case, result: CaseResult) -> list[Edit]:
    d, wanted = result.decision, case.expected_verdict
    if wanted == "unmatched":
        return _out_of_scope_edits(pack, case, result)
    edits = []
    gap = d.runner_up.gap if d.runner_up is not None else math.nan
    if wanted in ("move", "stay") and d.verdict == "menu" and math.isfinite(gap):
        margin = math.floor(gap * 100) / 100  # decisive is gap ≥ margin
        edits.append(_margin(pack.policy.near_tie_margin, margin))
    if wanted == "menu" and d.verdict in ("move", "stay") and math.isfinite(gap) and gap < 0.99:
        margin = math.floor(gap * 100) / 100 + 0.01  # a near-tie is gap < margin
        edits.append(_margin(pack.policy.near_tie_margin, margin))
    # A move where a stay was expected (or back) hangs on the incumbent, which the case or
    # the conversation's previous turn sets: the route edits above are all an edit can do.
    return [e for e in edits if e.text != e.source]


def _margin(now: float, margin: float) -> Edit:
    return Edit("set_margin", "", f"{min(1.0, max(0.0, margin)):.2f}", f"{now:.2f}")


# -- triage ----------------------------------------------------------------------------------------


def _triage_edits(pack: Pack, case: Case, result: CaseResult) -> list[Edit]:
    """Teach the lexicon of the expected label a content word of the message (in message
    order, so a bare first-word verb, which counts twice, comes first), or take from the
    other lexicon a word that fired for it. Stop words ("in", "my") are never taught."""
    wanted = case.expected_triage
    tokens = list(dict.fromkeys(words(case.text)))
    lexicons = {lane: lexicon(pack, lane) for lane in ("action", "knowledge")}
    edits = []
    if wanted in lexicons:
        fresh = [t for t in _content(case.text) if t not in lexicons[wanted]]
        edits += [Edit("add_verb", wanted, t) for t in fresh[:_PER_LIST]]
    for lane, words_ in lexicons.items():
        if lane != wanted:
            edits += [Edit("remove_verb", lane, t) for t in tokens if t in words_][:_PER_LIST]
    return edits


# -- tools -----------------------------------------------------------------------------------------


def _tool_edits(pack: Pack, case: Case, result: CaseResult) -> list[Edit]:
    kept = set(result.decision.tools.kept)
    wanted = set(case.expected_tools or ())
    keep = wanted - kept if case.expected_tools is not None else set()
    drop = {t for t in case.dropped_tools or () if t in kept}
    if case.expected_tools is not None and (case.exact_tools or not case.expected_tools):
        drop |= kept - wanted
    edits = []
    for tool in pack.tools:
        triggers = {k.lower() for k in tool.trigger_keywords}
        if tool.name in keep:
            fresh = [w for w in _content(case.text) if w not in triggers]
            edits += [Edit("add_trigger", tool.name, w) for w in fresh[:_PER_LIST]]
        if tool.name in drop and not tool.always_include:
            hits = [k for k in tool.trigger_keywords if _occurs(k, case.text)]
            if len(hits) < len(tool.trigger_keywords):  # no trigger left would bind it always
                edits += [Edit("remove_trigger", tool.name, k) for k in hits]
    return edits


# -- helpers ---------------------------------------------------------------------------------------


def _content(text: str) -> list[str]:
    return [w for w in dict.fromkeys(words(text)) if w not in STOP_WORDS and len(w) > 2]


def _occurs(keyword: str, text: str) -> bool:
    return KeywordMatcher([keyword]).search(text)


def _closest(pack: Pack, route: str, text: str, limit: int = 3) -> list[str]:
    """The route's examples that share the most content words with the message."""
    mine = {w for w in words(text) if w not in STOP_WORDS}
    shared = [(len(mine & set(words(e))), e) for e in _route(pack, route).examples]
    return [e for n, e in sorted(shared, key=lambda p: -p[0]) if n][:limit]


def _route(pack: Pack, name: str) -> Route:
    return next(r for r in pack.routes if r.name == name)
