"""The agents the studio knows about: who pulls which pack with which routing_core.

A pull by a read token upserts one row (one `INSERT … ON CONFLICT DO UPDATE`, on SQLite and
PostgreSQL alike), never a read-modify-write; and, like a token's `last_used_at`, at most once a
minute per process while nothing changed: a write (a commit) would otherwise be most of a 304's
time on SQLite (measured: 28 of 45 ms, bench/bench_traffic.py).
Before publishing, agents whose routing_core is older than the studio's are listed: the pack
about to be made may use what they cannot read. `can_read` is the one place that rule lives.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from typing import Protocol

from django.utils import timezone
from packaging.version import InvalidVersion, Version

from routing_core import engine_version
from studio.models import Agent, Profile

_ENGINE = re.compile(r"\brouting-core/(\S{1,40})")
WRITE_EVERY_S = 60.0
_MAX_REMEMBERED = 10_000
# (token digest, environment) -> (user agent, served version, when written): this process's last
# writes. The digest, not the id: an id can come back after a restored database, a digest cannot.
_written: OrderedDict[tuple[str, str], tuple[str, int | None, float]] = OrderedDict()
_lock = threading.Lock()


def agent_engine(user_agent: str) -> str:
    """The routing_core version in a User-Agent (`routing-core/0.1.0 python/3.12`), or ""."""
    found = _ENGINE.search(user_agent)
    return found.group(1) if found else ""


def can_read(agent_version: str, pack_made_by: str) -> bool:
    """May an agent running `agent_version` read a pack made by routing_core `pack_made_by`?

    For now: when it is not older. An unknown or unparsable version cannot be vouched for.
    (The format-compatibility rule of the reliability issue refines this one function.)
    """
    try:
        return Version(agent_version) >= Version(pack_made_by)
    except InvalidVersion:
        return False


class PullingToken(Protocol):
    """What recording a pull needs of the token that pulled (the pull lane's grant is one)."""

    @property
    def token_id(self) -> int: ...
    @property
    def profile_id(self) -> int: ...
    @property
    def digest(self) -> str: ...


def record_pull(
    token: PullingToken, environment: str, user_agent: str, served_version: int | None
) -> None:
    """Upsert the token's agent row for this environment: version seen, pack served, last seen.

    Skipped when this process wrote the same facts for it less than a minute ago.
    """
    if not _is_due(token.digest, environment, user_agent, served_version):
        return
    now = timezone.now()
    row = Agent(
        token_id=token.token_id,
        profile_id=token.profile_id,
        environment=environment,
        user_agent=user_agent[:200],
        engine_version=agent_engine(user_agent),
        served_version=served_version,
        first_seen=now,
        last_seen=now,
    )
    Agent.objects.bulk_create(
        [row],
        update_conflicts=True,
        unique_fields=["token", "environment"],
        update_fields=["user_agent", "engine_version", "served_version", "last_seen"],
    )


def _is_due(token_digest: str, environment: str, user_agent: str, served: int | None) -> bool:
    key, clock = (token_digest, environment), time.monotonic()
    with _lock:
        last = _written.get(key)
        if (
            last is not None
            and last[:2] == (user_agent, served)
            and clock - last[2] < WRITE_EVERY_S
        ):
            return False
        _written[key] = (user_agent, served, clock)
        _written.move_to_end(key)
        while len(_written) > _MAX_REMEMBERED:
            _written.popitem(last=False)
    return True


def forget_writes() -> None:
    """Forget this process's recent writes, so that the next pull writes (the bench uses it)."""
    with _lock:
        _written.clear()


def agents(profile: Profile) -> list[Agent]:
    """The profile's agents, most recently seen first, with their tokens."""
    return list(profile.agents.select_related("token"))


def unable_to_read(profile: Profile, made_by: str | None = None) -> list[Agent]:
    """Agents of active tokens that may not read a pack made by `made_by` (the studio's engine)."""
    made_by = made_by or engine_version()
    return [
        a
        for a in agents(profile)
        if a.token.revoked_at is None and not can_read(a.engine_version, made_by)
    ]
