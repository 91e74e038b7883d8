"""A profile's rows as a routing_core pack: built, validated, reported on.

Every area that needs the draft as a pack (saving, the playground, runs, training, publishing)
builds it here, so that the studio's idea of a pack has one author.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from routing_core import FORMAT_MINOR, Pack, PackError, load_pack, new_scorer_settings
from routing_core.scorers.stored import with_model
from studio.models import ActionKind, MatchKind, Profile, Route, Rule, Tool
from studio.shared.errors import Problem


@dataclass(frozen=True)
class PackReport:
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    pack: dict[str, Any] | None = (
        None  # what the paths point into, to name them (studio.shared.labels)
    )

    @property
    def is_valid(self) -> bool:
        return not self.problems


def build_pack_dict(
    profile: Profile,
    *,
    routes: list[Route] | None = None,
    rules: list[Rule] | None = None,
    tools: list[Tool] | None = None,
) -> dict[str, Any]:
    """The pack (docs/pack-format.md) for a profile; the keyword arguments replace the stored rows."""
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
        "no_background": profile.no_background,
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
        "display_name": route.display_name.strip() or None,  # absent from the pack when blank
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
    return _scorer_of(profile, profile.scorer_kind)


# The scorer kinds that read messages with a sentence encoder (their settings' `model`; a
# cascade's tiers of these kinds), and the one a pack uses when it names none
# (docs/pack-format.md, "Embedding and hybrid scorers").
ENCODER_TIERS = frozenset({"embedding", "hybrid"})
DEFAULT_ENCODER = "all-minilm-l6-v2"


def scorer_encoder(profile: Profile, kind: str | None = None) -> str:
    """The sentence encoder the profile's scorer (or a scorer of `kind`, once chosen) reads
    messages with, its first tier that reads with one for a cascade: the default one for a
    kind that reads none, which is what the policy page shows until one is chosen."""
    readers = _readers(_scorer_of(profile, kind or profile.scorer_kind))
    return str(readers[0].get("model", DEFAULT_ENCODER)) if readers else DEFAULT_ENCODER


def with_encoder(profile: Profile, encoder: str, kind: str | None = None) -> dict[str, Any] | None:
    """The scorer settings to store once the profile's scorer, of its kind or of `kind`,
    reads messages with `encoder` (every tier that reads with one, in a cascade): its
    settings as they are (imported ones included) with that model. Unchanged when the kind
    reads no messages with an encoder, or already this one, so that saving the policy page
    never turns a new pack's settings into stored ones."""
    settings = _scorer_of(profile, kind or profile.scorer_kind)
    readers = _readers(settings)
    if not readers or all(r.get("model", DEFAULT_ENCODER) == encoder for r in readers):
        return profile.scorer_settings
    for reader in readers:
        reader["model"] = encoder
    return settings


def without_encoders(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings with no encoder named, at the top or in a tier (what they say besides)."""
    plain = copy.deepcopy(settings)
    for reader in _readers(plain):
        reader.pop("model", None)
    return plain


def _readers(settings: dict[str, Any]) -> list[dict[str, Any]]:
    """The settings, or a cascade's tiers, that read messages with a sentence encoder."""
    tiers = settings.get("tiers") if settings.get("kind") == "cascade" else [settings]
    return [t for t in tiers or [] if isinstance(t, dict) and t.get("kind") in ENCODER_TIERS]


def _scorer_of(profile: Profile, kind: str) -> dict[str, Any]:
    """`scorer_dict` for a scorer of `kind`: the stored settings while they are of that kind."""
    stored = profile.scorer_settings
    if isinstance(stored, dict) and stored.get("kind") == kind:
        return copy.deepcopy(stored)
    return new_scorer_settings(kind)


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
    warnings = empty_route_warnings(routes) + delegation_warnings(routes)
    return PackReport(problems=problems, warnings=warnings, pack=pack)


def empty_route_warnings(routes: list[Route]) -> list[Problem]:
    """A route with no examples is valid, but the scorer knows it only by its name and
    description, so hardly any message reaches it: worth saying where it is made."""
    return [
        (
            f"routes[{i}].examples",
            "no examples yet: the scorer knows this route only by its name and description; "
            "add a few messages a customer would write",
        )
        for i, r in enumerate(routes)
        if not r.examples
    ]


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
