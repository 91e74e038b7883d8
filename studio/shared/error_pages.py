"""The studio's own 404 page also under `make run`, where DEBUG is on.

With DEBUG on, Django answers a missing page with its technical debug page (URL patterns, settings
hints): a programmer's tool, not what someone trying the studio should meet. Production (DEBUG
off) already renders templates/404.html; this middleware makes `make run` do the same. A 500 keeps
Django's debug page under DEBUG: it is a bug to be read by whoever runs the server.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render


class FriendlyNotFoundMiddleware:
    """Render templates/404.html for a page that does not exist, DEBUG or not."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        # No view ran (the URL matched nothing): under DEBUG this is Django's debug page.
        no_view = getattr(request, "resolver_match", None) is None
        if settings.DEBUG and response.status_code == 404 and no_view:
            return not_found(request)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """A view's Http404 (an unknown profile, a deleted job): the same page."""
        if settings.DEBUG and isinstance(exception, Http404):
            return not_found(request)
        return None


def not_found(request: HttpRequest) -> HttpResponse:
    return render(request, "404.html", status=404)
