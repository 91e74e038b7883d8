"""A Route Studio pack file in: read within the size limit, validated, made a profile or a draft.

Used by the import job (a new profile) and by "import into this profile" (a draft replaced).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from routing_core import Pack, load_pack
from studio.models import (
    ActionKind,
    AuditEntry,
    MatchKind,
    Profile,
    Route,
    Rule,
    Tool,
    snapshot,
)
from studio.shared.audit import audit
from studio.shared.errors import Conflict, Refused, SlugTaken
from studio.shared.packs import scorer_settings

MAX_IMPORT_BYTES: int = getattr(settings, "STUDIO_MAX_IMPORT_BYTES", 5 * 1024 * 1024)


def read_upload(data: bytes | str) -> bytes | str:
    """Refuse a file over the size limit before anything parses it."""
    if len(data) > MAX_IMPORT_BYTES:
        limit = MAX_IMPORT_BYTES // 1024
        raise Refused([("file", f"the file is larger than the {limit} KB import limit")])
    return data


def import_pack(
    source: bytes | str | dict[str, Any],
    *,
    user: Any,
    into: Profile | None = None,
    slug: str | None = None,
    expected_draft_revision: int | None = None,
) -> Profile:
    """Create a profile from a pack file, or replace a profile's draft with it; all or nothing.

    Args:
        into: replace this profile's draft (its test cases and versions stay; its slug too).
        slug: the new profile's slug instead of the pack's.
        expected_draft_revision: the draft the import was asked to replace (when it was
            queued); a newer draft holds edits the pack knows nothing of, so it is kept.

    Raises:
        PackError: the file is not a valid pack (every `path: reason`).
        Refused: too large, or a new profile whose slug is taken.
        DraftMoved: the draft changed since `expected_draft_revision`.
    """
    pack = load_pack(read_upload(source) if not isinstance(source, dict) else source)
    if slug and into is None:  # the new slug is judged by routing_core like the pack's own
        document = pack.model_dump(mode="json")
        pack = load_pack({**document, "profile": {**document["profile"], "slug": slug}})
    if into is None:
        return _import_new(pack, slug or pack.profile.slug, user)
    with transaction.atomic():
        profile = Profile.objects.select_for_update().get(pk=into.pk)
        if (
            expected_draft_revision is not None
            and profile.draft_revision != expected_draft_revision
        ):
            raise DraftMoved(profile, expected_draft_revision)
        before = snapshot(profile)
        for model in (Route, Rule, Tool):
            model._default_manager.filter(profile=profile).delete()
        profile.revision += 1
        profile.draft_revision += 1
        _apply(profile, pack, user)
        audit(user, profile, "profile.import", profile, before, snapshot(profile))
    return profile


class DraftMoved(Conflict, Refused):
    """The draft an import would replace was edited after the import was asked for.

    Replacing it would throw the edit away; the import is refused instead, saying who changed
    the draft and when, so that the person imports again knowing what the file replaces.
    """

    def __init__(self, profile: Profile, expected: int) -> None:
        last = AuditEntry.objects.filter(profile=profile).only("username", "at").first()
        who = f" by {last.username} at {last.at:%Y-%m-%d %H:%M} UTC" if last else ""
        message = (
            f"the draft was changed{who} after this import was queued, so it was not replaced "
            "(nothing is lost): import the file again to replace the draft as it is now"
        )
        Refused.__init__(self, [("draft", message)])
        self.expected = expected


def _import_new(pack: Pack, slug: str, user: Any) -> Profile:
    """A new profile from the pack; a taken slug is a conflict, also when two imports race."""
    advice = ": import as a new draft of it instead"
    if Profile.objects.filter(slug=slug).exists():
        raise SlugTaken(slug, advice)
    try:
        with transaction.atomic():
            profile = Profile(slug=slug)
            _apply(profile, pack, user)
            audit(user, profile, "profile.import", profile, None, snapshot(profile))
    except IntegrityError:
        # Both passed the check above; the unique slug let one in. The rest get the same 409.
        if not Profile.objects.filter(slug=slug).exists():
            raise
        raise SlugTaken(slug, advice) from None
    return profile


def _apply(profile: Profile, pack: Pack, user: Any) -> None:
    profile.name, profile.description = pack.profile.name, pack.profile.description
    profile.default_route = pack.default_route or ""
    profile.out_of_scope = list(pack.out_of_scope)
    profile.no_background = pack.no_background
    policy, triage = pack.policy, pack.triage
    profile.floor, profile.near_tie_margin = policy.floor, policy.near_tie_margin
    profile.menu_size, profile.strictness = policy.menu_size, policy.strictness
    profile.scorer_kind = pack.scorer.kind
    profile.scorer_settings = scorer_settings(pack.scorer)
    profile.triage_mode = triage.mode
    profile.ambiguity_confidence_floor = triage.ambiguity_confidence_floor
    profile.min_action_signals = triage.min_action_signals
    profile.action_verbs = _optional_list(triage.action_verbs)
    profile.knowledge_verbs = _optional_list(triage.knowledge_verbs)
    profile.question_pattern = triage.question_pattern or ""
    profile.updated_by = user
    profile.save()
    Route.objects.bulk_create(_route(profile, i, r, user) for i, r in enumerate(pack.routes))
    Rule.objects.bulk_create(_rule(profile, i, r, user) for i, r in enumerate(pack.rules))
    Tool.objects.bulk_create(_tool(profile, i, t, user) for i, t in enumerate(pack.tools))


def _optional_list(words: tuple[str, ...] | None) -> list[str] | None:
    return None if words is None else list(words)


def _route(profile: Profile, order: int, route: Any, user: Any) -> Route:
    action = route.action
    return Route(
        profile=profile,
        order=order,
        updated_by=user,
        name=route.name,
        display_name=route.display_name or "",
        description=route.description,
        examples=list(route.examples),
        keywords=list(route.keywords),
        never=list(route.never),
        action_kind=action.kind,
        delegate_agent=getattr(action, "agent", "") if action.kind == ActionKind.DELEGATE else "",
        stuck_message=getattr(action, "message", "") if action.kind == ActionKind.STUCK else "",
    )


def _rule(profile: Profile, order: int, rule: Any, user: Any) -> Rule:
    match = rule.match.model_dump(mode="json")
    kind = next(k for k in MatchKind.values if k in match)
    return Rule(
        profile=profile,
        order=order,
        updated_by=user,
        route_name=rule.route,
        match_kind=kind,
        keywords=match.get("keywords", []),
        regex=match.get("regex", ""),
        all_of=match.get("all", []),
        examples=list(rule.examples),
    )


def _tool(profile: Profile, order: int, tool: Any, user: Any) -> Tool:
    return Tool(
        profile=profile,
        order=order,
        updated_by=user,
        name=tool.name,
        description=tool.description,
        trigger_keywords=list(tool.trigger_keywords),
        always_include=tool.always_include,
    )
