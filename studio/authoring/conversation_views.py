"""Page: test conversations a language model drafts for one route; a person keeps some as cases."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from studio.authoring.conversation_drafts import (
    SETUP_HELP,
    latest_draft,
    review_draft,
    start_draft,
)
from studio.models import ConversationDraft, Route
from studio.shared.errors import Conflict
from studio.shared.llm import llm_client
from studio.shared.pages import HtmxHttpRequest, get_profile, profile_context, studio_page
from studio.shared.roles import can_edit

PAGE = "studio/authoring/conversation_drafts.html"


@require_http_methods(["GET", "POST"])
@studio_page
def route_conversations(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    if not can_edit(request.user):
        raise PermissionDenied("Drafting test conversations is for editors.")
    route = get_object_or_404(Route, profile=get_profile(slug), pk=pk)
    action = request.POST.get("action")
    if action == "draft" and llm_client() is not None:
        start_draft(route, user=request.user)
        return redirect("route-conversations", slug=slug, pk=pk)
    if action == "review":
        return _review(request, route)
    return _page(request, route, latest_draft(route))


def _review(request: HtmxHttpRequest, route: Route) -> HttpResponse:
    job = get_object_or_404(ConversationDraft, route=route, pk=request.POST.get("draft") or 0)
    accepted = [int(n) for n in request.POST.getlist("accept") if n.isdigit()]
    try:
        added = review_draft(job, accepted, user=request.user)
    except Conflict as exc:
        return _page(request, route, job, error=str(exc), status=409)
    kept, offered = (
        len(set(accepted) & set(range(1, len(job.conversations) + 1))),
        len(job.conversations),
    )
    messages.success(
        request,
        f"Kept {kept} of {offered} conversations as test cases ({added} turns); "
        f"{offered - kept} rejected.",
    )
    return redirect("route-conversations", slug=route.profile.slug, pk=route.pk)


def _page(
    request: HtmxHttpRequest,
    route: Route,
    job: ConversationDraft | None,
    *,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    context = profile_context(
        request,
        route.profile,
        route=route,
        job=job,
        error=error,
        configured=llm_client() is not None,
        setup_help=SETUP_HELP,
    )
    if request.htmx and request.htmx.target == "drafts":
        return render(request, f"{PAGE}#drafts", context, status=status)
    return render(request, PAGE, context, status=status)
