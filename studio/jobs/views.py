"""Pages for jobs: a job's progress (polled by htmx), cancelling it, and the playground's model.

Every answer comes at once: these views read rows, they never wait for the work.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from routing_core import PackError
from studio.jobs import queue
from studio.jobs.kinds import KINDS
from studio.jobs.recovery import recover, recover_job
from studio.models import Job, Profile
from studio.shared.drafts import Compiled, model_note, playground_router
from studio.shared.pages import HtmxHttpRequest, get_profile, profile_context
from studio.shared.roles import EDIT, PUBLISH, VIEW

TEMPLATE = "studio/jobs/job.html"
# Who may see and cancel each kind: whoever may start it.
ROLE = {
    "test_run": VIEW,
    "overlap": VIEW,
    "tuning": VIEW,
    "training": EDIT,
    "publication": PUBLISH,
    "scrub": PUBLISH,
}
TITLE = {
    "test_run": "Test run",
    "overlap": "Overlap checkup",
    "training": "Training the model",
    "publication": "Publishing",
    "tuning": "Tuning the thresholds",
    "scrub": "Removing stored message texts",
}


def _job(request: HtmxHttpRequest, slug: str, kind: str, pk: int) -> tuple[Profile, Job]:
    if kind not in KINDS or kind not in ROLE:  # an import has its own page (views/importing)
        raise Http404("no such kind of job")
    if not request.user.has_perm(ROLE[kind]):
        raise PermissionDenied("Your role does not cover this job.")
    profile = get_profile(slug)
    job = get_object_or_404(KINDS[kind].model._default_manager.defer(*_heavy(kind)), pk=pk)
    if job.profile_id != profile.pk:
        raise Http404("no such job in this profile")
    return profile, job


def _heavy(kind: str) -> tuple[str, ...]:
    return {"training": ("source_json", "pack_json"), "test_run": ("results",)}.get(kind, ())


@require_GET
@login_required
def job_page(request: HtmxHttpRequest, slug: str, kind: str, pk: int) -> HttpResponse:
    profile, job = _job(request, slug, kind, pk)
    job = recover_job(job)
    context: dict[str, Any] = {
        "profile": profile,
        "job": job,
        "kind": kind,
        "title": TITLE[kind],
        "can_cancel": request.user.has_perm(ROLE[kind]),
    }
    if request.htmx:
        return render(request, f"{TEMPLATE}#job-status", context)
    # The full page has the profile header, whose badge needs the pack's report.
    return render(request, TEMPLATE, {**profile_context(request, profile), **context})


@require_POST
@login_required
def job_cancel(request: HtmxHttpRequest, slug: str, kind: str, pk: int) -> HttpResponse:
    """Ask the job to stop; back to its page (a run's own page for a test run)."""
    profile, job = _job(request, slug, kind, pk)
    job = queue.cancel(job)
    if request.htmx:
        context = {"profile": profile, "job": job, "kind": kind, "title": TITLE[kind]}
        return render(request, f"{TEMPLATE}#job-status", {**context, "can_cancel": True})
    if kind == "test_run":
        return redirect("test-run", slug=profile.slug, pk=job.pk)
    return redirect("job", slug=profile.slug, kind=kind, pk=job.pk)


@require_GET
@login_required
def model_status(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The playground's note on its model; `model-ready` tells the page to route again."""
    if not request.user.has_perm(VIEW):
        raise PermissionDenied("You have no role in the studio.")
    recover()
    profile = get_profile(slug)
    try:
        compiled: Compiled | None = playground_router(profile)
    except PackError:
        compiled = None
    response = render(
        request,
        "studio/jobs/_model_status.html",
        {"profile": profile, "model": model_note(compiled)},
    )
    if compiled is not None and compiled.scoring.exact and request.GET.get("waiting"):
        response = trigger_client_event(response, "model-ready")
    return response
