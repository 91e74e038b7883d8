"""API: "find a fix" for a failing test case — start (or reuse) the search, follow it, cancel it,
apply the edit it found. The same services and checks as the page (studio/suites/repairs.py).

Like the other job-backed endpoints (imports, publishing), a search runs on the job queue and
the request never waits for it: 202 with the search while it runs (`Location` names it in the
API, `Retry-After` says when to ask again), 200 once it has ended. It is for the editor role,
as the page is.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from ninja import Router, Status
from ninja.params import functions as params

from routing_core.repair import Edit
from studio.jobs import cancel_job, recover_job
from studio.models import Profile, RepairJob, TestCase
from studio.shared.api_access import USER_AUTH, profile_for
from studio.shared.roles import EDIT
from studio.shared.schemas import ERRORS, MAX_INT, SLUG, FixAppliedOut, FixSearchOut
from studio.suites.repairs import (
    apply_found,
    fix_warning,
    found_edit,
    is_applicable,
    request_repair,
    search_state,
)

router = Router(tags=["test-cases"], auth=USER_AUTH)
CASE_ID: Any = params.Path(..., ge=1, le=MAX_INT)
SEARCH_ID: Any = params.Path(..., ge=1, le=MAX_INT)
AGAIN: Any = params.Query(False, description="a new search although one of this draft ended")
RETRY_AFTER_S = "2"
BASE = "/{slug}/test-cases/{case_id}/fixes"
ONE = BASE + "/{search_id}"
SEARCH = {200: FixSearchOut, 202: FixSearchOut, **ERRORS}


def _case(request: HttpRequest, slug: str, case_id: int) -> TestCase:
    profile = profile_for(request, slug, EDIT)
    return get_object_or_404(
        TestCase.objects.select_related("profile"), profile=profile, pk=case_id
    )


def _search(
    request: HttpRequest, slug: str, case_id: int, search_id: int
) -> tuple[TestCase, RepairJob]:
    """The case (and its profile) loaded for the access check, and its search, whose
    `test_case` is that same row: nothing loads the case again."""
    test_case = _case(request, slug, case_id)
    job = get_object_or_404(RepairJob, test_case=test_case, pk=search_id)
    job.test_case = test_case
    return test_case, job


@router.post(BASE, response=SEARCH)
def start_fix_search(
    request: HttpRequest,
    response: HttpResponse,
    slug: str = SLUG,
    case_id: int = CASE_ID,
    again: bool = AGAIN,
) -> Status[dict[str, Any]]:
    """Search for the smallest edit that makes this test case pass without failing another.

    Reuses the search of the same case, draft revision and test cases if there is one (a
    retried call starts nothing new); `again` starts a fresh one after a cancel or a failure.
    202 while it runs, 200 when it has already ended.
    """
    test_case = _case(request, slug, case_id)
    job = request_repair(test_case, user=request.auth, again=again)  # type: ignore[attr-defined]
    return _answer(response, test_case, job)


@router.get(ONE, response={200: FixSearchOut, **ERRORS}, url_name="fix-search")
def read_fix_search(
    request: HttpRequest,
    response: HttpResponse,
    slug: str = SLUG,
    case_id: int = CASE_ID,
    search_id: int = SEARCH_ID,
) -> dict[str, Any]:
    """The search's state and progress; once done, the edit found, in words and as fields."""
    # This search, if its worker died, is queued again (or failed) before it is shown; the
    # poll recovers nothing else (the workers do).
    test_case, job = _search(request, slug, case_id, search_id)
    job = recover_job(job)
    if job.is_running:
        response["Retry-After"] = RETRY_AFTER_S
    return search_out(test_case, job)


@router.post(ONE + "/cancel", response=SEARCH)
def cancel_fix_search(
    request: HttpRequest,
    response: HttpResponse,
    slug: str = SLUG,
    case_id: int = CASE_ID,
    search_id: int = SEARCH_ID,
) -> Status[dict[str, Any]]:
    """Stop the search: a queued one at once (200), a running one at its next candidate (202)."""
    test_case, job = _search(request, slug, case_id, search_id)
    return _answer(response, test_case, cancel_job(job))


@router.post(ONE + "/apply", response={200: FixAppliedOut, **ERRORS})
def apply_fix(
    request: HttpRequest, slug: str = SLUG, case_id: int = CASE_ID, search_id: int = SEARCH_ID
) -> dict[str, Any]:
    """Apply the edit the search found, as the page's "Apply this edit" does (same audit entry).

    409 with the reason when there is no fix to apply, the draft or the test cases changed
    since the search, or someone saved the item meanwhile; 422 when the pack refuses it.
    """
    _, job = _search(request, slug, case_id, search_id)
    edit = apply_found(job, user=request.auth)  # type: ignore[attr-defined]
    profile = Profile.objects.get(pk=job.profile_id)
    detail = f"Applied: {edit.describe()}."
    return {"detail": detail, "edit": edit_out(edit), "draft_revision": profile.draft_revision}


def _answer(response: HttpResponse, test_case: TestCase, job: RepairJob) -> Status[dict[str, Any]]:
    """202 with where to ask while the search runs, 200 once it has ended."""
    body = search_out(test_case, job)
    if not job.is_running:
        return Status(200, body)
    response["Location"] = body["url"]
    response["Retry-After"] = RETRY_AFTER_S
    return Status(202, body)


def search_out(test_case: TestCase, job: RepairJob) -> dict[str, Any]:
    edit = found_edit(job)
    slug, fields = test_case.profile.slug, ("status", "done", "total", "percent", "draft_revision")
    url = reverse("api:fix-search", args=[slug, test_case.pk, job.pk])
    return {
        **{name: getattr(job, name) for name in fields},
        **{name: getattr(job, name) for name in ("reason", "misses", "tried", "note", "error")},
        "id": job.pk,
        "test_case": test_case.pk,
        "detail": search_state(job),
        "fix": edit_out(edit) if edit is not None else None,
        "applicable": edit is not None and is_applicable(job, test_case),
        "warning": fix_warning(job, test_case),
        "url": url,
        "page": reverse("tests-fix", args=[slug, test_case.pk]) + f"?job={job.pk}",
    }


def edit_out(edit: Edit) -> dict[str, Any]:
    """routing_core's `Edit` as its fields, and in words."""
    return {**asdict(edit), "description": edit.describe()}
