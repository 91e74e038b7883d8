"""Authoring help pages: lint, the overlap checkup and threshold tuning.

Viewers may look and run the checkup (it changes nothing authored); applying a suggested
threshold needs the editor role, like any edit of the policy.
"""

from __future__ import annotations

from collections import Counter

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from routing_core import PackError
from studio.jobs import QueueFull, training_note
from studio.models import OverlapCheck
from studio.shared.drafts import ModelPending
from studio.shared.errors import Conflict, Refused
from studio.shared.labels import field_label
from studio.shared.pages import (
    HtmxHttpRequest,
    get_profile,
    not_started,
    profile_context,
    reader_page,
    studio_page,
)
from studio.suites.checkups import TuningPending, apply_thresholds, lint_rows, route_links, tuning
from studio.suites.forms import ApplyThresholdsForm
from studio.suites.reports import sweep_chart, sweep_grid
from studio.suites.runs import interrupt_stale, start_overlap

OVERLAP_PAGE = "studio/suites/overlap.html"


@require_GET
@studio_page
def lint(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    try:
        rows = lint_rows(profile)
    except ModelPending as pending:
        context = profile_context(request, profile, model_pending=_pending(pending))
        return render(request, "studio/suites/lint.html", context)
    except PackError as exc:
        context = profile_context(request, profile, invalid=exc)
        return render(request, "studio/suites/lint.html", context)
    counts = Counter(row.finding.severity for row in rows)
    context = profile_context(request, profile, rows=rows, counts=counts)
    return render(request, "studio/suites/lint.html", context)


@require_GET
@reader_page
def overlap(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    interrupt_stale(profile)
    checks = profile.overlap_checks.all()
    wanted = request.GET.get("check")
    check = get_object_or_404(checks, pk=wanted) if wanted else checks.first()
    context = profile_context(request, profile, check=check, route_links=route_links(profile))
    if request.htmx and request.htmx.target == "overlap":
        return render(request, f"{OVERLAP_PAGE}#overlap", context)
    return render(request, OVERLAP_PAGE, context)


@require_POST
@reader_page
def overlap_start(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    try:
        check: OverlapCheck = start_overlap(get_profile(slug), user=request.user)
    except QueueFull as exc:
        return not_started(request, exc, reverse("overlap", args=[slug]))
    return redirect(f"{reverse('overlap', args=[slug])}?check={check.pk}")


@require_GET
@studio_page
def tuning_page(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    try:
        result = tuning(profile)
    except ModelPending as pending:
        context = profile_context(request, profile, model_pending=_pending(pending))
        return render(request, "studio/suites/tuning.html", context)
    except TuningPending as sweeping:
        job = sweeping.job
        state = "waiting for a worker" if job.is_queued else "in progress"
        note = f"Trying every floor and margin on {job.total} test cases: {state}."
        context = profile_context(request, profile, model_pending=note)
        return render(request, "studio/suites/tuning.html", context)
    except PackError as exc:
        return render(
            request, "studio/suites/tuning.html", profile_context(request, profile, invalid=exc)
        )
    context = profile_context(request, profile, tuning=result)
    if result is not None:
        margins, grid = sweep_grid(result.points, result.best)
        context.update(
            chart=sweep_chart(result.points, result.best.margin, result.best.floor),
            margins=margins,
            grid=grid,
        )
    return render(request, "studio/suites/tuning.html", context)


def _pending(pending: ModelPending) -> str:
    return training_note(pending.compiled.training, None).replace(
        "scores appear", "the figures appear"
    )


@require_POST
@studio_page
def tuning_apply(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    form = ApplyThresholdsForm(request.POST)
    if not form.is_valid():
        messages.error(
            request,
            "Nothing applied: "
            + "; ".join(
                f"{field_label(field)}: {' '.join(map(str, errors))}"
                for field, errors in form.errors.items()
            ),
        )
        return redirect("tuning", slug=slug)
    floor, margin = form.cleaned_data["floor"], form.cleaned_data["margin"]
    try:
        apply_thresholds(
            profile,
            floor,
            margin,
            user=request.user,
            expected_revision=form.cleaned_data["revision"],
        )
    except (Conflict, Refused) as exc:
        messages.error(request, f"Nothing applied: {exc}")
    else:
        shown = "none (the scorer's own)" if floor is None else f"{floor:g}"
        messages.success(request, f"Applied floor {shown} and near-tie margin {margin:g}.")
    return redirect("tuning", slug=slug)
