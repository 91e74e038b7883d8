"""What every studio view shares: the typed request, role checks, the profile lookup, fragments."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django_htmx.http import trigger_client_event
from django_htmx.middleware import HtmxDetails

from routing_core import BACKGROUND_MIN_EXAMPLES, OUT_OF_SCOPE_WANTED, background_left_out
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


@dataclass(frozen=True)
class OutOfScopeCount:
    """What a profile page says of its own out-of-scope examples: how many, how many the
    engine wants, and whether routing still leans on its built-in background (too few)."""

    profile: Profile
    own: int
    wanted: int = OUT_OF_SCOPE_WANTED
    min_examples: int = BACKGROUND_MIN_EXAMPLES  # a route's, on average, to learn the background

    @property
    def few(self) -> bool:
        return self.own < self.wanted

    @cached_property
    def background(self) -> str:
        """Why routing does or does not learn the background, as the engine decides it
        ("learned", or `background_left_out`'s reason). Read only by the two pages that show
        the notice: it reads every route's examples."""
        examples = self.profile.routes.values_list("examples", flat=True)
        why = background_left_out(
            [len(e or []) for e in examples], self.own, bool(self.profile.no_background)
        )
        return why or "learned"


def own_out_of_scope(profile: Profile) -> OutOfScopeCount:
    """The profile's `OutOfScopeCount`."""
    return OutOfScopeCount(profile, sum(1 for text in profile.out_of_scope if str(text).strip()))


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
