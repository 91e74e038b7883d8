"""The fleet: each agent's own report on its pulls (`Route-Agent-Status`), its state against what
its environment serves, `GET /api/profiles/<slug>/agents` and the Agents page."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from routing_core.fleet_status import STATUS_HEADER, AgentStatus
from studio.agents.fleet import forget_writes
from studio.models import Agent, ReadToken
from studio.publishing.versions import promote, publish
from studio.shared.tokens import create_read_token, revoke

URL = "/api/profiles/shop/packs/production"
CHECKSUM = "sha256:" + "0" * 64


@pytest.fixture
def fleet_of(profile: Any, owner: Any) -> Any:
    """Production serves v2; `fleet_of(name, status)` is an agent pulling with that report."""
    forget_writes()
    publish(profile, user=owner)
    promote(publish(profile, user=owner), "production", user=owner)

    def pull(name: str, status: AgentStatus | str | None) -> ReadToken:
        token, secret = create_read_token(profile, name, user=owner)
        headers = {"HTTP_AUTHORIZATION": f"Bearer {secret}", "HTTP_USER_AGENT": "routing-core/9.0"}
        if status is not None:
            text = status if isinstance(status, str) else status.to_header()
            headers["HTTP_" + STATUS_HEADER.upper().replace("-", "_")] = text
        assert Client().get(URL, **headers).status_code == 200
        return token

    return pull


def states(client: Client) -> dict[str, tuple[str, int | None]]:
    answer = client.get("/api/profiles/shop/agents")
    assert answer.status_code == 200
    return {a["token"]: (a["state"], a["running_version"]) for a in answer.json()}


def test_the_api_says_who_runs_what_and_who_needs_a_look(fleet_of, owner, client_for):
    fleet_of("current", AgentStatus(2, CHECKSUM, "0123456789abcdef"))
    fleet_of("behind", AgentStatus(1, CHECKSUM, None))
    fleet_of("tampered", AgentStatus(1, CHECKSUM, "0123456789abcdef", "signature refused: …"))
    fleet_of("offline", AgentStatus(2, CHECKSUM, None, "studio unreachable: timed out"))
    fleet_of("old", None)  # an older routing_core reports nothing: what it was sent stands
    quiet = fleet_of("quiet", AgentStatus(2, CHECKSUM, None))
    Agent.objects.filter(token=quiet).update(last_seen=timezone.now() - timedelta(hours=2))
    gone = fleet_of("gone", AgentStatus(2, CHECKSUM, None))
    revoke(gone, user=owner)
    listed = client_for(owner).get("/api/profiles/shop/agents").json()
    assert [a["state"] for a in listed] == [
        "verify_failed", "pull_failed", "silent", "behind", "current", "current", "revoked",
    ]  # fmt: skip
    assert states(client_for(owner)) == {
        "tampered": ("verify_failed", 1),
        "offline": ("pull_failed", 2),
        "quiet": ("silent", 2),
        "behind": ("behind", 1),
        "current": ("current", 2),
        "old": ("current", 2),
        "gone": ("revoked", 2),
    }
    current = next(a for a in listed if a["token"] == "current")
    assert current["verified_by"] == "0123456789abcdef" and current["serving_version"] == 2
    old = next(a for a in listed if a["token"] == "old")
    assert (old["reported"], old["events_dropped"]) == (False, None)


def test_a_status_that_cannot_be_read_is_ignored_and_the_pull_still_served(fleet_of):
    token = fleet_of("garbled", '{"version": "three"')
    agent = Agent.objects.get(token=token)
    assert (agent.reported, agent.running_version, agent.served_version) == (False, None, 2)


def test_a_changed_report_is_written_at_once_even_within_the_minute(fleet_of, profile, owner):
    token, secret = create_read_token(profile, "agent", user=owner)
    for dropped in (0, 5):
        status = AgentStatus(2, CHECKSUM, None, None, dropped).to_header()
        Client().get(
            URL, HTTP_AUTHORIZATION=f"Bearer {secret}", HTTP_ROUTE_AGENT_STATUS=status
        )  # fmt: skip
    assert Agent.objects.get(token=token).events_dropped == 5


def test_the_api_is_for_studio_users_only(fleet_of, client_for, outsider):
    fleet_of("agent", None)
    assert Client().get("/api/profiles/shop/agents").status_code == 401
    assert client_for(outsider).get("/api/profiles/shop/agents").status_code == 403


def test_the_agents_page_shows_each_state_in_words(fleet_of, owner, client_for):
    fleet_of("tampered", AgentStatus(1, CHECKSUM, None, "signature refused: not a configured key"))
    fleet_of("behind", AgentStatus(1, CHECKSUM, "0123456789abcdef"))
    html = client_for(owner).get(reverse("agents", args=["shop"])).content.decode()
    assert "failed to verify the pack&#x27;s signature" in html
    assert "signature refused: not a configured key" in html
    assert "version 1" in html and "production serves version 2" in html
    assert "checked (key 0123456789abcdef)" in html
    assert html.index("tampered") < html.index("behind")  # who needs a look first
