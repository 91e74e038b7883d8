"""What every studio view shares: the typed request, role checks, the profile lookup, fragments."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django_htmx.http import trigger_client_event
from django_htmx.middleware import HtmxDetails

from routing_core import OUT_OF_SCOPE_WANTED, background_left_out
from studio.models import Profile
from studio.shared.packs import pack_report
from studio.shared.roles import can_edit, can_view


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


View = Callable[..., HttpResponse]


def studio_page(view: View) -> View:
    """Signed in with a role to see the page; the editor role to POST to it."""

    @wraps(view)
    def wrapper(request: HtmxHttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not can_view(request.user):
            raise PermissionDenied("You have no role in the studio.")
        if request.method == "POST" and not can_edit(request.user):
            raise PermissionDenied("Editing needs the editor role.")
        return view(request, *args, **kwargs)

    return login_required(wrapper)


def get_profile(slug: str) -> Profile:
    return get_object_or_404(Profile, slug=slug)


def profile_context(request: HttpRequest, profile: Profile, **extra: Any) -> dict[str, Any]:
    """Context every profile page (and its header fragment) needs."""
    return {
        "profile": profile,
        "report": pack_report(profile),
        "can_edit": can_edit(request.user),
        "out_of_scope_count": own_out_of_scope(profile),
        **extra,
    }


def own_out_of_scope(profile: Profile) -> dict[str, object]:
    """What a profile page says of its own out-of-scope examples: how many, how many the
    engine wants, and whether routing still leans on its built-in background (too few)."""
    own = sum(1 for text in profile.out_of_scope if str(text).strip())
    few = own < OUT_OF_SCOPE_WANTED
    why = None
    if few:  # why routing does or does not lean on the background, as the engine decides it
        counts = [len(e or []) for e in profile.routes.values_list("examples", flat=True)]
        why = background_left_out(counts, own, bool(profile.no_background))
    return {"own": own, "wanted": OUT_OF_SCOPE_WANTED, "few": few, "background": why or "learned"}


def fragment(
    request: HttpRequest, template: str, context: dict[str, Any], *, status: int = 200
) -> HttpResponse:
    """A partial after an edit; the `pack-changed` event makes the page's badge refresh itself."""
    response = HttpResponse(render_to_string(template, context, request), status=status)
    return trigger_client_event(response, "pack-changed")


def not_started(request: HttpRequest, exc: Exception, back: str) -> HttpResponse:
    """A job refused for want of room on the queue: back to the page it was started from,
    which says why (the API answers the same refusal with a 429)."""
    messages.error(request, f"Not started: {exc}.")
    return HttpResponseRedirect(back)


def reader_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Signed in with any role, POST included: running a check changes nothing authored."""

    @wraps(view)
    def wrapper(request: HtmxHttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not can_view(request.user):
            raise PermissionDenied("You have no role in the studio.")
        return view(request, *args, **kwargs)

    return login_required(wrapper)
