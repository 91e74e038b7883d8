"""Per-token rate limits for the endpoints scripts and agents call in a loop (route, pack pull).

django-ratelimit counts requests in fixed windows in Django's cache (see settings: shared across
processes with REDIS_URL, per process otherwise). A request over the limit raises `RateLimited`;
the API answers it with 429, a `Retry-After` header and its usual error shape.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.http import HttpRequest
from django_ratelimit.core import get_usage


class RateLimited(Exception):
    """Too many requests for one token; `retry_after` is the seconds until the window resets."""

    def __init__(self, retry_after: int, limit: int) -> None:
        super().__init__(f"rate limit of {limit} requests exceeded: retry in {retry_after} s")
        self.retry_after = retry_after


def caller_key(request: HttpRequest) -> str:
    """Who is calling: the bearer token (never stored raw), else the signed-in user."""
    header = request.META.get("HTTP_AUTHORIZATION", "")  # (not `headers`: built per request)
    if header.lower().startswith("bearer "):
        return "token:" + hashlib.sha256(header[7:].strip().encode()).hexdigest()
    return f"user:{getattr(request.user, 'pk', None)}"


def limit(request: HttpRequest, group: str, rate: str) -> None:
    """Count this request against `rate` for its caller; raise RateLimited when over it."""
    usage: dict[str, Any] | None = get_usage(
        request, group=group, key=lambda _group, req: caller_key(req), rate=rate, increment=True
    )
    if usage is not None and usage["should_limit"]:
        raise RateLimited(max(1, int(usage["time_left"])), int(usage["limit"]))
