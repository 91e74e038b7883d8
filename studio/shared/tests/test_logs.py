"""One JSON log line per request: user, profile, method, path, status and latency."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from studio.models import Profile
from studio.shared.logs import JsonFormatter


def request_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "studio.requests"]


def test_a_profile_page_is_logged_with_the_user_the_profile_and_the_latency(
    caplog: pytest.LogCaptureFixture,
    client_for: Callable[[User | None], Client],
    editor: User,
    profile: Profile,
) -> None:
    with caplog.at_level(logging.INFO, logger="studio.requests"):
        client_for(editor).get(f"/profiles/{profile.slug}/")
    [record] = request_lines(caplog)
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "request"
    assert (line["user"], line["profile"]) == ("editor", "shop")
    assert (line["method"], line["path"], line["status"]) == ("GET", "/profiles/shop/", 200)
    assert isinstance(line["latency_ms"], float) and line["latency_ms"] >= 0


def test_an_anonymous_request_outside_a_profile_has_neither_user_nor_profile(
    caplog: pytest.LogCaptureFixture, client: Client, db: None
) -> None:
    with caplog.at_level(logging.INFO, logger="studio.requests"):
        client.get("/healthz")
    [record] = request_lines(caplog)
    line = json.loads(JsonFormatter().format(record))
    assert (line["user"], line["profile"], line["status"]) == (None, None, 200)


def test_the_formatter_writes_one_json_object_per_line_with_the_extra_fields() -> None:
    record = logging.LogRecord("studio", logging.WARNING, __file__, 1, "two\nlines", None, None)
    record.route = "billing"
    text = JsonFormatter().format(record)
    assert "\n" not in text
    line = json.loads(text)
    assert line["level"] == "warning"
    assert (line["message"], line["route"]) == ("two\nlines", "billing")
    assert line["ts"].endswith("+00:00")
