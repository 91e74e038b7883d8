"""The one bridge between the database and routing_core: build packs, validate, save, audit.

Every save builds the *candidate* pack in memory (the database rows with the edit applied) and asks
routing_core to load it; an edit that would add a problem is refused with routing_core's reasons and
nothing is written. Problems the profile already had (a new profile has no routes yet) do not block
unrelated edits; the profile page's badge lists them.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from django.db import IntegrityError, models, transaction
from django.db.models import F, Max
from django.utils.timezone import localtime
from pydantic import BaseModel

from routing_core import Decision, Pack, PackError, load_pack
from routing_core.pack import FORMAT_MINOR, new_scorer_settings
from routing_core.scorers.stored import with_model
from studio.models import (
    ActionKind,
    AuditEntry,
    MatchKind,
    Profile,
    ProfileItem,
    Route,
    Rule,
    TestCase,
    Tool,
    snapshot,
)

Problem = tuple[str, str]
PACK_FIELDS: dict[type[ProfileItem], str] = {Route: "routes", Rule: "rules", Tool: "tools"}


class Refused(Exception):
    """The edit would make the pack invalid. `errors` are (json_path, message) from routing_core."""

    def __init__(self, errors: list[Problem], prefix: str = "") -> None:
        super().__init__("; ".join(f"{p}: {m}" for p, m in errors))
        self.errors = errors
        self.prefix = prefix


class Conflict(Exception):
    """Someone else saved the object since the form was loaded."""


class SlugTaken(Conflict, Refused):
    """A new profile's slug is taken: a conflict for the API (409), a field's error on a page."""

    def __init__(self, slug: str, advice: str = "") -> None:
        Refused.__init__(self, [("profile.slug", f"a profile '{slug}' exists{advice}")])


@dataclass(frozen=True)
class PackReport:
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    pack: dict[str, Any] | None = None  # what the paths point into, to name them (studio.labels)

    @property
    def is_valid(self) -> bool:
        return not self.problems


# -- building -----------------------------------------------------------------------------------


def build_pack_dict(
    profile: Profile,
    *,
    routes: list[Route] | None = None,
    rules: list[Rule] | None = None,
    tools: list[Tool] | None = None,
) -> dict[str, Any]:
    """The pack (DESIGN §6) for a profile; the keyword arguments replace the stored rows."""
    routes = list(profile.routes.all()) if routes is None else routes
    rules = list(profile.rules.all()) if rules is None else rules
    tools = list(profile.tools.all()) if tools is None else tools
    return {
        "format": "route-pack",
        "format_version": 1,
        # The studio writes the current minor: an embedding tier's floor stored here is a
        # probability, and a document without a minor would be read as an older pack's.
        "format_minor": FORMAT_MINOR,
        "profile": {"slug": profile.slug, "name": profile.name, "description": profile.description},
        "version": profile.draft_revision,
        "created_at": None,
        "routes": [_route_dict(r) for r in routes],
        "out_of_scope": list(profile.out_of_scope or []),
        "rules": [_rule_dict(r) for r in rules],
        "default_route": profile.default_route or None,
        "policy": {
            "near_tie_margin": profile.near_tie_margin,
            "menu_size": profile.menu_size,
            "floor": profile.floor,
            "strictness": profile.strictness,
        },
        "scorer": scorer_dict(profile),
        "triage": _triage_dict(profile),
        "tools": [_tool_dict(t) for t in tools],
    }


def _route_dict(route: Route) -> dict[str, Any]:
    # Every filled action field goes in, so routing_core refuses e.g. delegate + stuck message.
    action: dict[str, Any] = {"kind": route.action_kind}
    if route.delegate_agent:
        action["agent"] = route.delegate_agent
    if route.stuck_message:
        action["message"] = route.stuck_message
    return {
        "name": route.name,
        "description": route.description,
        "examples": list(route.examples),
        "keywords": list(route.keywords),
        "never": list(route.never),
        "action": action,
    }


def _rule_dict(rule: Rule) -> dict[str, Any]:
    match: dict[str, Any]
    if rule.match_kind == MatchKind.REGEX:
        match = {"regex": rule.regex}
    elif rule.match_kind == MatchKind.ALL:
        match = {"all": rule.all_of}
    else:
        match = {"keywords": list(rule.keywords)}
    return {"route": rule.route_name, "match": match, "examples": list(rule.examples)}


def rule_match(rule: Rule) -> dict[str, Any]:
    """The pack `match` of a rule row (the rule builder runs it before the rule is saved)."""
    match: dict[str, Any] = _rule_dict(rule)["match"]
    return match


def _tool_dict(tool: Tool) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "trigger_keywords": list(tool.trigger_keywords),
        "always_include": tool.always_include,
    }


def scorer_dict(profile: Profile) -> dict[str, Any]:
    """The pack's `scorer`: the stored settings while the kind is theirs, else a new one's."""
    stored = profile.active_scorer_settings
    return copy.deepcopy(stored) if stored else new_scorer_settings(profile.scorer_kind)


def scorer_settings(scorer: BaseModel) -> dict[str, Any] | None:
    """What a profile stores of a pack's scorer settings (None: nothing beyond the kind).

    Lexical `model`s are dropped, at the top and in a cascade's tiers: they are learned from the
    routes, which the studio edits, so release_pack relearns them instead of keeping stale ones.
    """
    document: dict[str, Any] = scorer.model_dump(mode="json")
    for settings in [document, *document.get("tiers", [])]:
        if settings["kind"] == "lexical":
            del settings["model"]
    return None if document == {"kind": "lexical"} else document


def _triage_dict(profile: Profile) -> dict[str, Any]:
    triage: dict[str, Any] = {
        "mode": profile.triage_mode,
        "ambiguity_confidence_floor": profile.ambiguity_confidence_floor,
        "min_action_signals": profile.min_action_signals,
    }
    if profile.action_verbs is not None:
        triage["action_verbs"] = profile.action_verbs
    if profile.knowledge_verbs is not None:
        triage["knowledge_verbs"] = profile.knowledge_verbs
    if profile.question_pattern:
        triage["question_pattern"] = profile.question_pattern
    return triage


def build_pack(profile: Profile) -> Pack:
    """The profile's draft as a routing_core Pack. Raises PackError when it is invalid."""
    return load_pack(build_pack_dict(profile))


def release_pack(profile: Profile) -> Pack:
    """The pack production would run for this draft: valid, its scorer's weights learned here.

    This trains (minutes on a large profile): requests use `studio.jobs.training` instead,
    which trains on the queue and reuses the model the playground, runs and publishing share.
    """
    return with_model(build_pack(profile))


def check_pack(pack: dict[str, Any]) -> list[Problem]:
    try:
        load_pack(pack)
    except PackError as exc:
        return [(str(path), str(message)) for path, message in exc.errors]
    return []


def pack_report(profile: Profile) -> PackReport:
    """What the profile page's badge shows: routing_core's problems and the studio's warnings."""
    routes = list(profile.routes.all())
    pack = build_pack_dict(profile, routes=routes)
    problems = check_pack(pack) + delegation_cycles(profile, routes)
    return PackReport(problems=problems, warnings=delegation_warnings(routes), pack=pack)


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


# -- delegation between profiles ------------------------------------------------------------------


def delegation_warnings(routes: list[Route]) -> list[Problem]:
    known = set(Profile.objects.values_list("slug", flat=True))
    return [
        (
            f"routes[{i}].action.agent",
            f"'{r.delegate_agent}' is not a profile in this studio; "
            "make sure an agent with that id exists",
        )
        for i, r in enumerate(routes)
        if r.action_kind == ActionKind.DELEGATE
        and r.delegate_agent
        and r.delegate_agent not in known
    ]


def delegation_cycles(profile: Profile, routes: list[Route]) -> list[Problem]:
    """A delegation that leads back to this profile would loop forever in production."""
    graph = _delegation_graph()
    graph[profile.slug] = {r.delegate_agent for r in routes if r.action_kind == ActionKind.DELEGATE}
    problems = []
    for i, route in enumerate(routes):
        if route.action_kind != ActionKind.DELEGATE or not route.delegate_agent:
            continue
        path = _path_to(graph, route.delegate_agent, profile.slug)
        if path is not None:
            loop = " → ".join([profile.slug, *path])
            problems.append((f"routes[{i}].action.agent", f"delegation cycle: {loop}"))
    return problems


def _delegation_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    rows = Route.objects.filter(action_kind=ActionKind.DELEGATE).exclude(delegate_agent="")
    for slug, agent in rows.values_list("profile__slug", "delegate_agent"):
        graph.setdefault(slug, set()).add(agent)
    return graph


def _path_to(graph: dict[str, set[str]], start: str, goal: str) -> list[str] | None:
    stack, seen = [[start]], {start}
    while stack:
        path = stack.pop()
        if path[-1] == goal:
            return path
        for nxt in sorted(graph.get(path[-1], ())):
            if nxt not in seen:
                seen.add(nxt)
                stack.append([*path, nxt])
    return None


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
            _audit(user, profile, "profile.create", profile, None, snapshot(profile))
    except IntegrityError as exc:
        # Two studio processes can both pass the form's uniqueness check; the database decides.
        if not Profile.objects.filter(slug=profile.slug).exists():
            raise
        raise Refused([("profile.slug", f"a profile '{profile.slug}' already exists")]) from exc
    return profile


def save_profile(profile: Profile, *, user: Any, expected_revision: int) -> None:
    """Save a profile's own fields (identity, default route, policy, triage, lexicons)."""
    with transaction.atomic():
        before = snapshot(Profile.objects.get(pk=profile.pk))
        _claim(profile, expected_revision)
        profile.draft_revision = _touch(profile)
        _refuse_new_problems(Profile.objects.get(pk=profile.pk), build_pack_dict(profile))
        profile.updated_by = user
        profile.save()
        _audit(user, profile, "profile.update", profile, before, snapshot(profile))


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
            _claim(item, expected_revision if expected_revision is not None else old.revision)
        else:
            item.order = _next_order(item)
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
        _audit(user, profile, f"{_kind(item)}.{action}", item, _snap(old), snapshot(item))


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
        _audit(user, profile, f"{_kind(item)}.delete", item, before, None)


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
        _audit(user, item.profile, f"{_kind(item)}.move", item, {"order": i}, {"order": j})


def add_test_case(
    profile: Profile, decision: Decision, message: str, expected_route: str, *, user: Any
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
    decided = decision.route if decision.verdict in ("move", "stay") else None
    triage = decision.triage
    case = TestCase(
        profile=profile,
        message=message,
        incumbent=decision.from_route or "",
        expected_route=expected_route,
        expected_verdict=decision.verdict if expected_route == (decided or "") else "",
        expected_triage=triage.label if triage else "",
        expected_tools=list(decision.kept_tools) if triage else None,
        updated_by=user,
    )
    with transaction.atomic():
        case.order = _next_order(case)
        case.save()
        _audit(user, profile, "testcase.create", case, None, snapshot(case))
    return case


def _touch(profile: Profile) -> int:
    """Bump the draft revision: invalidates caches and serialises edits of one profile."""
    Profile.objects.filter(pk=profile.pk).update(draft_revision=F("draft_revision") + 1)
    revision: int = Profile.objects.values_list("draft_revision", flat=True).get(pk=profile.pk)
    transaction.on_commit(lambda: _retrain(profile.pk))
    return revision


def _retrain(profile_pk: int) -> None:
    """After an edit, queue the model of the new route texts (nothing when they did not change)."""
    from studio.jobs.training import request_model_safely

    request_model_safely(profile_pk)


def _claim(obj: ProfileItem | Profile, expected_revision: int) -> None:
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
        raise Conflict(f"changed by {who} at {when} — reload")
    obj.revision = expected_revision + 1


def _refuse_new_problems(profile: Profile, candidate: dict[str, Any], prefix: str = "") -> None:
    before = set(check_pack(build_pack_dict(profile)))
    new = [p for p in check_pack(candidate) if p not in before]
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


def _next_order(item: ProfileItem) -> int:
    top = (
        type(item)._default_manager.filter(profile=item.profile).aggregate(top=Max("order"))["top"]
    )
    return 0 if top is None else top + 1


def _kind(item: models.Model) -> str:
    return type(item).__name__.lower()


def _snap(obj: models.Model | None) -> dict[str, Any] | None:
    return None if obj is None else snapshot(obj)


def _audit(
    user: Any,
    profile: Profile,
    action: str,
    obj: models.Model,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> None:
    AuditEntry.objects.create(
        profile=profile,
        profile_slug=profile.slug,
        user=user if user is not None and user.is_authenticated else None,
        username=user.get_username() if user is not None and user.is_authenticated else "",
        action=action,
        object_type=_kind(obj),
        object_repr=str(obj)[:200],
        before=before,
        after=after,
    )


# -- small helpers views share ----------------------------------------------------------------------

_INDEX = re.compile(r"\[\d+\]")


def path_tokens(path: str) -> list[str]:
    """`routes[2].action.agent` → ["routes", "action", "agent"]."""
    return [t for t in _INDEX.sub("", path).split(".") if t]
