"""The pull's fast lane: an agent's token pull answered in front of Django's middleware stack.

Agents pull in a loop and nearly every pull is a 304, so a pull is almost all per-request
work. Profiled (docs/benchmarks.md, "Pulls in front of the middleware"), the middleware stack,
URL resolution, ninja's dispatch and the connection's health check cost more than the answer.
This WSGI layer (`studio.shared.wsgi`) answers `GET /api/profiles/<slug>/packs/<environment>` with a
live pull token itself, with the same parts as the ninja endpoint (`studio.agents.packs_api`):
the same token query (`studio.agents.pulls.find_grant`), rate limit, `pull_answer`, error handlers
(`studio.api`), the response-side middleware that adds security headers, and the request log
line. Nothing is cached across requests beyond what the endpoint caches already.

Whatever it is not sure of, it hands to Django untouched: another method or path, a bad slug,
a header that is no pull token, a token the query does not find (Django's auth answers 401 or
403, or a signed-in user's cookie), a host outside ALLOWED_HOSTS, an HTTP request that
SECURE_SSL_REDIRECT sends to HTTPS, and any error of its own. `studio/agents/tests/test_fast_pulls.py`
checks that both ways give the same status, headers and body for every case.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core import signals
from django.core.exceptions import DisallowedHost
from django.core.handlers.wsgi import WSGIRequest, get_script_name
from django.db import InterfaceError, OperationalError, connection
from django.http import Http404, HttpRequest, HttpResponseBase
from django.middleware.clickjacking import XFrameOptionsMiddleware
from django.middleware.common import CommonMiddleware
from django.middleware.csp import ContentSecurityPolicyMiddleware
from django.middleware.security import SecurityMiddleware
from django.urls import set_script_prefix

from studio.agents.pulls import PullGrant, find_grant, pull_answer
from studio.api import api
from studio.shared.logs import request_log
from studio.shared.ratelimits import RateLimited, limit
from studio.shared.tokens import READ_PREFIX

log = logging.getLogger(__name__)

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

# The endpoint's own path parameters: ninja's SLUG (SLUG_PATTERN, at most 64) and the two names.
_PULL = re.compile(r"/api/profiles/([-a-zA-Z0-9_]{1,64})/packs/(staging|production)")


def _unused(request: HttpRequest) -> HttpResponseBase:
    raise AssertionError("the fast lane's middleware only process requests and responses")


class FastPulls:
    """Answers token pulls; hands every other request to the Django application it wraps."""

    def __init__(self, app: WSGIApp) -> None:
        self.app = app
        # The response side of settings.MIDDLEWARE that touches a pull's answer, innermost
        # first (the others add nothing to it: no session, message or CSRF cookie is read or
        # set on a pull). Made once, as Django's handler makes its middleware.
        self._security = SecurityMiddleware(_unused)
        self._response_side = (
            XFrameOptionsMiddleware(_unused),
            CommonMiddleware(_unused),
            ContentSecurityPolicyMiddleware(_unused),
            self._security,
        )

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        match = _PULL.fullmatch(environ.get("PATH_INFO", ""))
        token = _pull_token(environ.get("HTTP_AUTHORIZATION", ""))
        if match is None or token is None or environ.get("REQUEST_METHOD") != "GET":
            return self.app(environ, start_response)
        try:
            response = self._answer(environ, token, match[1], match[2])
        except Exception:  # never worse than the endpoint: Django answers (and logs) instead
            log.exception("fast pull failed; Django answers it")
            response = None
        if response is None:
            return self.app(environ, start_response)
        # Its close() sends request_finished (the connection's end of request), as Django's does.
        response._handler_class = type(self)  # type: ignore[attr-defined]
        status = f"{response.status_code} {response.reason_phrase}"
        cookies = [("Set-Cookie", c.OutputString()) for c in response.cookies.values()]
        start_response(status, [*response.items(), *cookies])
        return response

    def _answer(
        self, environ: dict[str, Any], token: str, slug: str, environment: str
    ) -> HttpResponseBase | None:
        """The pull's answer, or None for Django to give it."""
        start = time.perf_counter()
        set_script_prefix(get_script_name(environ))
        signals.request_started.send(sender=type(self), environ=environ)
        request = WSGIRequest(environ)
        try:
            request.get_host()  # ALLOWED_HOSTS, as CommonMiddleware checks it
        except DisallowedHost:
            return None
        if self._security.process_request(request) is not None:  # SECURE_SSL_REDIRECT
            return None
        grant = _grant(token, slug, environment)
        if grant is None:
            return None
        # Any: the middleware's stubs want an HttpResponse; a 304 is an HttpResponseNotModified.
        response: Any = _respond(request, grant, environment)
        for middleware in self._response_side:
            response = middleware.process_response(request, response)
        answer: HttpResponseBase = response
        _log(request, answer, slug, start)
        return answer


def _pull_token(header: str) -> str | None:
    """The secret of `Authorization: Bearer rsp_…` (ninja's HttpBearer parsing), else None."""
    scheme, _, secret = header.partition(" ")
    if scheme.lower() != "bearer" or not secret.startswith(READ_PREFIX) or " " in secret:
        return None
    return secret


def _grant(token: str, slug: str, environment: str) -> PullGrant | None:
    """`find_grant`, with the query itself as the kept connection's health check.

    Django checks a kept connection with a `SELECT 1` before a request's first query: one
    more round trip per pull. Here a dead connection shows up as an error on the read-only
    query instead, and the query is tried once more on a new connection.
    """
    kept = connection.connection is not None
    if kept:
        connection.health_check_done = True  # type: ignore[attr-defined]
    try:
        return find_grant(token, slug, environment)
    except (OperationalError, InterfaceError):
        if not kept:
            raise
        connection.close()
        return find_grant(token, slug, environment)


def _respond(request: HttpRequest, grant: PullGrant, environment: str) -> HttpResponseBase:
    """What the ninja endpoint answers a pull token: its view's steps and its error handlers."""
    try:
        limit(request, "pack-pull", settings.STUDIO_RATE_PACK_PULL)
        return pull_answer(request, grant, environment)
    except (RateLimited, Http404) as exc:
        return api.on_exception(request, exc)


def _log(request: HttpRequest, response: HttpResponseBase, slug: str, start: float) -> None:
    """The line `studio.shared.logs.RequestLogMiddleware` writes for the endpoint's answers."""
    latency_ms = round((time.perf_counter() - start) * 1000, 2)
    fields = {
        "method": request.method,
        "path": request.path,
        "status": response.status_code,
        "latency_ms": latency_ms,
        "user": None,  # a pull token is no user; the endpoint never loads one either
        "profile": slug,
    }
    request_log.info("request", extra=fields)
