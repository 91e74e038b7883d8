"""Page: the smallest fix for a failing test case, searched on the job queue, and applying it.

A GET only shows: the case, the newest search of it on the draft and suite as they are now
(or the one `?job=` names, which htmx polls while it runs), and a "Find a fix" button. The
button POSTs, which starts the search or reuses the one already made for this case, draft
revision and suite, and redirects to its progress (POST/redirect/GET): a crawler, a prefetch
or a reload starts nothing. When it is done the page shows every attempt in words and the fix
with its "apply" button (editors only).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from studio.jobs import cancel_job, recover_job
from studio.models import RepairJob, TestCase
from studio.shared.errors import Conflict, Refused
from studio.shared.pages import HtmxHttpRequest, get_profile, profile_context, studio_page
from studio.shared.roles import can_edit
from studio.suites.repairs import (
    NO_FIX,
    apply_found,
    current_search,
    fix_warning,
    found_edit,
    request_repair,
    search_state,
)


def _case(request: HtmxHttpRequest, slug: str, pk: int) -> TestCase:
    if not can_edit(request.user):
        raise PermissionDenied("Fixing cases is for editors.")
    return get_object_or_404(
        TestCase.objects.select_related("profile"), profile=get_profile(slug), pk=pk
    )


@require_http_methods(["GET", "POST"])
@studio_page
def case_fix(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    """GET: the case and its search, if any (`?job=` polls that one); POST: apply its fix."""
    test_case = _case(request, slug, pk)
    if request.method == "POST":
        return _apply(request, test_case)
    wanted = request.GET.get("job", "")
    job = (
        get_object_or_404(RepairJob, test_case=test_case, pk=int(wanted))
        if wanted.isdigit()
        else current_search(test_case)
    )
    if job is not None:  # if its worker died, it is queued again (or failed) before it is shown
        job = recover_job(job)
    template = (
        "studio/suites/case_fix.html#fix-status" if request.htmx else "studio/suites/case_fix.html"
    )
    return render(request, template, _context(request, test_case, job))


def _context(
    request: HtmxHttpRequest, test_case: TestCase, job: RepairJob | None
) -> dict[str, Any]:
    return profile_context(
        request,
        test_case.profile,
        case=test_case,
        job=job,
        fix=found_edit(job) if job is not None else None,
        warning=fix_warning(job, test_case) if job is not None else "",
        state=search_state(job) if job is not None else "",
        is_current=job is not None and job.draft_revision == test_case.profile.draft_revision,
    )


@require_POST
@studio_page
def case_fix_search(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    """The "Find a fix" button: queue the search (or reuse this draft's), then show it."""
    test_case = _case(request, slug, pk)
    return _to_job(test_case, request_repair(test_case, user=request.user))


@require_POST
@studio_page
def case_fix_cancel(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    test_case = _case(request, slug, pk)
    job = cancel_job(get_object_or_404(RepairJob, test_case=test_case, pk=_pk(request)))
    if request.htmx:
        return render(
            request, "studio/suites/case_fix.html#fix-status", _context(request, test_case, job)
        )
    return _to_job(test_case, job)


@require_POST
@studio_page
def case_fix_again(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    """Search again although a search of this draft ended (it was cancelled or failed)."""
    test_case = _case(request, slug, pk)
    return _to_job(test_case, request_repair(test_case, user=request.user, again=True))


def _pk(request: HtmxHttpRequest) -> int:
    value = request.POST.get("job", "")
    return int(value) if value.isdigit() else 0


def _to_job(test_case: TestCase, job: RepairJob) -> HttpResponse:
    response = redirect("tests-fix", slug=test_case.profile.slug, pk=test_case.pk)
    response["Location"] += f"?job={job.pk}"
    return response


def _apply(request: HtmxHttpRequest, test_case: TestCase) -> HttpResponse:
    job = RepairJob.objects.filter(test_case=test_case, pk=_pk(request)).first()
    if job is None:  # a search of another case, or none: nothing of this case to apply
        messages.error(request, f"Not applied: {NO_FIX}.")
        return redirect("tests-fix", slug=test_case.profile.slug, pk=test_case.pk)
    try:
        edit = apply_found(job, user=request.user)
    except Refused as exc:
        messages.error(request, "Not applied: " + "; ".join(m for _, m in exc.errors) + ".")
        return _to_job(test_case, job)
    except Conflict as exc:
        messages.error(request, f"Not applied: {exc}.")
        return _to_job(test_case, job)
    messages.success(request, f"Applied: {edit.describe()}.")
    return redirect("tests", slug=test_case.profile.slug)
