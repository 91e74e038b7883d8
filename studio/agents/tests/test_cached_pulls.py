"""Pulls answered from the process's copy of what an environment serves (studio.agents.pulls):
a 304 is one small query that reads no pack, version or rollout, and whatever changes what an
environment serves (a promotion, a rollout started or ended, even a stale instance saved) or
who may pull (a revoked token, a token of another scope) reaches the very next pull.

Pulls go through the fast lane in front of Django (`studio.shared.wsgi.application`), as in
production; `test_fast_pull_lane.py` shows the ninja endpoint answers alike.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from routing_core.rollout import ROLLOUT_HEADER, parse_rollout
from studio.agents.fast_pulls import FastPulls
from studio.agents.fleet import forget_writes
from studio.agents.pulls import forget_served, forget_touches
from studio.agents.tests.test_fast_pull_lane import _outside_the_connection_cycle
from studio.models import Environment, ReadToken, TokenScope
from studio.publishing.rollouts import Conditions, halt, start_rollout
from studio.publishing.versions import promote, publish
from studio.shared.tokens import create_read_token, revoke

URL = "/api/profiles/shop/packs/production"
APP = FastPulls(WSGIHandler())


class Pull:
    """One pull through the production WSGI stack: status, headers and body."""

    def __init__(self, secret: str, **headers: str) -> None:
        extra = {f"HTTP_{k.upper()}": v for k, v in headers.items()}
        environ = RequestFactory().get(URL, HTTP_AUTHORIZATION=f"Bearer {secret}", **extra).environ
        seen: list[Any] = []
        with _outside_the_connection_cycle():
            body = APP({**environ, "wsgi.input": io.BytesIO(b"")}, lambda s, h: seen.extend([s, h]))
            self.body = b"".join(body)
            body.close()
        self.status = int(seen[0].split()[0])
        self.headers = dict(seen[1])

    @property
    def etag(self) -> str:
        return self.headers["ETag"]


@pytest.fixture
def live(profile: Any, owner: Any) -> Any:
    """Production serves v1, and v2 is published beside it."""
    forget_touches()
    forget_writes()
    forget_served()
    v1 = publish(profile, user=owner)
    promote(v1, "production", user=owner)
    profile.name = "Shop, renamed"
    profile.save()
    return v1, publish(profile, user=owner, environment=None)


@pytest.fixture
def secret(live: Any, profile: Any, owner: Any) -> str:
    return create_read_token(profile, "agent", user=owner)[1]


def test_a_warm_304_is_one_query_that_reads_no_version_or_rollout(live: Any, secret: str) -> None:
    first = Pull(secret)  # records the agent and the token's use; reads what production serves
    assert first.status == 200
    with CaptureQueriesContext(connection) as queries:
        again = Pull(secret, if_none_match=first.etag)
    assert again.status == 304 and again.etag == first.etag == f'"{live[0].checksum}"'
    (query,) = [q["sql"] for q in queries.captured_queries]
    assert "studio_readtoken" in query
    assert "studio_version" not in query and "studio_rollout" not in query


def test_a_promotion_right_after_a_304_is_served_at_the_next_pull(
    live: Any, secret: str, owner: Any
) -> None:
    v1, v2 = live
    old = Pull(secret).etag
    assert Pull(secret, if_none_match=old).status == 304
    promote(v2, "production", user=owner)
    fresh = Pull(secret, if_none_match=old)
    assert fresh.status == 200 and fresh.etag == f'"{v2.checksum}"'
    assert fresh.body.decode() == v2.pack_json
    assert Pull(secret, if_none_match=fresh.etag).status == 304


def test_a_rollout_started_and_halted_reaches_the_next_pull(
    live: Any, secret: str, profile: Any, owner: Any
) -> None:
    v1, v2 = live
    old = Pull(secret).etag
    assert Pull(secret, if_none_match=old).status == 304
    rollout = start_rollout(
        profile, "production", v2, mode="canary", share=30, conditions=Conditions(), user=owner
    )
    told = Pull(secret, if_none_match=old)
    assert told.status == 200 and told.etag != old
    named = parse_rollout(told.headers[ROLLOUT_HEADER])
    assert named is not None and (named.id, named.share, named.checksum) == (
        rollout.pk,
        30,
        v2.checksum,
    )
    unchanged = Pull(secret, if_none_match=told.etag)
    assert (
        unchanged.status == 304
        and unchanged.headers[ROLLOUT_HEADER] == told.headers[ROLLOUT_HEADER]
    )

    halt(rollout, "a test halted it", {}, user=owner)
    back = Pull(secret, if_none_match=told.etag)
    assert back.status == 200 and ROLLOUT_HEADER not in back.headers
    assert back.etag == old  # live again, as before the rollout


def test_saving_a_stale_environment_cannot_bring_back_what_it_served_before(
    live: Any, secret: str, profile: Any, owner: Any
) -> None:
    stale = Environment.objects.get(profile=profile, name="production")
    start_rollout(
        profile, "production", live[1], mode="shadow", share=0, conditions=Conditions(), user=owner
    )
    told = Pull(secret)
    assert ROLLOUT_HEADER in told.headers
    stale.save()  # an instance read before the rollout started, saved after
    assert Pull(secret, if_none_match=told.etag).status == 304
    assert Environment.objects.get(pk=stale.pk).served_stamp != stale.served_stamp


def test_a_304_still_asks_who_pulls(live: Any, secret: str, profile: Any, owner: Any) -> None:
    etag = Pull(secret).etag
    assert Pull(secret, if_none_match=etag).status == 304
    events = create_read_token(profile, "reporter", user=owner, scope=TokenScope.EVENTS)[1]
    assert Pull(events, if_none_match=etag).status in (401, 403)  # a token of another scope
    revoke(ReadToken.objects.get(scope=TokenScope.PULL), user=owner)
    assert Pull(secret, if_none_match=etag).status == 401
