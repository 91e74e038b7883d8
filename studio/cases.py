"""Saving and deleting test cases: optimistic locking and the audit trail, no pack validation.

Test cases are not part of the pack, so editing one never changes the draft; an expected route
that does not exist is allowed (the case then fails, which is what it should report).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from studio.models import Profile, TestCase, snapshot
from studio.services import _audit, _claim, _next_order


def save_case(case: TestCase, *, user: Any, expected_revision: int | None = None) -> None:
    """Create (no pk yet) or update a test case.

    Raises:
        Conflict: expected_revision is not the stored one.
    """
    with transaction.atomic():
        old = TestCase.objects.get(pk=case.pk) if case.pk else None
        if old is None:
            case.order = _next_order(case)
        else:
            _claim(case, old.revision if expected_revision is None else expected_revision)
        case.updated_by = user
        case.save()
        before = snapshot(old) if old else None
        action = "update" if old else "create"
        _audit(user, case.profile, f"testcase.{action}", case, before, snapshot(case))


def delete_case(case: TestCase, *, user: Any) -> None:
    with transaction.atomic():
        before = snapshot(case)
        case.delete()
        _audit(user, case.profile, "testcase.delete", case, before, None)


@dataclass(frozen=True)
class Turn:
    """One turn of a playground conversation: what was typed, where it started and landed."""

    message: str
    incumbent: str | None
    route: str | None
    verdict: str


def save_conversation(profile: Profile, turns: list[Turn], *, user: Any) -> list[TestCase]:
    """Store a conversation as one multi-turn case: each turn expects where it landed.

    Menu turns are left out: a case expects a route or none, never a menu, and leaving one out
    changes no later turn (a menu keeps the conversation where it was). Only the first turn's
    incumbent is stored; the suite chains the rest, exactly as the playground did.
    """
    kept = [t for t in turns if t.verdict != "menu" and t.message.strip()]
    with transaction.atomic():
        label = _new_label(profile)
        cases = []
        for number, turn in enumerate(kept, 1):
            case = TestCase(
                profile=profile,
                message=turn.message,
                incumbent=(turn.incumbent or "") if number == 1 else "",
                expected_route=turn.route or "",
                expected_verdict=turn.verdict,
                conversation=label,
                turn=number,
                updated_by=user if user is not None and user.is_authenticated else None,
            )
            case.order = _next_order(case)
            case.save()
            _audit(user, profile, "testcase.create", case, None, snapshot(case))
            cases.append(case)
    return cases


def _new_label(profile: Profile) -> str:
    """The first free "conversation N" label of the profile."""
    taken = set(profile.test_cases.values_list("conversation", flat=True))
    number = 1
    while f"conversation {number}" in taken:
        number += 1
    return f"conversation {number}"
