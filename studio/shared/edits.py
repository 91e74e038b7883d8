"""Saving a profile and its routes, rules and tools: validated as a pack, locked, audited.

Every save builds the *candidate* pack in memory (the database rows with the edit applied) and asks
routing_core to load it; an edit that would add a problem is refused with routing_core's reasons and
nothing is written. Problems the profile already had (a new profile has no routes yet) do not block
unrelated edits; the profile page's badge lists them.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Literal

from django.db import IntegrityError, models, transaction
from django.db.models import F

from routing_core.limits import TOTAL_KINDS, pack_totals, total_kind
from studio.models import (
    Profile,
    ProfileItem,
    Route,
    Rule,
    TestCase,
    Tool,
    snapshot,
)
from studio.shared.audit import audit, claim, next_order, object_kind
from studio.shared.errors import Refused, SlugTaken
from studio.shared.packs import build_pack_dict, check_pack, delegation_cycles

PACK_FIELDS: dict[type[ProfileItem], str] = {Route: "routes", Rule: "rules", Tool: "tools"}


@dataclass(frozen=True)
class RouteReferences:
    """What names a route and would be left pointing nowhere if it were deleted."""

    cases: list[TestCase]
    rules: list[Rule]
    is_default: bool

    @property
    def is_empty(self) -> bool:
        return not (self.cases or self.rules or self.is_default)


def route_references(route: Route) -> RouteReferences:
    """The test cases expecting (or starting in) the route, its rules, and the default route."""
    profile, name = route.profile, route.name
    cases = profile.test_cases.filter(models.Q(expected_route=name) | models.Q(incumbent=name))
    return RouteReferences(
        list(cases), list(profile.rules.filter(route_name=name)), profile.default_route == name
    )


# -- saving ---------------------------------------------------------------------------------------


def create_profile(profile: Profile, *, user: Any) -> Profile:
    """Save a new, empty profile. Refused when its identity is invalid for routing_core."""
    identity = [
        p
        for p in check_pack(build_pack_dict(profile, routes=[], rules=[], tools=[]))
        if p[0].startswith("profile")
    ]
    if identity:
        raise Refused(identity)
    try:
        with transaction.atomic():
            profile.updated_by = user
            profile.save()
            audit(user, profile, "profile.create", profile, None, snapshot(profile))
    except IntegrityError as exc:
        # Two studio processes can both pass the form's uniqueness check; the database decides.
        if not Profile.objects.filter(slug=profile.slug).exists():
            raise
        # The same answer as the sequential check: a conflict for the API (409), a field's error
        # on a page.
        raise SlugTaken(profile.slug) from exc
    return profile


def save_profile(profile: Profile, *, user: Any, expected_revision: int) -> None:
    """Save a profile's own fields (identity, default route, policy, triage, lexicons)."""
    with transaction.atomic():
        before = snapshot(Profile.objects.get(pk=profile.pk))
        claim(profile, expected_revision)
        profile.draft_revision = _touch(profile)
        _refuse_new_problems(Profile.objects.get(pk=profile.pk), build_pack_dict(profile))
        profile.updated_by = user
        profile.save()
        audit(user, profile, "profile.update", profile, before, snapshot(profile))


def save_item(item: ProfileItem, *, user: Any, expected_revision: int | None = None) -> None:
    """Create (no pk yet) or update a route, rule or tool.

    Raises:
        Conflict: expected_revision is not the stored one.
        Refused: the resulting pack would have problems it does not have now.
    """
    profile = item.profile
    with transaction.atomic():
        _touch(profile)
        old = type(item)._default_manager.get(pk=item.pk) if item.pk else None
        if old is not None:
            claim(item, expected_revision if expected_revision is not None else old.revision)
        else:
            item.order = next_order(item)
        renamed = _renamed_route(old, item)
        candidate, index = _candidate(profile, item, renamed=renamed)
        prefix = f"{PACK_FIELDS[type(item)]}[{index}]"
        _refuse_new_problems(profile, candidate, prefix=prefix)
        if isinstance(item, Route):
            _refuse_cycles(profile, item, prefix)
        item.updated_by = user
        item.save()
        if renamed:
            _rename_references(profile, *renamed)
        action = "update" if old else "create"
        audit(user, profile, f"{object_kind(item)}.{action}", item, _snap(old), snapshot(item))


def delete_item(item: ProfileItem, *, user: Any) -> None:
    """Delete a route, rule or tool, unless the pack would become invalid without it."""
    profile = item.profile
    with transaction.atomic():
        _touch(profile)
        siblings = [s for s in _siblings(item) if s.pk != item.pk]
        candidate = build_pack_dict(profile, **{PACK_FIELDS[type(item)]: siblings})
        _refuse_new_problems(profile, candidate)
        before = snapshot(item)
        item.delete()
        audit(user, profile, f"{object_kind(item)}.delete", item, before, None)


def move_item(item: ProfileItem, direction: Literal["up", "down"], *, user: Any) -> None:
    """Swap an item with its neighbour; order matters for rules (first match wins)."""
    with transaction.atomic():
        _touch(item.profile)
        siblings = _siblings(item)
        i = next(n for n, s in enumerate(siblings) if s.pk == item.pk)
        j = i - 1 if direction == "up" else i + 1
        if not 0 <= j < len(siblings):
            return
        siblings[i], siblings[j] = siblings[j], siblings[i]
        for order, sibling in enumerate(siblings):
            type(item)._default_manager.filter(pk=sibling.pk).update(order=order)
        audit(user, item.profile, f"{object_kind(item)}.move", item, {"order": i}, {"order": j})


def _touch(profile: Profile) -> int:
    """Bump the draft revision: invalidates caches and serialises edits of one profile."""
    Profile.objects.filter(pk=profile.pk).update(draft_revision=F("draft_revision") + 1)
    revision: int = Profile.objects.values_list("draft_revision", flat=True).get(pk=profile.pk)
    transaction.on_commit(lambda: _retrain(profile.pk))
    return revision


def _retrain(profile_pk: int) -> None:
    """After an edit, queue the model of the new route texts (nothing when they did not change)."""
    from studio.jobs import request_model_safely

    request_model_safely(profile_pk)


def _refuse_new_problems(profile: Profile, candidate: dict[str, Any], prefix: str = "") -> None:
    """Refuse the edit when it adds a problem the draft did not have.

    A per-pack total (docs/pack-format.md, Limits) is refused at the item edited, not at the
    place the whole pack's count happens to cross it; a profile already past one (saved before
    the total existed) may still take edits that do not grow that count (a deletion must go
    through).
    """
    draft = build_pack_dict(profile)
    known = set(check_pack(draft))
    grew = {
        kind
        for kind, old, now in zip(
            TOTAL_KINDS, pack_totals(draft), pack_totals(candidate), strict=True
        )
        if now > old
    }
    new = []
    for path, message in check_pack(candidate):
        kind = total_kind(message)
        if kind is None and (path, message) not in known:
            new.append((path, message))
        elif kind is not None and kind in grew:
            new.append((prefix or path, message))
    if new:
        raise Refused(new, prefix)


def _refuse_cycles(profile: Profile, route: Route, prefix: str) -> None:
    routes = [route if r.pk == route.pk else r for r in profile.routes.all()]
    if route.pk is None:
        routes.append(route)
    cycles = [p for p in delegation_cycles(profile, routes) if p[0].startswith(prefix + ".")]
    if cycles:
        raise Refused(cycles, prefix)


def _candidate(
    profile: Profile, item: ProfileItem, *, renamed: tuple[str, str] | None
) -> tuple[dict[str, Any], int]:
    """The pack as it would be after saving item, and item's index in its list."""
    items = [item if s.pk == item.pk else s for s in _siblings(item)]
    if item.pk is None:
        items.append(item)
    index = next(n for n, s in enumerate(items) if s is item)
    overrides: dict[str, Any] = {PACK_FIELDS[type(item)]: items}
    if renamed:
        profile = copy.copy(profile)
        if profile.default_route == renamed[0]:
            profile.default_route = renamed[1]
        overrides["rules"] = [_renamed_rule(r, *renamed) for r in profile.rules.all()]
    return build_pack_dict(profile, **overrides), index


def _renamed_rule(rule: Rule, old: str, new: str) -> Rule:
    if rule.route_name != old:
        return rule
    rule = copy.copy(rule)
    rule.route_name = new
    return rule


def _renamed_route(old: ProfileItem | None, new: ProfileItem) -> tuple[str, str] | None:
    if isinstance(old, Route) and isinstance(new, Route) and old.name != new.name:
        return (old.name, new.name)
    return None


def _rename_references(profile: Profile, old: str, new: str) -> None:
    Profile.objects.filter(pk=profile.pk, default_route=old).update(default_route=new)
    Rule.objects.filter(profile=profile, route_name=old).update(route_name=new)
    TestCase.objects.filter(profile=profile, expected_route=old).update(expected_route=new)
    TestCase.objects.filter(profile=profile, incumbent=old).update(incumbent=new)
    if profile.default_route == old:
        profile.default_route = new


def _siblings(item: ProfileItem) -> list[Any]:
    return list(type(item)._default_manager.filter(profile=item.profile).order_by("order", "pk"))


def _snap(obj: models.Model | None) -> dict[str, Any] | None:
    return None if obj is None else snapshot(obj)


# -- small helpers views share ----------------------------------------------------------------------

_INDEX = re.compile(r"\[\d+\]")


def path_tokens(path: str) -> list[str]:
    """`routes[2].action.agent` → ["routes", "action", "agent"]."""
    return [t for t in _INDEX.sub("", path).split(".") if t]
