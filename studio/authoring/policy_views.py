"""The policy editor and the triage lexicon editor: one form each over the profile's own fields."""

from __future__ import annotations

import json
from collections.abc import Callable

from django.contrib import messages
from django.db import models
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from routing_core import (
    DEFAULT_ACTION_VERBS,
    DEFAULT_KNOWLEDGE_VERBS,
    DEFAULT_QUESTION_PATTERN,
    PackError,
    new_scorer_settings,
    starter_out_of_scope,
)
from routing_core.lexicons import LEXICONS, mix
from studio.authoring.conflicts import EditConflict, reshown, with_choices
from studio.authoring.forms import LexiconForm, PackForm, PolicyForm
from studio.models import AuditEntry, Profile
from studio.shared.cosine_thresholds import CLEARED_ACTION, NOTICE_KEY
from studio.shared.drafts import scorer_defaults
from studio.shared.edits import path_tokens, save_profile
from studio.shared.errors import Conflict, Refused
from studio.shared.packs import build_pack, build_pack_dict, check_pack, without_encoders
from studio.shared.pages import HtmxHttpRequest, fragment, get_profile, profile_context, studio_page


def _edit(
    request: HtmxHttpRequest,
    slug: str,
    form_class: type[PackForm],
    template: str,
    page: str,
    extra: Callable[[Profile], dict[str, object]] | None = None,
    initial: dict[str, object] | None = None,
) -> HttpResponse:
    posted = with_choices(request.POST) if request.method == "POST" else None
    form = form_class(posted, instance=get_profile(slug), initial=initial)
    status, conflict = 200, None
    if request.method == "POST":
        try:
            status = _save(request, form)
        except Conflict as exc:
            status, (conflict, form) = 409, _conflict(request, slug, form_class, exc)
        if status == 200 and not request.htmx:
            messages.success(request, "Saved.")
            return redirect(page, slug=slug)
        if status == 200:
            form = form_class(instance=get_profile(slug))
    formulas = getattr(form_class, "formulas", {})
    rows = [
        (form[name], _default(form, name), formulas.get(name, ""))  # no default: "none"
        for name in form.fields
        if name != "revision"
    ]
    profile = get_profile(slug)  # as saved: what the page shows besides the form
    more = extra(profile) if extra else {}
    saved = request.method == "POST" and status == 200  # htmx stays on the page: say so
    context = profile_context(
        request,
        profile,
        form=form,
        rows=rows,
        saved=saved,
        conflict=conflict,
        **_defaults(),
        **more,
    )
    if request.htmx and request.method == "POST":
        return fragment(request, f"{template}#settings-form", context, status=status)
    return render(request, template, context, status=status)


def _add_pack_errors_too(form: PackForm) -> None:
    """Next to the form's own errors, the pack's verdict on the values that passed them, so a
    person fixes every bad value in one go rather than one per save."""
    saved = get_profile(form.instance.slug)
    known = set(check_pack(build_pack_dict(saved)))
    candidate = build_pack_dict(form.instance)  # the values that passed the form's checks
    new = [p for p in check_pack(candidate) if p not in known]
    form.add_pack_errors([p for p in new if form.field_for(path_tokens(p[0])) not in form.errors])


def _default(form: PackForm, name: str) -> object:
    defaults: dict[str, object] = getattr(form, "defaults", {})
    if name in defaults:  # a field that is no column of the profile says its own
        return defaults[name]
    field = Profile._meta.get_field(name)
    value = field.get_default() if isinstance(field, models.Field) else None
    if isinstance(value, bool):  # a box: said as a person sees it
        return "ticked" if value else "not ticked"
    return None if value == [] else value  # an empty list reads "none"


# A settings form posted without the version it was read at (an old page, a hand-made post).
OUT_OF_DATE = (
    "This form was out of date (it did not say which version it changed): reload the page."
)


def _save(request: HtmxHttpRequest, form: PackForm) -> int:
    if not form.is_valid():
        _add_pack_errors_too(form)
        return 422
    if form.cleaned_data["revision"] is None:  # not a conflict: no edit to compare with
        form.add_error(None, OUT_OF_DATE)
        return 422
    profile: Profile = form.instance
    try:
        save_profile(profile, user=request.user, expected_revision=form.cleaned_data["revision"])
    except Refused as exc:
        form.add_pack_errors(exc.errors)
        return 422
    return 200


def _conflict(
    request: HtmxHttpRequest, slug: str, form_class: type[PackForm], exc: Conflict
) -> tuple[EditConflict, PackForm]:
    """Someone saved the settings first: theirs beside yours, your text kept in the form."""
    current = exc.current or get_profile(slug)
    yours = form_class(request.POST, instance=current)
    conflict, data = reshown(
        request.POST, yours, form_class(instance=current), exc, current.revision
    )
    return conflict, form_class(data, instance=current)


def _defaults() -> dict[str, object]:
    return {
        "default_action_verbs": sorted(DEFAULT_ACTION_VERBS),
        "default_knowledge_verbs": sorted(DEFAULT_KNOWLEDGE_VERBS),
        "default_question_pattern": DEFAULT_QUESTION_PATTERN,
    }


@require_http_methods(["GET", "POST"])
@studio_page
def policy(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    return _edit(request, slug, PolicyForm, "studio/authoring/policy.html", "policy", extra=_scorer)


@require_POST
@studio_page
def out_of_scope_starter(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The policy page's one-click start: add suggested out-of-scope examples (off-topic
    messages no route of this profile is near, `starter_out_of_scope`) for the person to
    review and prune, then show them in the form."""
    profile = get_profile(slug)
    try:
        starter = starter_out_of_scope(build_pack(profile))
    except PackError:
        messages.error(request, "Fix the draft's problems first: it is not a valid pack yet.")
        return redirect("policy", slug=slug)
    profile.out_of_scope = [*profile.out_of_scope, *starter]
    try:
        save_profile(profile, user=request.user, expected_revision=profile.revision)
    except (Conflict, Refused) as exc:
        messages.error(request, f"Nothing was added: {exc}")
    else:
        messages.success(
            request,
            f"Added {len(starter)} suggested out-of-scope examples. Read them below and remove"
            " any message one of your routes is for.",
        )
    return redirect("policy", slug=slug)


def _scorer(profile: Profile) -> dict[str, object]:
    """The imported scorer settings, which the policy page shows read-only ("" when none),
    and the floor the scorer uses when the policy sets none."""
    settings = profile.active_scorer_settings
    return {
        "scorer_settings": json.dumps(settings, indent=2) if _says_more(profile) else "",
        "scorer_defaults": scorer_defaults(profile),
        "cleared_notice": _cleared_notice(profile),
    }


def _says_more(profile: Profile) -> bool:
    """Whether the stored scorer settings hold more than the form above sets (the kind and
    its sentence encoder): only then are they shown, as the imported settings they are."""
    settings = profile.active_scorer_settings
    if not settings:
        return False
    kind = profile.scorer_kind
    return without_encoders(settings) != without_encoders(new_scorer_settings(kind))


def _cleared_notice(profile: Profile) -> str:
    """Why migration 0014 cleared a cosine-era embedding threshold, while that is still the
    last change of the profile's settings: once a person saves them, they have seen it."""
    last = AuditEntry.objects.filter(profile=profile, object_type="profile").first()
    if last is None or last.action != CLEARED_ACTION or not isinstance(last.after, dict):
        return ""
    return str(last.after.get(NOTICE_KEY, ""))


@require_http_methods(["GET", "POST"])
@studio_page
def lexicons(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The lexicon editor; `?start_from=es&start_from=en` fills its boxes (unsaved) with the
    built-in words of those languages, for the person to review and save."""
    codes = [c for c in request.GET.getlist("start_from") if c in LEXICONS]
    codes = codes if request.method == "GET" else []
    return _edit(
        request,
        slug,
        LexiconForm,
        "studio/authoring/lexicons.html",
        "lexicons",
        extra=lambda profile: _languages(profile, codes),
        initial=_started_from(codes) if codes else None,
    )


def _started_from(codes: list[str]) -> dict[str, object]:
    """The form's boxes for a mix of built-in lexicons; English alone is the empty default."""
    if codes == ["en"]:
        return {"action_verbs": [], "knowledge_verbs": [], "question_pattern": ""}
    chosen = mix(codes)
    return {
        "action_verbs": sorted(chosen.action_verbs),
        "knowledge_verbs": sorted(chosen.knowledge_verbs),
        "question_pattern": chosen.question_pattern,
    }


def _languages(profile: Profile, codes: list[str]) -> dict[str, object]:
    """The language choices, ticked where the lexicons (as shown) hold all of a language's
    action verbs, and the names of the languages just filled in."""
    shown: list[str] = sorted(mix(codes).action_verbs) if codes else profile.action_verbs or []
    words = set(shown) if shown and codes != ["en"] else set(DEFAULT_ACTION_VERBS)
    return {
        "languages": [
            (code, lex.name, lex.action_verbs <= words) for code, lex in LEXICONS.items()
        ],
        "started_from": " + ".join(LEXICONS[c].name for c in dict.fromkeys(codes)),
    }
