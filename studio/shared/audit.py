"""The audit trail and the optimistic lock: what every saved edit of a profile goes through."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import F, Max
from django.utils.timezone import localtime

from studio.models import AuditEntry, Profile, ProfileItem
from studio.shared.errors import Conflict


def claim(obj: ProfileItem | Profile, expected_revision: int) -> None:
    """Optimistic lock: take the next revision only if nobody else took it first."""
    model = type(obj)
    claimed = model._default_manager.filter(pk=obj.pk, revision=expected_revision).update(
        revision=F("revision") + 1
    )
    if not claimed:
        current = model._default_manager.filter(pk=obj.pk).select_related("updated_by").first()
        if current is None:
            raise Conflict("deleted by someone else — reload")
        who = current.updated_by.get_username() if current.updated_by else "someone"
        when = localtime(current.updated_at).strftime("%Y-%m-%d %H:%M:%S")
        raise Conflict(f"changed by {who} at {when} — reload", current=current)
    obj.revision = expected_revision + 1


def next_order(item: ProfileItem) -> int:
    """The order after the last of the item's siblings: a new item goes to the end."""
    top = (
        type(item)._default_manager.filter(profile=item.profile).aggregate(top=Max("order"))["top"]
    )
    return 0 if top is None else top + 1


def object_kind(item: models.Model) -> str:
    """How the audit trail names a row's kind ("route", "testcase"): its model, in lower case."""
    return type(item).__name__.lower()


def audit(
    user: Any,
    profile: Profile,
    action: str,
    obj: models.Model,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> None:
    """Record one change of `obj` in `profile`, with the fields before and after (None: created
    or deleted), and who made it: the audit trail pages and restores read these rows."""
    AuditEntry.objects.create(
        profile=profile,
        profile_slug=profile.slug,
        user=user if user is not None and user.is_authenticated else None,
        username=user.get_username() if user is not None and user.is_authenticated else "",
        action=action,
        object_type=object_kind(obj),
        object_repr=str(obj)[:200],
        before=before,
        after=after,
    )


def signed_in(user: Any) -> Any:
    """The user to record as a job's starter: None for an anonymous or missing one."""
    return user if user is not None and user.is_authenticated else None
