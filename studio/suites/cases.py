"""Saving and deleting test cases: optimistic locking and the audit trail, no pack validation.

Test cases are not part of the pack, so editing one never changes the draft; an expected route
that does not exist is allowed (the case then fails, which is what it should report).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from routing_core import Decision
from studio.models import Profile, TestCase, snapshot
from studio.shared.audit import audit, claim, next_order
from studio.shared.errors import Refused


def save_case(case: TestCase, *, user: Any, expected_revision: int | None = None) -> None:
    """Create (no pk yet) or update a test case.

    Raises:
        Conflict: expected_revision is not the stored one.
    """
    with transaction.atomic():
        old = TestCase.objects.get(pk=case.pk) if case.pk else None
        if old is None:
            case.order = next_order(case)
        else:
            claim(case, old.revision if expected_revision is None else expected_revision)
        case.updated_by = user
        case.save()
        before = snapshot(old) if old else None
        action = "update" if old else "create"
        audit(user, case.profile, f"testcase.{action}", case, before, snapshot(case))


def delete_case(case: TestCase, *, user: Any) -> None:
    with transaction.atomic():
        before = snapshot(case)
        case.delete()
        audit(user, case.profile, "testcase.delete", case, before, None)


@dataclass(frozen=True)
class Turn:
    """One turn of a playground conversation: what was typed, where it started and landed."""

    message: str
    incumbent: str | None
    route: str | None
    verdict: str
    offered: tuple[str, ...] = ()  # a menu's routes, best first


def save_conversation(profile: Profile, turns: list[Turn], *, user: Any) -> list[TestCase]:
    """Store a conversation as one multi-turn case: each turn expects where it landed.

    A menu turn expects a menu offering its first offer, as a single saved menu turn does
    (docs/decisions.md, "Test cases that expect a menu"); only a menu that offered nothing (a
    transcript kept from before the offers were) is left out, which changes no later turn (a
    menu keeps the conversation where it was). Only the first turn's incumbent is stored; the
    suite chains the rest, exactly as the playground did.
    """
    kept = [t for t in turns if (t.verdict != "menu" or t.offered) and t.message.strip()]
    with transaction.atomic():
        label = _new_label(profile)
        cases = []
        for number, turn in enumerate(kept, 1):
            case = TestCase(
                profile=profile,
                message=turn.message,
                incumbent=(turn.incumbent or "") if number == 1 else "",
                expected_route=(turn.offered[0] if turn.verdict == "menu" else turn.route) or "",
                expected_verdict=turn.verdict,
                conversation=label,
                turn=number,
                updated_by=user if user is not None and user.is_authenticated else None,
            )
            case.order = next_order(case)
            case.save()
            audit(user, profile, "testcase.create", case, None, snapshot(case))
            cases.append(case)
    return cases


def _new_label(profile: Profile) -> str:
    """The first free "conversation N" label of the profile."""
    taken = set(profile.test_cases.values_list("conversation", flat=True))
    number = 1
    while f"conversation {number}" in taken:
        number += 1
    return f"conversation {number}"


def _verdict_to_expect(decision: Decision, expected_route: str, expect_menu: bool) -> str:
    """The verdict a case saved from this turn checks: the turn's own when the case expects what
    the turn did, else none (a correction). A menu is expected only when asked for: "a menu
    offering billing" passes while the menu offers it, where "billing" wants it decisively."""
    if expect_menu:
        if decision.verdict != "menu" or expected_route not in decision.offered:
            raise Refused(
                [("expected_route", f"this turn's menu does not offer '{expected_route}'")]
            )
        return "menu"
    decided = decision.route if decision.verdict in ("move", "stay") else None
    if decision.verdict == "menu" or expected_route != (decided or ""):
        return ""
    return decision.verdict


def add_test_case(
    profile: Profile,
    decision: Decision,
    message: str,
    expected_route: str,
    *,
    user: Any,
    expect_menu: bool = False,
) -> TestCase:
    """Store a routed turn as a test case (the playground's "save as test case").

    The case keeps the message, the turn's incumbent, the expected route (the decided one or a
    correction; blank = no route), the verdict kind when the expectation is the decided route,
    and the triage label and kept tools the turn produced.

    Raises:
        Refused: the expected route is not a route of the profile.
    """
    if expected_route and not profile.routes.filter(name=expected_route).exists():
        raise Refused([("expected_route", f"'{expected_route}' is not a route of this profile")])
    triage = decision.triage
    case = TestCase(
        profile=profile,
        message=message,
        incumbent=decision.from_route or "",
        expected_route=expected_route,
        expected_verdict=_verdict_to_expect(decision, expected_route, expect_menu),
        expected_triage=triage.label if triage else "",
        expected_tools=list(decision.kept_tools) if triage else None,
        updated_by=user,
    )
    with transaction.atomic():
        case.order = next_order(case)
        case.save()
        audit(user, profile, "testcase.create", case, None, snapshot(case))
    return case
