"""Page: the smallest fix for a failing test case, and applying it (editors)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from routing_core import PackError
from routing_core.repair import EDIT_KINDS, Edit
from studio.models import TestCase
from studio.playground import ModelPending
from studio.repairs import apply_repair, repair_case
from studio.roles import can_edit
from studio.services import Conflict, Refused
from studio.suggestions import llm_client
from studio.views._common import HtmxHttpRequest, get_profile, profile_context, studio_page

# The suite must run on the model of exactly these routes; the last edit's is still learning.
_PENDING = "The routes changed a moment ago and are still being learned: find a fix again shortly."


@require_http_methods(["GET", "POST"])
@studio_page
def case_fix(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    if not can_edit(request.user):
        raise PermissionDenied("Fixing cases is for editors.")
    test_case = get_object_or_404(TestCase, profile=get_profile(slug), pk=pk)
    if request.method == "POST":
        return _apply(request, test_case)
    try:
        report, note = repair_case(test_case, llm_client())
    except PackError:
        report, note = None, "The draft has problems to fix first (see the routes page)."
    except ModelPending:
        report, note = None, _PENDING
    context = profile_context(request, test_case.profile, case=test_case, repair=report, note=note)
    return render(request, "studio/case_fix.html", context)


def _apply(request: HtmxHttpRequest, test_case: TestCase) -> HttpResponse:
    kind = request.POST.get("kind", "")
    edit = Edit(
        kind if kind in EDIT_KINDS else "add_example",
        request.POST.get("route", ""),
        request.POST.get("text", ""),
        request.POST.get("source") or None,
    )
    try:
        apply_repair(test_case, edit, user=request.user)
    except (Refused, PackError) as exc:
        messages.error(request, "; ".join(m for _, m in exc.errors))
        return redirect("tests-fix", slug=test_case.profile.slug, pk=test_case.pk)
    except ModelPending:
        messages.error(request, _PENDING)
        return redirect("tests-fix", slug=test_case.profile.slug, pk=test_case.pk)
    except Conflict as exc:
        messages.error(request, f"Not applied: {exc}.")
        return redirect("tests-fix", slug=test_case.profile.slug, pk=test_case.pk)
    messages.success(request, f"Applied: {edit.describe()}.")
    return redirect("tests", slug=test_case.profile.slug)
