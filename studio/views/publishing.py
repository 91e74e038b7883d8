"""Pages: versions and environments, publish (with the diff against production), diff, tokens,
import. Publishing, moving environments and managing read tokens need the publisher role."""

from __future__ import annotations

import re
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from routing_core import PackError
from studio.agents import unable_to_read
from studio.diff import PackDiff, diff_packs
from studio.downloads import attachment
from studio.jobs.notes import training_note
from studio.models import ApiToken, JobStatus, Profile, ReadToken, TokenScope, Version
from studio.playground import ModelPending
from studio.publishing import (
    MAX_IMPORT_BYTES,
    environments,
    import_pack,
    pack_at,
    pack_diff,
    promote,
    read_upload,
    start_publication,
)
from studio.roles import PUBLISH
from studio.services import Conflict, Refused, pack_report
from studio.tokens import create_api_token, create_read_token, revoke
from studio.views._common import HtmxHttpRequest, get_profile, profile_context, studio_page

_SIDE = re.compile(r"^(draft|[1-9][0-9]{0,8})$")


def _publisher(request: HtmxHttpRequest) -> None:
    if not request.user.has_perm(PUBLISH):
        raise PermissionDenied("Publishing needs the publisher role.")


def _context(request: HtmxHttpRequest, profile: Profile, **extra: Any) -> dict[str, Any]:
    can_publish = request.user.has_perm(PUBLISH)
    return profile_context(request, profile, can_publish=can_publish, **extra)


@require_GET
@studio_page
def versions(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    context = _context(
        request, profile, envs=environments(profile), versions=list(profile.versions.all())
    )
    return render(request, "studio/versions.html", context)


@require_http_methods(["GET", "POST"])
@studio_page
def publish_page(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    _publisher(request)
    errors: list[str] = []
    if request.method == "POST":
        try:
            job = start_publication(
                profile,
                user=request.user,
                note=request.POST.get("note", "")[:8000],
                environment=request.POST.get("environment") or None,
                expected_draft_revision=_int(request.POST.get("draft_revision")),
            )
        except PackError as exc:
            errors = [f"{path}: {message}" for path, message in exc.errors]
        except (Conflict, Refused) as exc:
            errors = [str(exc)]
        else:
            if job.is_running:  # on a worker: its page shows the progress
                return redirect("job", slug=slug, kind="publication", pk=job.pk)
            if job.status == JobStatus.DONE and job.version is not None:
                messages.success(request, f"Published version {job.version.number}.")
                return redirect("versions", slug=slug)
            errors = [job.error or "The publication was cancelled."]
        profile = get_profile(slug)
    return render(
        request,
        "studio/publish.html",
        _context(request, profile, errors=errors, **_against_production(profile)),
        status=422 if errors else 200,
    )


def _against_production(profile: Profile) -> dict[str, Any]:
    """What the publisher reviews: the draft's problems, or its diff against production."""
    production = next(e for e in environments(profile) if e.name == "production")
    report = pack_report(profile)
    diff: PackDiff | None = None
    training = None
    if report.is_valid:
        old = str(production.version.number) if production.version else None
        try:
            diff = pack_diff(profile, old, "draft") if old else _first_diff(profile)
        except ModelPending as pending:  # the diff's verdict flips need the draft's model
            training = pending.compiled.training
    return {
        "production": production,
        "diff": diff,
        "draft_problems": report.problems,
        "outdated_agents": unable_to_read(profile),
        "model_training": training,
    }


def _first_diff(profile: Profile) -> PackDiff:
    return diff_packs(None, pack_at(profile, "draft"))


def _user_id(request: HtmxHttpRequest) -> int:
    return int(request.user.pk or 0)  # studio_page let only signed-in users in


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() and len(value) < 10 else None


@require_POST
@studio_page
def promote_view(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    _publisher(request)
    number = _int(request.POST.get("version"))
    version = get_object_or_404(Version, profile=profile, number=number or 0)
    environment = request.POST.get("environment", "")
    try:
        promote(
            version,
            environment,
            user=request.user,
            expected_revision=_int(request.POST.get("revision")),
        )
    except (Conflict, Refused) as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{environment} now serves version {version.number}.")
    return redirect("versions", slug=slug)


@require_GET
@studio_page
def download(request: HtmxHttpRequest, slug: str, number: int) -> HttpResponse:
    version = get_object_or_404(Version, profile=get_profile(slug), number=number)
    return attachment(version.pack_json, "application/json", version.filename)


@require_GET
@studio_page
def diff_page(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    numbers = list(profile.versions.values_list("number", flat=True))
    old = request.GET.get("old") or (str(numbers[0]) if numbers else "")
    new = request.GET.get("new") or "draft"
    if not (_SIDE.match(old) and _SIDE.match(new)):
        return render(
            request, "studio/diff.html", _context(request, profile, numbers=numbers, diff=None)
        )
    problems: list[str] = []
    diff = None
    try:
        diff = pack_diff(profile, old, new)
    except PackError as exc:
        problems = [f"{path}: {message}" for path, message in exc.errors]
    except ModelPending as pending:
        problems = [training_note(pending.compiled.training)]
    context = _context(
        request, profile, numbers=numbers, old=old, new=new, diff=diff, problems=problems
    )
    return render(request, "studio/diff.html", context)


@require_http_methods(["GET", "POST"])
@studio_page
def tokens_page(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    secret = None
    if request.method == "POST":
        secret = _token_action(request, profile)
        if secret is None:
            return redirect("tokens", slug=slug)
    context = _context(
        request,
        profile,
        read_tokens=list(profile.read_tokens.filter(scope=TokenScope.PULL)),
        event_tokens=list(profile.read_tokens.filter(scope=TokenScope.EVENTS)),
        api_tokens=list(ApiToken.objects.filter(user_id=_user_id(request))),
        secret=secret,
    )
    return render(request, "studio/tokens.html", context)


def _token_action(request: HtmxHttpRequest, profile: Profile) -> str | None:
    """Create (returns the secret, shown once) or revoke a token."""
    action, name = request.POST.get("action"), request.POST.get("name", "").strip()[:100]
    if action == "create-read":
        _publisher(request)
        return create_read_token(profile, name or "agent", user=request.user)[1]
    if action == "create-events":
        _publisher(request)
        scope = TokenScope.EVENTS
        return create_read_token(profile, name or "agent events", user=request.user, scope=scope)[1]
    if action == "create-api":
        return create_api_token(request.user, name or "script")[1]
    if action == "revoke-read":
        _publisher(request)
        token = get_object_or_404(ReadToken, profile=profile, pk=_int(request.POST.get("token")))
        revoke(token, user=request.user)
    elif action == "revoke-api":
        api = get_object_or_404(
            ApiToken, user_id=request.user.pk, pk=_int(request.POST.get("token"))
        )
        revoke(api, user=request.user)
    messages.success(request, "Token revoked.")
    return None


@require_http_methods(["GET", "POST"])
@studio_page
def import_page(request: HtmxHttpRequest, slug: str | None = None) -> HttpResponse:
    into = get_profile(slug) if slug else None
    errors: list[str] = []
    if request.method == "POST":
        upload = request.FILES.get("file")
        try:
            if upload is None:
                raise Refused([("file", "choose a pack file (.json) to import")])
            data = read_upload(upload.read(MAX_IMPORT_BYTES + 1))
            new_slug = request.POST.get("slug", "").strip() or None
            profile = import_pack(data, user=request.user, into=into, slug=new_slug)
        except (PackError, Refused) as exc:
            errors = [f"{path}: {message}" for path, message in exc.errors]
        else:
            messages.success(request, f"Imported the pack into {profile.slug}.")
            return redirect("profile-detail", slug=profile.slug)
    context = {"into": into, "errors": errors, "limit_kb": MAX_IMPORT_BYTES // 1024}
    if into is not None:
        context = profile_context(request, into, **context)
    return render(request, "studio/import.html", context, status=422 if errors else 200)
