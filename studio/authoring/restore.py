"""Restore a deleted route, rule, tool or test case from the audit trail.

A delete records the object's full content in its audit entry (`before`); restoring saves that
content again through the same services as any edit, so routing_core still judges the pack (a
restored rule whose route is gone is refused) and the name constraints still hold. The restore
is audited as `<kind>.restore`, naming the entry it came from, and each entry restores once,
also when several requests restore it at the same moment (the entry's row is locked).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from studio.models import AuditEntry, ProfileItem, Route, Rule, TestCase, Tool
from studio.shared.audit import audit
from studio.shared.edits import save_item
from studio.shared.errors import Refused
from studio.suites import save_case

RESTORABLE: dict[str, type[ProfileItem]] = {
    "route": Route,
    "rule": Rule,
    "tool": Tool,
    "testcase": TestCase,
}
# Bookkeeping of the deleted row; the restored one gets fresh values.
_SKIP = {"revision", "order"}


def is_restorable(entry: AuditEntry) -> bool:
    """A delete of a route, rule, tool or test case, with its content recorded."""
    kind, _, action = entry.action.partition(".")
    return action == "delete" and kind in RESTORABLE and isinstance(entry.before, dict)


def restore(entry: AuditEntry, *, user: Any) -> ProfileItem:
    """Recreate the object an audit entry deleted.

    Raises:
        Refused: not a restorable delete, already restored, the name is taken, or the pack
            would become invalid (routing_core's reasons).
    """
    if not is_restorable(entry) or entry.profile is None:
        raise Refused([("entry", "only a deleted route, rule, tool or test case can be restored")])
    kind = entry.action.partition(".")[0]
    model = RESTORABLE[kind]
    fields = {k: v for k, v in (entry.before or {}).items() if k not in _SKIP}
    item = model(profile=entry.profile, **fields)
    with transaction.atomic():
        # Simultaneous restores of one entry queue on its row, so the second sees the first's
        # restore entry once it has committed (without the lock all of them passed the check).
        list(AuditEntry.objects.select_for_update().filter(pk=entry.pk).values_list("pk"))
        _refuse_twice(entry)
        _refuse_taken_name(item)
        if isinstance(item, TestCase):
            save_case(item, user=user)
        else:
            save_item(item, user=user)
        audit(user, entry.profile, f"{kind}.restore", item, {"restored_from": entry.pk}, fields)
    return item


def _refuse_twice(entry: AuditEntry) -> None:
    done = AuditEntry.objects.filter(
        profile=entry.profile, action=f"{entry.action.partition('.')[0]}.restore"
    ).filter(before__restored_from=entry.pk)
    if done.exists():
        raise Refused([("entry", "this deletion was already restored")])


def _refuse_taken_name(item: ProfileItem) -> None:
    name = getattr(item, "name", None)
    if name is None:
        return
    siblings: Any = type(item)._default_manager.filter(profile=item.profile)
    if siblings.filter(name=name).exists():
        noun = type(item).__name__.lower()
        raise Refused([("name", f"a {noun} named '{name}' exists: rename or delete it first")])
