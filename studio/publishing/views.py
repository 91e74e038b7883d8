"""Pages: versions and environments, publish (with the diff against production), diff, tokens,
import. Publishing, moving environments and managing read tokens need the publisher role."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from routing_core import PackError
from studio.agents import unable_to_read
from studio.importing import MAX_IMPORT_BYTES, PACK, problem_lines, start_import
from studio.jobs import training_note
from studio.models import (
    SERVED,
    ApiToken,
    Environment,
    JobStatus,
    Profile,
    ReadToken,
    TokenScope,
    Version,
)
from studio.publishing.diff import PackDiff, diff_packs
from studio.publishing.gate import ReasonRequired, publish_through_gate, review_gate
from studio.publishing.versions import environments, pack_at, pack_diff, promote
from studio.shared.downloads import attachment
from studio.shared.drafts import ModelPending
from studio.shared.errors import Conflict, Refused
from studio.shared.labels import plain_problem
from studio.shared.packs import pack_report
from studio.shared.pages import HtmxHttpRequest, get_profile, profile_context, studio_page
from studio.shared.roles import PUBLISH
from studio.shared.tokens import create_api_token, create_read_token, revoke

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
        request,
        profile,
        envs=environments(profile),
        versions=list(profile.versions.all()),
        rollouts=list(profile.rollouts.filter(status__in=SERVED).select_related("candidate")),
    )
    return render(request, "studio/publishing/versions.html", context)


@require_http_methods(["GET", "POST"])
@studio_page
def publish_page(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    _publisher(request)
    gate = review_gate(profile, user=request.user)
    if request.htmx and request.method == "GET":  # the gate polls itself while the suite runs
        context = {"gate": gate, "profile": profile, "production": _production(profile)}
        return render(request, "studio/publishing/publish.html#gate", context)
    errors: list[str] = []
    typed = _typed(request)
    if request.method == "POST":
        try:
            _refuse_nul(request, "reason", "note")
            job = publish_through_gate(
                profile,
                gate,
                user=request.user,
                reason=typed["reason"],
                note=typed["note"],
                environment=typed["environment"] or None,
                expected_draft_revision=_int(request.POST.get("draft_revision")),
            )
        except PackError as exc:
            errors = [plain_problem(path, message) for path, message in exc.errors]
        except ReasonRequired as exc:
            errors = [f"The checks are red ({exc}): say why you publish anyway, or fix it first."]
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
    context = _context(
        request, profile, errors=errors, gate=gate, typed=typed, **_against_production(profile)
    )
    return render(request, "studio/publishing/publish.html", context, status=422 if errors else 200)


def _typed(request: HtmxHttpRequest) -> dict[str, str]:
    """What the publish form holds: a refused publish shows it again, as typed and chosen
    (docs/product/publishing.md); staging to start."""
    if request.method != "POST":
        return {"note": "", "reason": "", "environment": "staging"}
    environment = request.POST.get("environment", "")
    return {
        "note": request.POST.get("note", "")[:8000],
        "reason": request.POST.get("reason", "")[:2000],
        "environment": environment if environment in ("staging", "production") else "",
    }


def _against_production(profile: Profile) -> dict[str, Any]:
    """What the publisher reviews: the draft's problems, or its diff against production."""
    production = _production(profile)
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


def _production(profile: Profile) -> Environment:
    return next(e for e in environments(profile) if e.name == "production")


def _first_diff(profile: Profile) -> PackDiff:
    """Everything is new; the cases are counted (no verdict can flip against nothing)."""
    return diff_packs(None, pack_at(profile, "draft"), profile.test_cases.all())


def _user_id(request: HtmxHttpRequest) -> int:
    return int(request.user.pk or 0)  # studio_page let only signed-in users in


def _refuse_nul(request: HtmxHttpRequest, *fields: str) -> None:
    """No database stores a NUL character (PostgreSQL refuses it): say so instead of a 500."""
    for field in fields:
        if "\x00" in request.POST.get(field, ""):
            raise Refused([(field, f"the {field} contains a NUL character: remove it")])


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() and len(value) < 10 else None


@require_http_methods(["GET", "POST"])
@studio_page
def promote_view(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """GET: "serve version N on X?" with what it changes; POST with `confirm`: do it.

    Production changes what every agent serves, so one click never does it: a POST without
    the confirmation is sent to the confirmation page instead.
    """
    profile = get_profile(slug)
    _publisher(request)
    data = request.POST if request.method == "POST" else request.GET
    version = get_object_or_404(Version, profile=profile, number=_int(data.get("version")) or 0)
    env = next((e for e in environments(profile) if e.name == data.get("environment")), None)
    if env is None:
        raise Http404("No such environment.")
    if request.method == "GET":
        context = _context(request, profile, **_promotion(profile, version, env))
        return render(request, "studio/publishing/promote_confirm.html", context)
    if data.get("confirm") != "yes":
        query = urlencode({"version": version.number, "environment": env.name})
        return redirect(f"{reverse('promote', args=[slug])}?{query}")
    try:
        promote(version, env.name, user=request.user, expected_revision=_int(data.get("revision")))
    except (Conflict, Refused) as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{env.name} now serves version {version.number}.")
    return redirect("versions", slug=slug)


def _promotion(profile: Profile, version: Version, env: Environment) -> dict[str, Any]:
    """What the confirmation names: the version, what the environment serves now, the diff."""
    current = env.version
    is_rollback = current is not None and version.number < current.number
    diff = pack_diff(profile, str(current.number), str(version.number)) if current else None
    return {
        "version": version,
        "env": env,
        "current": current,
        "is_rollback": is_rollback,
        "diff": diff,
    }


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
            request,
            "studio/publishing/diff.html",
            _context(request, profile, numbers=numbers, diff=None),
        )
    problems: list[str] = []
    diff = None
    try:
        diff = pack_diff(profile, old, new)
    except PackError as exc:
        problems = [plain_problem(path, message) for path, message in exc.errors]
    except ModelPending as pending:
        problems = [training_note(pending.compiled.training)]
    context = _context(
        request, profile, numbers=numbers, old=old, new=new, diff=diff, problems=problems
    )
    return render(request, "studio/publishing/diff.html", context)


@require_http_methods(["GET", "POST"])
@studio_page
def tokens_page(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    if request.method == "POST":
        secret = _token_action(request, profile)
        if secret is not None:  # shown on the next page load only (post/redirect/get)
            request.session[NEW_SECRET] = secret
        return redirect("tokens", slug=slug)
    secret = request.session.pop(NEW_SECRET, None)
    context = _context(
        request,
        profile,
        read_tokens=list(profile.read_tokens.filter(scope=TokenScope.PULL)),
        event_tokens=list(profile.read_tokens.filter(scope=TokenScope.EVENTS)),
        api_tokens=list(ApiToken.objects.filter(user_id=_user_id(request))),
        secret=secret,
    )
    return render(request, "studio/publishing/tokens.html", context)


# A new token's secret waits in the session for the redirect's page load, then is forgotten: a
# reload can neither create a second token nor show the secret again.
NEW_SECRET = "new-token-secret"


def _token_action(request: HtmxHttpRequest, profile: Profile) -> str | None:
    """Create (returns the secret, shown once) or revoke a token."""
    action, name = request.POST.get("action"), request.POST.get("name", "").strip()[:100]
    if "\x00" in name:
        messages.error(request, "Not created: the name contains a NUL character; remove it.")
        return None
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
    """Upload a pack; a worker imports it (studio.importing.imports). Finished at once (the job was
    quick, or the tests run jobs in place): the profile, or the problems here; else its page."""
    into = get_profile(slug) if slug else None
    errors: list[str] = []
    if request.method == "POST":
        upload = request.FILES.get("file")
        try:
            if upload is None:
                raise Refused([("file", "choose a pack file (.json) to import")])
            new_slug = request.POST.get("slug", "").strip()
            job = start_import(
                PACK,
                upload.read(MAX_IMPORT_BYTES + 1),
                user=request.user,
                filename=upload.name or "",
                slug=new_slug,
                into=into,
            )
        except (PackError, Refused) as exc:
            errors = [plain_problem(path, message) for path, message in exc.errors]
        else:
            if job.status == JobStatus.FAILED and job.problems:
                errors = problem_lines(job)
            elif job.status == JobStatus.DONE and job.profile is not None:
                messages.success(request, f"Imported the pack into {job.profile.slug}.")
                return redirect("profile-detail", slug=job.profile.slug)
            else:
                return redirect("import-job", pk=job.pk)
    context = {
        "into": into,
        "errors": errors,
        "limit_kb": MAX_IMPORT_BYTES // 1024,
        "slug": request.POST.get("slug", "")[:64],  # kept when refused (browsers drop the file)
    }
    if into is not None:
        context = profile_context(request, into, **context)
    return render(request, "studio/publishing/import.html", context, status=422 if errors else 200)
