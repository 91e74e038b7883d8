"""Page: suggested examples and never-phrases for one route; a person ticks what to keep."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from routing_core import PackError
from routing_core.scorers import ScorerFailure
from routing_core.suggest import Kind, SuggestionBatch
from studio.authoring.suggestions import SETUP_HELP, accept_suggestions, suggest_for_route
from studio.models import Route
from studio.shared.errors import Conflict, Refused
from studio.shared.llm import llm_client
from studio.shared.pages import HtmxHttpRequest, get_profile, profile_context, studio_page
from studio.shared.roles import can_edit

KINDS: dict[str, str] = {"examples": "examples", "never": "never-phrases"}


@require_http_methods(["GET", "POST"])
@studio_page
def route_suggestions(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    if not can_edit(request.user):
        raise PermissionDenied("Suggestions are for editors.")
    route = get_object_or_404(Route, profile=get_profile(slug), pk=pk)
    kind: Kind = "never" if request.POST.get("kind") == "never" else "examples"
    if request.method == "POST" and request.POST.get("action") == "accept":
        return _accept(request, route, kind)
    batch, error = None, ""
    client = llm_client()
    if request.method == "POST" and client is not None:
        try:
            batch = suggest_for_route(client, route, kind)
        except ScorerFailure as exc:
            error = f"The language model did not answer usefully: {exc}. Try again later."
        except PackError:
            error = "The draft has problems to fix first (see the routes page)."
        if batch is not None and not batch.suggestions:
            error = _empty_reason(batch)
    context = {"route": route, "kind": kind, "batch": batch, "error": error}
    return _page(request, route, context, status=502 if error else 200)


def _empty_reason(batch: SuggestionBatch) -> str:
    if batch.answer_was_unreadable:
        return "The language model answered in prose, without a list of suggestions. Try again."
    return f"Every suggestion repeated an existing one ({len(batch.repeats)}). Try again."


def _accept(request: HtmxHttpRequest, route: Route, kind: Kind) -> HttpResponse:
    offered = request.POST.getlist("offered")
    ticked = set(request.POST.getlist("accept"))
    accepted = [t for t in offered if t in ticked]
    rejected = [t for t in offered if t not in ticked]
    try:
        accept_suggestions(
            route,
            kind,
            accepted,
            rejected,
            user=request.user,
            expected_revision=_revision(request.POST.get("revision"), route),
        )
    except (Conflict, Refused) as exc:
        error = str(exc) if isinstance(exc, Conflict) else f"Not saved: {exc}"
        return _page(request, route, {"route": route, "kind": kind, "error": error}, status=409)
    what = KINDS[kind]
    messages.success(
        request, f"Added {len(accepted)} {what} to {route.name}; {len(rejected)} rejected."
    )
    return redirect("route-suggest", slug=route.profile.slug, pk=route.pk)


def _revision(posted: str | None, route: Route) -> int:
    """The route's revision the form was read at; anything but a plain number is a conflict."""
    if not posted:
        return route.revision
    if not posted.isdecimal() or len(posted) > 9:
        raise Conflict("The form was out of date (its revision is not a number): reload the page.")
    return int(posted)


def _page(
    request: HtmxHttpRequest, route: Route, context: dict[str, Any], *, status: int
) -> HttpResponse:
    context = profile_context(
        request,
        route.profile,
        configured=llm_client() is not None,
        setup_help=SETUP_HELP,
        kind_label=KINDS[context["kind"]],
        **context,
    )
    return render(request, "studio/authoring/suggestions.html", context, status=status)
