"""The pull's hot path (studio.agents.pulls): one query per pull, and nothing it remembers goes stale."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from studio.agents.pulls import forget_touches
from studio.models import ReadToken
from studio.publishing.versions import promote, publish
from studio.shared.tokens import revoke

URL = "/api/profiles/shop/packs/production"


@pytest.fixture
def agent(production_pull: Any) -> Any:
    """Production serves v1; `agent(**headers)` pulls it with a fresh read token."""
    return production_pull


def test_a_repeated_pull_is_one_query(agent: Any) -> None:
    # The first pull records the agent and the token's use, and caches the zstd body.
    etag = agent(accept_encoding="zstd")["ETag"]
    with CaptureQueriesContext(connection) as queries:
        unchanged = agent(if_none_match=etag)
        again = agent(accept_encoding="zstd")
    assert unchanged.status_code == 304 and again.status_code == 200
    assert len(queries.captured_queries) == 2  # one each: the body is cached in the process


def test_a_token_revoked_after_pulling_is_refused_at_once(agent: Any, owner: Any) -> None:
    etag = agent()["ETag"]
    assert agent(if_none_match=etag).status_code == 304

    revoke(ReadToken.objects.get(), user=owner)

    assert agent(if_none_match=etag).status_code == 401
    assert agent(accept_encoding="zstd").status_code == 401


def test_a_newly_promoted_version_is_served_at_the_next_pull(
    agent: Any, profile: Any, owner: Any
) -> None:
    old_etag = agent(accept_encoding="zstd")["ETag"]  # v1's body is now cached in this process
    profile.name = "Shop, renamed"
    profile.save()
    v2 = publish(profile, user=owner)
    promote(v2, "production", user=owner)

    response = agent(if_none_match=old_etag)

    assert response.status_code == 200
    assert response["ETag"] == f'"{v2.checksum}"' != old_etag
    assert response.content.decode() == v2.pack_json
    assert agent(if_none_match=f'"{v2.checksum}"').status_code == 304


def test_a_token_use_is_written_at_most_once_a_minute_across_processes(agent: Any) -> None:
    agent()
    first = ReadToken.objects.get().last_used_at
    assert first is not None
    forget_touches()  # as if the next pull reached another process
    agent()
    assert ReadToken.objects.get().last_used_at == first  # used less than a minute ago

    stale = timezone.now() - timedelta(minutes=2)
    ReadToken.objects.update(last_used_at=stale)
    forget_touches()
    agent()
    last_used = ReadToken.objects.get().last_used_at
    assert last_used is not None and last_used > stale
