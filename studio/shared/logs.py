"""Structured logs: a JSON formatter and one log line per request (user, profile, latency).

Each line is one JSON object, so a log shipper can index it without a parsing rule. Extra fields
passed with `logger.info(msg, extra={...})` land as top-level keys.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.functional import empty

request_log = logging.getLogger("studio.requests")

# Attributes every LogRecord has; anything else on a record came in through `extra`.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class ClientErrorsWithoutTraceback(logging.Filter):
    """Drop the traceback Django attaches to a 4xx (a PermissionDenied raised to refuse): the
    refusal is the studio working, not a bug, and a traceback per refusal buries real errors."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and 400 <= status < 500:
            record.exc_info, record.exc_text = None, None
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and any `extra` fields."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_info:
            line["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


class RequestLogMiddleware:
    """Logs every request once it is answered; outermost, so the latency covers everything."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        start = time.perf_counter()
        response = self.get_response(request)
        latency_ms = round((time.perf_counter() - start) * 1000, 2)
        request_log.info("request", extra=request_fields(request, response, latency_ms))
        return response


def request_fields(
    request: HttpRequest, response: HttpResponse, latency_ms: float
) -> dict[str, Any]:
    """What one request's log line says about it."""
    match = request.resolver_match
    return {
        "method": request.method,
        "path": request.path,
        "status": response.status_code,
        "latency_ms": latency_ms,
        "user": _username(request),
        "profile": match.kwargs.get("slug") if match else None,
    }


def _username(request: HttpRequest) -> str | None:
    # Only a user the request already loaded: logging must not add a query (or fail when the
    # database is down, which /healthz reports).
    user = getattr(request, "user", None)
    if user is None or getattr(user, "_wrapped", None) is empty:
        return None
    return user.get_username() if user.is_authenticated else None
