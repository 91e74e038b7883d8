"""A failing test case's smallest fix, tried against the whole suite, applied when a person says so.

`routing_core.repair` finds the edit; a configured language model may only propose extra
keywords for it to try. Applying checks the edit again against the suite as it is now (it
may have changed since the page was shown), then saves through `save_item` (a route, a tool)
or `save_profile` (out-of-scope examples, lexicons, margin) and audits one
`route.accept-repair` / `tool.accept-repair` / `profile.accept-repair` entry.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from routing_core import Pack, PackError
from routing_core.cases import Case
from routing_core.repair import Edit, RepairReport, check_edit, find_repair
from routing_core.repair_edits import LANES, ROUTE_KINDS, apply_edit, lexicon
from routing_core.scorers.base import ScorerFailure
from routing_core.scorers.llm import ChatClient
from routing_core.suggest import parse_suggestions
from studio.labels import plain_problem
from studio.models import Profile, Route, TestCase, Tool
from studio.playground import compiled_router
from studio.services import Refused, _audit, save_item, save_profile
from studio.suites import suite_cases


def _suite(test_case: TestCase) -> tuple[list[Case], int]:
    rows = suite_cases(test_case.profile)
    index = next(i for i, (row, _) in enumerate(rows) if row.pk == test_case.pk)
    return [case for _, case in rows], index


def repair_case(test_case: TestCase, client: ChatClient | None = None) -> tuple[RepairReport, str]:
    """The smallest fix for the case, and a note when the model's wording could not be had.

    Raises:
        PackError: the draft is not a valid pack.
    """
    cases, index = _suite(test_case)
    pack = compiled_router(test_case.profile).pack
    wording, note = [], ""
    if client is not None and cases[index].expected:
        try:
            wording = _model_wording(client, cases[index])
        except ScorerFailure as exc:
            note = f"The language model did not answer ({exc}); only the message's own words were tried."
    return find_repair(pack, cases, index, wording=wording), note


def _model_wording(client: ChatClient, case: Case) -> list[str]:
    """Short phrases of the message that say it belongs to the expected route (the model's guess)."""
    prompt = (
        f"Message: {case.text}\nIt belongs to the route: {case.expected}\n"
        "List up to 5 short phrases (1 to 3 words) copied exactly from the message that "
        "show it belongs there."
    )
    messages = [
        {"role": "system", "content": "Answer with a JSON array of strings and nothing else."},
        {"role": "user", "content": prompt},
    ]
    answer, _usage = client.complete(messages)
    return (parse_suggestions(answer) or [])[:5]


def apply_repair(test_case: TestCase, edit: Edit, *, user: Any) -> None:
    """Apply the edit if it still fixes the case without breaking another; audited.

    The change goes through the normal save path of what it edits (`save_item` for a route
    or a tool, `save_profile` for the out-of-scope examples, lexicons and margin: revision
    check, pack validation, their own audit entry), then one `<kind>.accept-repair` entry
    says which case it fixed.

    Raises:
        Refused: the edit no longer works on the suite as it is now, or the pack refuses it.
        Conflict: someone saved the same item meanwhile.
    """
    profile: Profile = test_case.profile
    cases, index = _suite(test_case)
    pack = compiled_router(profile).pack
    _refuse_stale(pack, edit)
    try:
        edited = apply_edit(pack, edit)  # a forged or out-of-range edit is refused in words
    except PackError as exc:
        raise Refused([("edit", plain_problem(p, m)) for p, m in exc.errors]) from exc
    attempt = check_edit(pack, cases, index, edit)
    if not attempt.fixes or attempt.breaks:
        raise Refused([("edit", "the routes or the cases changed since: find a fix again")])
    with transaction.atomic():
        changed = _save(profile, edit, edited, user)
        after = {"case": test_case.message, "edit": edit.describe(), "kind": edit.kind}
        _audit(
            user, profile, f"{type(changed).__name__.lower()}.accept-repair", changed, None, after
        )


def _refuse_stale(pack: Pack, edit: Edit) -> None:
    """Refuse an edit naming what the pack no longer has (or a forged form)."""
    if edit.kind in ROUTE_KINDS:
        names = set(pack.route_names)
        if edit.route not in names or (edit.source is not None and edit.source not in names):
            raise Refused([("edit", "that route no longer exists: find a fix again")])
    elif edit.kind in ("add_trigger", "remove_trigger"):
        if edit.route not in {t.name for t in pack.tools}:
            raise Refused([("edit", "that tool no longer exists: find a fix again")])
    elif edit.kind in ("add_verb", "remove_verb") and edit.route not in LANES:
        raise Refused([("edit", "there is no such lexicon")])
    if not edit.text.strip():
        raise Refused([("edit", "the edit has no text")])


def _save(profile: Profile, edit: Edit, edited: Pack, user: Any) -> Route | Tool | Profile:
    """Make the edit in the database through the usual save of the item it changes
    (`edited` is the pack with the edit made: the profile's settings are copied from it)."""
    if edit.kind in ROUTE_KINDS:
        route = Route.objects.get(profile=profile, name=edit.route)
        if edit.kind == "add_keyword":
            route.keywords = [*route.keywords, edit.text]
        elif edit.kind == "remove_keyword":
            route.keywords = [k for k in route.keywords if k != edit.text]
        else:
            route.examples = [*route.examples, edit.text]
        save_item(route, user=user)
        if edit.kind == "move_example" and edit.source:
            source = Route.objects.get(profile=profile, name=edit.source)
            source.examples = [e for e in source.examples if e != edit.text]
            save_item(source, user=user)
        return route
    if edit.kind in ("add_trigger", "remove_trigger"):
        tool = Tool.objects.get(profile=profile, name=edit.route)
        triggers = [k for k in tool.trigger_keywords if k != edit.text]
        tool.trigger_keywords = [*triggers, edit.text] if edit.kind == "add_trigger" else triggers
        save_item(tool, user=user)
        return tool
    fresh = Profile.objects.get(pk=profile.pk)
    if edit.kind == "add_out_of_scope":
        fresh.out_of_scope = [*(fresh.out_of_scope or []), edit.text]
    elif edit.kind == "set_margin":
        fresh.near_tie_margin = edited.policy.near_tie_margin
    else:
        setattr(fresh, f"{edit.route}_verbs", sorted(lexicon(edited, edit.route)))
    save_profile(fresh, user=user, expected_revision=fresh.revision)
    return fresh
