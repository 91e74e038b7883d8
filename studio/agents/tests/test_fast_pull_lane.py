"""The pull's fast lane (studio.agents.fast_pulls) answers exactly as the ninja endpoint, case by case.

Each request is sent twice with the same WSGI environ: through `FastPulls` (the fast lane, as
`studio.shared.wsgi.application` puts it in front of Django) and through Django's own handler alone
(the ninja endpoint). The status, every header, the body and the request log line must be the
same; `lane` says which way answered, so a test also proves the lane took (or declined) it.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from django.core import signals
from django.core.cache import cache
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections, connection
from django.test import RequestFactory

from studio.agents.fast_pulls import FastPulls
from studio.agents.fleet import forget_writes
from studio.agents.pulls import forget_touches
from studio.models import ReadToken
from studio.publishing.versions import promote, publish
from studio.shared.tokens import create_api_token, create_read_token, revoke

URL = "/api/profiles/shop/packs/production"


@dataclass
class Answer:
    status: str
    headers: list[tuple[str, str]]
    body: bytes
    log: dict[str, Any]


@contextmanager
def _outside_the_connection_cycle() -> Iterator[None]:
    """As Django's test client does: a request must not close the test's transaction."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


class _Spy:
    """Django's handler, noting whether the fast lane handed it the request."""

    def __init__(self) -> None:
        self.django = WSGIHandler()
        self.called = False

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        self.called = True
        return self.django(environ, start_response)


def _call(app: Any, environ: dict[str, Any], caplog: pytest.LogCaptureFixture) -> Answer:
    caplog.clear()
    seen: list[Any] = []
    with _outside_the_connection_cycle():
        body = app({**environ, "wsgi.input": io.BytesIO(b"")}, lambda s, h: seen.extend([s, h]))
        content = b"".join(body)
        body.close()
    lines = [r for r in caplog.records if r.name == "studio.requests"]
    assert len(lines) == 1
    fields = {k: getattr(lines[0], k) for k in ("method", "path", "status", "user", "profile")}
    return Answer(seen[0], sorted(seen[1]), content, fields)


@pytest.fixture
def pull(caplog: pytest.LogCaptureFixture) -> Any:
    """`pull(secret, **headers)` → (fast lane's answer, endpoint's answer, lane that answered)."""
    caplog.set_level(logging.INFO, logger="studio.requests")

    def send(secret: str | None, path: str = URL, **headers: str) -> tuple[Answer, Answer, str]:
        extra = {f"HTTP_{k.upper()}": v for k, v in headers.items()}
        if secret is not None:
            extra["HTTP_AUTHORIZATION"] = f"Bearer {secret}"
        environ = RequestFactory().get(path, **extra).environ
        spy = _Spy()
        fast = _call(FastPulls(spy), environ, caplog)
        lane = "django" if spy.called else "fast"
        # The same pull again, to the endpoint: the process's once-a-minute writes are forgotten
        # so that it does exactly the work the first one did.
        forget_touches()
        forget_writes()
        slow = _call(WSGIHandler(), environ, caplog)
        return fast, slow, lane

    return send


@pytest.fixture
def served(profile: Any, owner: Any) -> Any:
    """Production serves v1 of the shop profile."""
    forget_touches()
    forget_writes()
    cache.clear()
    version = publish(profile, user=owner)
    promote(version, "production", user=owner)
    return version


@pytest.fixture
def secret(served: Any, profile: Any, owner: Any) -> str:
    return create_read_token(profile, "agent", user=owner)[1]


def _same(pair: tuple[Answer, Answer, str], lane: str) -> Answer:
    fast, slow, answered_by = pair
    assert fast == slow
    assert answered_by == lane
    return fast


@pytest.mark.parametrize("coding", ["", "gzip", "zstd, gzip", "br"])
def test_a_pack_in_each_encoding_is_answered_alike(pull: Any, secret: str, coding: str) -> None:
    headers = {"accept_encoding": coding} if coding else {}
    answer = _same(pull(secret, **headers), "fast")
    assert answer.status == "200 OK"
    encoding = dict(answer.headers).get("Content-Encoding")
    assert encoding == {"": None, "gzip": "gzip", "zstd, gzip": "zstd", "br": None}[coding]


def test_a_304_is_answered_alike(pull: Any, secret: str, served: Any) -> None:
    answer = _same(pull(secret, if_none_match=f'"{served.checksum}"'), "fast")
    assert answer.status == "304 Not Modified" and answer.body == b""
    headers = dict(answer.headers)
    assert headers["ETag"] == f'"{served.checksum}"'
    assert headers["Vary"] == "Authorization, Accept-Encoding"
    assert headers["Cache-Control"] == "private, no-cache"
    assert headers["X-Content-Type-Options"] == "nosniff"  # the security headers came too


def test_an_unknown_token_is_left_to_the_endpoint(pull: Any, secret: str) -> None:
    assert _same(pull("rsp_not-a-token"), "django").status.startswith("401")


def test_a_revoked_token_is_refused_alike(pull: Any, secret: str, owner: Any) -> None:
    assert _same(pull(secret), "fast").status == "200 OK"
    revoke(ReadToken.objects.get(), user=owner)
    assert _same(pull(secret), "django").status.startswith("401")


def test_a_token_of_the_events_scope_is_refused_alike(
    pull: Any, served: Any, profile: Any, owner: Any
) -> None:
    _, events = create_read_token(profile, "events", user=owner, scope="events")
    assert _same(pull(events), "django").status.startswith("401")


def test_a_user_token_without_a_role_gets_403_alike(pull: Any, served: Any, outsider: Any) -> None:
    _, user_token = create_api_token(outsider, "script")
    assert _same(pull(user_token), "django").status.startswith("403")


def test_another_profiles_token_gets_the_404_of_a_missing_profile(pull: Any, secret: str) -> None:
    answer = _same(pull(secret, path="/api/profiles/elsewhere/packs/production"), "fast")
    assert answer.status.startswith("404")
    assert b'"not found"' in answer.body


def test_an_environment_with_nothing_promoted_gets_404_alike(
    pull: Any, profile: Any, owner: Any
) -> None:
    _, unpublished = create_read_token(profile, "early agent", user=owner)
    answer = _same(pull(unpublished), "fast")
    assert answer.status.startswith("404")


def test_an_unknown_environment_is_left_to_the_endpoint(pull: Any, secret: str) -> None:
    answer = _same(pull(secret, path="/api/profiles/shop/packs/qa"), "django")
    assert answer.status.startswith("422")


def test_over_the_rate_limit_both_answer_429(pull: Any, secret: str, settings: Any) -> None:
    settings.STUDIO_RATE_PACK_PULL = "2/m"
    fast, slow, lane = pull(secret)  # one pull each way: the limit is reached
    assert fast.status == slow.status == "200 OK"
    fast, slow, lane = pull(secret)
    assert lane == "fast"
    assert fast.status == slow.status == "429 Too Many Requests"
    assert fast.body == slow.body and fast.log == slow.log
    assert "Retry-After" in dict(fast.headers) and "Retry-After" in dict(slow.headers)


def test_a_promotion_changes_the_fast_answer_at_once(
    pull: Any, secret: str, served: Any, profile: Any, owner: Any
) -> None:
    old = f'"{served.checksum}"'
    assert _same(pull(secret, if_none_match=old), "fast").status == "304 Not Modified"
    profile.name = "Shop, renamed"
    profile.save()
    v2 = publish(profile, user=owner)
    promote(v2, "production", user=owner)

    answer = _same(pull(secret, if_none_match=old), "fast")

    assert answer.status == "200 OK"
    assert dict(answer.headers)["ETag"] == f'"{v2.checksum}"'
    assert answer.body.decode() == v2.pack_json


def test_a_host_outside_allowed_hosts_is_left_to_django(pull: Any, secret: str) -> None:
    assert _same(pull(secret, host="evil.example"), "django").status.startswith("400")


def test_other_requests_are_left_to_django(pull: Any, secret: str) -> None:
    fast, slow, answered_by = pull(secret, path="/api/profiles/shop/packs/production/")
    assert answered_by == "django"
    # Django's own 404 page both times; each render sets its own CSRF cookie, so compare the
    # answers without it.
    assert fast.status == slow.status == "404 Not Found"
    assert _without_cookies(fast) == _without_cookies(slow)


def _without_cookies(answer: Answer) -> list[tuple[str, str]]:
    return [(k, v) for k, v in answer.headers if k != "Set-Cookie"]


def test_the_studios_wsgi_application_is_the_fast_lane_in_front_of_django() -> None:
    from studio.shared.wsgi import application

    assert isinstance(application, FastPulls)
    assert isinstance(application.app, WSGIHandler)


@pytest.mark.postgres_only  # needs a server that can end the connection
@pytest.mark.django_db(transaction=True)
def test_a_kept_connection_that_died_is_replaced_within_the_pull(
    pull: Any, secret: str, served: Any
) -> None:
    assert connection.vendor == "postgresql"
    assert _same(pull(secret), "fast").status == "200 OK"  # the connection is open now
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    with psycopg.connect(**_connect_kwargs(), autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [backend])

    answer = _same(pull(secret, if_none_match=f'"{served.checksum}"'), "fast")

    assert answer.status == "304 Not Modified"


def _connect_kwargs() -> dict[str, Any]:
    db = connection.settings_dict
    keys = {
        "NAME": "dbname",
        "USER": "user",
        "PASSWORD": "password",
        "HOST": "host",
        "PORT": "port",
    }
    return {key: db[name] for name, key in keys.items() if db.get(name)}
