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
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from django.conf import settings
from django.utils import timezone
from packaging.version import InvalidVersion, Version

from routing_core import engine_version
from routing_core.fleet_status import AgentStatus
from studio.models import Agent, Profile

_ENGINE = re.compile(r"\brouting-core/(\S{1,40})")
WRITE_EVERY_S = 60.0
_MAX_REMEMBERED = 10_000
# (token digest, environment) -> (user agent, served version, status, when written): this
# process's last writes. The digest, not the id: an id can come back after a restored database, a
# digest cannot.
_written: OrderedDict[tuple[str, str], tuple[str, int | None, str, float]] = OrderedDict()
# The fields a pull's status header sets (`_status_fields`).
STATUS_FIELDS = [
    "reported",
    "running_version",
    "running_checksum",
    "verified_by",
    "last_error",
    "events_dropped",
]
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
    token: PullingToken,
    environment: str,
    user_agent: str,
    served_version: int | None,
    status_header: str = "",
) -> None:
    """Upsert the token's agent row for this environment: version seen, pack served, last seen,
    and what the agent reported of itself (`Route-Agent-Status`).

    Skipped when this process wrote the same facts for it less than a minute ago.
    """
    if not _is_due(token.digest, environment, user_agent, served_version, status_header):
        return
    now = timezone.now()
    row = Agent(
        **_status_fields(AgentStatus.from_header(status_header)),
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
        update_fields=[
            "user_agent",
            "engine_version",
            "served_version",
            "last_seen",
            *STATUS_FIELDS,
        ],
    )


def _status_fields(status: AgentStatus | None) -> dict[str, object]:
    """The agent row's status columns; blank when the agent reported nothing readable."""
    if status is None:
        return {"reported": False}
    return {
        "reported": True,
        "running_version": status.version,
        "running_checksum": status.checksum or "",
        "verified_by": status.verified_by or "",
        "last_error": status.last_error or "",
        "events_dropped": status.events_dropped,
    }


def _is_due(
    token_digest: str, environment: str, user_agent: str, served: int | None, status: str
) -> bool:
    key, clock = (token_digest, environment), time.monotonic()
    with _lock:
        last = _written.get(key)
        if (
            last is not None
            and last[:3] == (user_agent, served, status)
            and clock - last[3] < WRITE_EVERY_S
        ):
            return False
        _written[key] = (user_agent, served, status, clock)
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


# -- the fleet's state --------------------------------------------------------------------------

# What an agent's row says, worst first: the order the Agents page sorts by.
STATES = {
    "verify_failed": "failed to verify the pack's signature",
    "pull_failed": "its last pull failed",
    "silent": "stopped reporting",
    "behind": "behind",
    "current": "up to date",
    "revoked": "token revoked",
}


@dataclass(frozen=True, slots=True)
class FleetRow:
    """One agent with its state against what its environment serves now."""

    agent: Agent
    state: str  # a key of STATES
    serving: int | None  # the version its environment serves now

    @property
    def running(self) -> int | None:
        """The version it runs: what it reported, else what it was last sent (older agents)."""
        return self.agent.running_version if self.agent.reported else self.agent.served_version

    @property
    def words(self) -> str:
        return STATES[self.state]


def fleet(profile: Profile, now: datetime | None = None) -> list[FleetRow]:
    """The profile's agents with their states, worst first (then most recently seen)."""
    now = now or timezone.now()
    serving = dict(profile.environments.values_list("name", "version__number"))
    rows = [FleetRow(a, _state(a, serving.get(a.environment), now), serving.get(a.environment))
            for a in agents(profile)]  # fmt: skip
    order = list(STATES)
    return sorted(rows, key=lambda r: order.index(r.state))


def _state(agent: Agent, serving: int | None, now: datetime) -> str:
    silent_after = timedelta(seconds=settings.STUDIO_AGENT_SILENT_AFTER_S)
    running = agent.running_version if agent.reported else agent.served_version
    if agent.token.revoked_at is not None:
        return "revoked"
    if now - agent.last_seen > silent_after:
        return "silent"
    if agent.last_error.startswith("signature refused"):
        return "verify_failed"
    if agent.last_error:
        return "pull_failed"
    return "behind" if serving is not None and running != serving else "current"
