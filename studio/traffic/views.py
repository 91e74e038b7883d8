"""Pages of the traffic loop: traffic with its charts, the review queue, replays.

Everyone with a role sees them; labelling a turn needs the editor role (studio_page), the
profile's data settings the publisher role. Replays change nothing, so viewers may start one.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from studio.agents import dropped_by_agents, traffic_settings
from studio.jobs import QueueFull
from studio.models import Event, Profile, ReplayRun
from studio.shared.errors import Conflict, Refused
from studio.shared.pages import (
    HtmxHttpRequest,
    get_profile,
    not_started,
    profile_context,
    reader_page,
    studio_page,
)
from studio.shared.roles import PUBLISH
from studio.suites import interrupt_stale
from studio.traffic.charts import share_chart, turns_chart
from studio.traffic.replays import changes_page, start_replay
from studio.traffic.review import (
    REASONS,
    SAVE_AS,
    confirm_turn,
    dismiss_turn,
    label_turn,
    review_queue,
    reviewed_count,
)
from studio.traffic.rollups import has_turns
from studio.traffic.scrubs import has_stored_texts, start_scrub
from studio.traffic.turns import period

PERIODS = {"1": 1, "7": 7, "30": 30}


@require_http_methods(["GET", "POST"])
@studio_page
def traffic_page(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    settings = traffic_settings(profile)
    if request.method == "POST":
        if not request.user.has_perm(PUBLISH):
            raise PermissionDenied("Changing what traffic is kept needs the publisher role.")
        settings.keep_message_text = request.POST.get("keep_message_text") == "on"
        settings.retention_days = _days(request.POST.get("retention_days"))
        settings.save()
        messages.success(request, "Traffic settings saved.")
        if not settings.keep_message_text and has_stored_texts(profile):
            messages.info(request, SCRUB_OFFER)
        return redirect("traffic", slug=slug)
    days = PERIODS.get(request.GET.get("days", "7"), 7)
    figures = period(profile, days)
    context = profile_context(
        request,
        profile,
        figures=figures,
        days=days,
        periods=PERIODS.values(),
        settings=settings,
        can_publish=request.user.has_perm(PUBLISH),
        turns=turns_chart(figures.buckets, hourly=days <= 1),
        outcome_chart=share_chart(figures.outcomes),
        by_chart=share_chart(figures.by),
        route_chart=share_chart(figures.routes),
        language_chart=share_chart(figures.languages),
        tier_chart=share_chart(figures.tiers) if len(figures.tiers) > 1 else None,
        dropped=dropped_by_agents(profile),
        replays=list(profile.replay_runs.defer("report")[:5]),
        offer_scrub=not settings.keep_message_text and has_stored_texts(profile),
        numbers=list(profile.versions.values_list("number", flat=True)),
        # No turn stored at all: the page says how turns arrive instead of empty charts.
        has_turns=figures.total > 0 or has_turns(profile.pk),
    )
    return render(request, "studio/traffic/traffic.html", context)


SCRUB_OFFER = (
    "No new message text is kept. The texts stored before stay until their turns are "
    "deleted, unless you remove them now (below)."
)


@require_POST
@studio_page
def scrub_start(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Queue the removal of the texts already stored (publisher, like the setting itself)."""
    profile = get_profile(slug)
    if not request.user.has_perm(PUBLISH):
        raise PermissionDenied("Removing stored texts needs the publisher role.")
    if traffic_settings(profile).keep_message_text:
        messages.error(request, "Turn “Keep message text” off first: texts are still kept.")
        return redirect("traffic", slug=slug)
    run = start_scrub(profile, user=request.user)
    return redirect("job", slug=slug, kind="scrub", pk=run.pk)


def _days(value: str | None) -> int:
    days = int(value) if value and value.isdigit() and len(value) < 4 else 30
    return min(max(days, 1), 365)


@require_GET
@studio_page
def review_page(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    return _review(request, get_profile(slug))


def _review(request: HtmxHttpRequest, profile: Profile, status: int = 200) -> HttpResponse:
    reason = _reason(request)
    context = profile_context(
        request,
        profile,
        items=review_queue(profile, reason=reason),
        reasons=REASONS,
        reason=reason,
        reason_words=REASONS.get(reason, ""),
        reviewed=reviewed_count(profile),
        route_names=list(profile.routes.values_list("name", flat=True)),
    )
    return render(request, "studio/traffic/review.html", context, status=status)


SAVED_AS = {
    "test": "a test case",
    "conversation": "a test case of the conversation up to it",
}


@require_POST
@studio_page
def review_label(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    """One answer for a row of the inbox: save it as something, "looks right", or dismiss."""
    profile = get_profile(slug)
    event = get_object_or_404(Event, profile=profile, pk=pk)
    how, right = request.POST.get("as", "test"), request.POST.get("route", "")[:64]
    if how in ("confirm", "dismiss"):
        _close(request, event, how)
        return _back_to_review(request, slug)
    save_as = SAVE_AS.get(how, "test")
    try:
        label_turn(event, right, save_as=save_as, user=request.user)
    except Refused as exc:
        messages.error(request, "Not saved: " + "; ".join(m for _, m in exc.errors))
    except Conflict:
        # Others kept editing the route under every try: say so on the page, label kept.
        messages.error(request, f"Not saved: {right} was being edited by others; label it again.")
        return _review(request, profile, status=409)
    else:
        where = f"an example of {right}" if save_as == "example" else SAVED_AS[save_as]
        messages.success(request, f"Saved “{event.message}” as {where}.")
    return _back_to_review(request, slug)


def _reason(request: HtmxHttpRequest) -> str:
    """The inbox's filter (a key of REASONS); an unknown one shows every turn."""
    reason = request.GET.get("reason") or request.POST.get("reason") or ""
    return reason if reason in REASONS else ""


def _back_to_review(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The inbox after an answer, with the filter the person was using."""
    reason = _reason(request)
    url = reverse("traffic-review", args=[slug])
    return redirect(f"{url}?{urlencode({'reason': reason})}" if reason else url)


def _close(request: HtmxHttpRequest, event: Event, how: str) -> None:
    if how == "confirm":
        n = confirm_turn(event, user=request.user)
        done = f"Marked “{event.message}” as right ({event.route or 'no route'})"
    else:
        n = dismiss_turn(event)
        done = f"Dismissed “{event.message}”"
    more = f", with the {n - 1} other turn{'s' if n > 2 else ''} like it" if n > 1 else ""
    messages.success(request, f"{done}{more}.")


@require_POST
@reader_page
def replay_start(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    target = request.POST.get("target", "draft")
    if target != "draft" and not _is_version(profile, target):
        raise Http404("no such version")
    try:
        run = start_replay(profile, target, user=request.user)
    except QueueFull as exc:
        return not_started(request, exc, reverse("traffic", args=[slug]))
    return redirect("replay", slug=slug, pk=run.pk)


def _is_version(profile: Profile, target: str) -> bool:
    return target.isdigit() and profile.versions.filter(number=int(target[:9])).exists()


def _number(value: str | None) -> int:
    return int(value) if value and value.isdigit() and len(value) < 19 else 0


def _replay_page(request: HtmxHttpRequest, run: ReplayRun) -> dict[str, Any]:
    """The group shown open (`?group=`, by rank) and one page of its changed turns (`?after=`).

    Reports stored before changed turns were rows hold their turns in the groups themselves:
    those are shown as they are."""
    groups = (run.report or {}).get("groups", [])
    if not groups or "turns" in groups[0]:
        return {"shown": None}
    index = min(_number(request.GET.get("group")), len(groups) - 1)
    group = groups[index]
    after = _number(request.GET.get("after"))
    turns, more = changes_page(run, group["old"], group["new"], after)
    return {"shown": index, "page_turns": turns, "next_after": more, "paged": after > 0}


@require_GET
@studio_page
def replay_detail(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    profile = get_profile(slug)
    interrupt_stale(profile)  # a replay whose worker died is queued again (studio.jobs.recovery)
    run = get_object_or_404(ReplayRun, profile=profile, pk=pk)
    context: dict[str, Any] = profile_context(
        request, profile, run=run, **_replay_page(request, run)
    )
    template = "studio/traffic/replay.html#replay" if request.htmx else "studio/traffic/replay.html"
    return render(request, template, context)
