"""API: the fleet — which agents pull a profile, what they run, and which need a look."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema

from studio.agents.fleet import FleetRow, fleet
from studio.shared.api_access import USER_AUTH, profile_for
from studio.shared.schemas import ERRORS, SLUG

router = Router(tags=["agents"], auth=USER_AUTH)


class AgentOut(Schema):
    token: str
    environment: str
    routing_core: str
    state: str
    state_words: str
    running_version: int | None
    serving_version: int | None
    verified_by: str | None
    last_pull: datetime
    last_error: str | None
    events_dropped: int | None
    reported: bool


@router.get(
    "/{slug}/agents",
    response={200: list[AgentOut], **ERRORS},
    summary="The agents that pull this profile's packs, and how each is doing",
)
def list_agents(request: HttpRequest, slug: str = SLUG) -> list[dict[str, Any]]:
    """Worst first. `state`: `verify_failed` (its last pack's signature was refused),
    `pull_failed`, `silent` (no pull for `STUDIO_AGENT_SILENT_AFTER_S`), `behind` (runs another
    version than its environment serves), `current`, `revoked` (its token). `reported` false: the
    agent's routing_core does not report its status, so `running_version` is the last one sent."""
    return [_agent_out(row) for row in fleet(profile_for(request, slug))]


def _agent_out(row: FleetRow) -> dict[str, Any]:
    agent = row.agent
    return {
        "token": agent.token.name,
        "environment": agent.environment,
        "routing_core": agent.engine_version,
        "state": row.state,
        "state_words": row.words,
        "running_version": row.running,
        "serving_version": row.serving,
        "verified_by": agent.verified_by or None,
        "last_pull": agent.last_seen,
        "last_error": agent.last_error or None,
        "events_dropped": agent.events_dropped if agent.reported else None,
        "reported": agent.reported,
    }
