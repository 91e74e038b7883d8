"""Pages: start a rollout of a version, and a rollout's page (its figures, the routes that move,
sample turns, live against candidate over time, its conditions, stop and promote)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from studio.models import Rollout, Version
from studio.publishing.rollout_chart import chart_summary, rollout_chart
from studio.publishing.rollout_guards import figures, moves, over_time, samples
from studio.publishing.rollouts import (
    Conditions,
    promote_candidate,
    set_conditions,
    start_rollout,
    stop,
)
from studio.publishing.views import _context, _publisher
from studio.shared.errors import Conflict, Refused
from studio.shared.pages import HtmxHttpRequest, get_profile, studio_page


@require_http_methods(["GET", "POST"])
@studio_page
def rollout_new(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """GET: the form (version, environment, mode, share, conditions); POST: start it."""
    profile = get_profile(slug)
    _publisher(request)
    data = request.POST if request.method == "POST" else request.GET
    version = get_object_or_404(Version, profile=profile, number=_number(data.get("version")))
    errors: dict[str, str] = {}
    if request.method == "POST":
        try:
            rollout = start_rollout(
                profile,
                data.get("environment", ""),
                version,
                mode=data.get("mode", ""),
                share=_number(data.get("share")),
                conditions=_conditions(data),
                user=request.user,
            )
        except Refused as exc:
            errors = dict(exc.errors)
        except Conflict as exc:
            errors = {"environment": str(exc)}
        else:
            messages.success(request, f"Rollout of version {version.number} started.")
            return redirect("rollout", slug=slug, pk=rollout.pk)
    context = _context(request, profile, version=version, data=data, errors=errors)
    return render(
        request, "studio/publishing/rollout_new.html", context, status=422 if errors else 200
    )


@require_GET
@studio_page
def rollout_page(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    profile = get_profile(slug)
    rollout = get_object_or_404(
        Rollout.objects.select_related("environment", "candidate", "live"), profile=profile, pk=pk
    )
    found = figures(rollout) if rollout.is_served else rollout.figures
    hours = [] if request.htmx else over_time(rollout)  # the 5-second refresh redraws figures
    context = _context(
        request,
        profile,
        rollout=rollout,
        figures=found,
        moves=moves(rollout),
        samples=samples(rollout),
        hours=hours,
        chart=rollout_chart(hours),
        chart_summary=chart_summary(hours),
        errors={},
        data={},
    )
    template = "studio/publishing/rollout.html#figures" if request.htmx else None
    return render(request, template or "studio/publishing/rollout.html", context)


@require_POST
@studio_page
def rollout_action(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    """Set the conditions, stop, or promote (each audited with the figures as they stand)."""
    profile = get_profile(slug)
    _publisher(request)
    rollout = get_object_or_404(Rollout, profile=profile, pk=pk)
    action = request.POST.get("action")
    try:
        if action == "conditions":
            set_conditions(rollout, _conditions(request.POST), user=request.user)
            messages.success(request, "Conditions saved: they are checked as turns come in.")
        elif action == "stop":
            stop(rollout, user=request.user)
            messages.success(
                request, "Rollout stopped: agents are back on live at their next pull."
            )
        elif action == "promote":
            promote_candidate(
                rollout, "promoted by a publisher", figures(rollout), user=request.user
            )
            messages.success(request, "The candidate is live.")
    except (Refused, Conflict) as exc:
        messages.error(request, str(exc))
    return redirect("rollout", slug=slug, pk=pk)


def _number(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


def _points(value: str | None) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return -1.0  # refused with the reason by Conditions.problems


def _conditions(data: Any) -> Conditions:
    return Conditions(
        max_unmatched_rise=_points(data.get("max_unmatched_rise")),
        max_reask_rise=_points(data.get("max_reask_rise")),
        min_turns=_number(data.get("min_turns") or "500"),
        on_hold=data.get("on_hold", "ask"),
    )
