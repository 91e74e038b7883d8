"""Saving and deleting test cases: optimistic locking and the audit trail, no pack validation.

Test cases are not part of the pack, so editing one never changes the draft; an expected route
that does not exist is allowed (the case then fails, which is what it should report).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from studio.models import TestCase, snapshot
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
