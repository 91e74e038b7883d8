"""The viewer's time zone: dates, calendar days and hours are shown where the reader is.

The browser names its zone in a cookie (static/studio/timezone.js); a name that is not a known
IANA zone is ignored and the studio's TIME_ZONE applies.
"""

from __future__ import annotations

from collections.abc import Callable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.http import HttpRequest, HttpResponse
from django.utils import timezone

COOKIE = "tz"


def viewer_zone(name: str | None) -> ZoneInfo | None:
    """The zone a cookie names, or None when it names none we know."""
    if not name or len(name) > 64 or ".." in name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


class ViewerTimeZoneMiddleware:
    """Activate the viewer's zone for the request (Django's own per-request time zone)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        zone = viewer_zone(request.COOKIES.get(COOKIE))
        if zone is None:
            return self.get_response(request)
        timezone.activate(zone)
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
