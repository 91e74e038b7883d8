"""Rollouts with real agent processes against the studio on loopback (pytest-django live_server).

Each agent is its own process running routing_core only (tests/agent_process.py): it routes a
round of turns, sends its events, pulls, and routes the next round on what the pull said.
The studio's checks run inline here (as a worker would, on the ingest's queue).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from routing_core.canary import bucket
from studio.models import AuditEntry, Environment, Event, Rollout, RolloutStatus, TokenScope
from studio.publishing.rollout_guards import figures as rollout_figures
from studio.publishing.rollouts import Conditions, start_rollout
from studio.publishing.versions import promote, publish
from studio.shared.tokens import create_read_token

ROOT = Path(__file__).resolve().parents[3]
MESSAGES = ["where is my parcel", "why was I charged twice", "download my invoice"]


@pytest.fixture
def studio(live_server, transactional_db, profile, owner) -> dict[str, Any]:
    live = publish(profile, user=owner)
    promote(live, "production", user=owner)
    return {
        "pack_url": f"{live_server.url}/api/profiles/shop/packs/production",
        "events_url": f"{live_server.url}/api/profiles/shop/events",
        "pull_token": create_read_token(profile, "agent", user=owner)[1],
        "events_token": create_read_token(profile, "ev", user=owner, scope=TokenScope.EVENTS)[1],
        "live": live,
    }


def run_agents(studio: dict[str, Any], n: int = 1, **config: object) -> list[dict[str, Any]]:
    """`n` agent processes at once, each with its own conversations; their summaries."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    wire = {k: v for k, v in studio.items() if k != "live"}
    agents = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.agent_process",
                json.dumps(
                    {"messages": MESSAGES, "turns": 0, "prefix": f"a{i}-", **wire, **config}
                ),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        )  # fmt: skip
        for i in range(n)
    ]
    outputs = [agent.communicate(timeout=300)[0] for agent in agents]
    assert all(agent.returncode == 0 for agent in agents)
    return [json.loads(out.strip().splitlines()[-1]) for out in outputs]


def candidate(profile, owner, **changes: Any):
    """The next version, with the profile's policy changed as given."""
    for field, value in changes.items():
        setattr(profile, field, value)
    profile.save()
    return publish(profile, user=owner, environment=None)


def bad_candidate(profile, owner):
    """The next version with every route's words replaced by unrelated ones: turns go unmatched."""
    for route in profile.routes.all():
        route.examples = [f"sing me a song about {route.name} zebras", f"planet {route.name}"]
        route.description, route.keywords = f"songs and planets {route.name}", []
        route.save()
    return publish(profile, user=owner, environment=None)


def start(profile, version, owner, mode="canary", share=30, **conditions: Any) -> Rollout:
    return start_rollout(
        profile,
        "production",
        version,
        mode=mode,
        share=share,
        conditions=Conditions(**conditions),
        user=owner,
    )


def versions_by_conversation(rounds: range | None = None) -> dict[str, set[int | None]]:
    seen: dict[str, set[int | None]] = defaultdict(set)
    events = Event.objects.all()
    if rounds is not None:
        events = events.filter(turn__in=list(rounds))
    for conversation, version in events.values_list("conversation", "pack_version"):
        seen[conversation].add(version)
    return seen


def on_candidate_expected(seen: dict[str, set[int | None]]) -> int:
    return sum(bucket(c) < 30 for c in seen)


def test_a_canary_at_30_percent_serves_about_30_percent_and_never_switches_one(
    studio, profile, owner
):
    v2 = candidate(profile, owner, near_tie_margin=0.2)
    start(profile, v2, owner, share=30, min_turns=1_000_000)
    [summary] = run_agents(studio, conversations=1000, rounds=3)
    assert summary["failed"] == 0 and summary["pulls"] == ["unchanged"] * 3
    seen = versions_by_conversation()
    assert len(seen) == 1000 and Event.objects.count() == 3000
    # The same share by the conversation's bucket as any runtime computes it.
    assert on_candidate_expected(seen) == sum(v == {v2.number} for v in seen.values())
    assert all(len(versions) == 1 for versions in seen.values())
    on_candidate = sum(versions == {v2.number} for versions in seen.values())
    assert 250 <= on_candidate <= 350, on_candidate
    assert set(Event.objects.filter(pack_version=v2.number).values_list("arm", flat=True)) == {
        "candidate"
    }


def test_a_broken_condition_halts_and_every_agent_is_on_live_after_its_next_pull(
    studio, profile, owner, mailoutbox
):
    owner.email = "owner@example.com"
    owner.save()
    bad = bad_candidate(profile, owner)
    rollout = start(profile, bad, owner, share=50, max_unmatched_rise=5, min_turns=50)
    summaries = run_agents(studio, 2, conversations=200, rounds=2)
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.HALTED
    assert "unmatched rate rose by" in rollout.reason
    assert all(s["pulls"][0] == "updated" for s in summaries)  # the halt reached each agent
    # Round 2 of each agent ran after its pull: on live, for every conversation.
    assert set(Event.objects.filter(turn=1).values_list("pack_version", flat=True)) == {
        studio["live"].number
    }
    entry = AuditEntry.objects.get(action="rollout.halted")
    assert entry.after["figures"]["unmatched_rise"] > 5
    assert entry.after["figures"]["candidate"]["turns"] >= 50
    assert mailoutbox and "halted" in mailoutbox[0].subject


def test_a_held_condition_promotes_the_candidate(studio, profile, owner):
    good = candidate(profile, owner, near_tie_margin=0.2)
    rollout = start(
        profile, good, owner, share=50, max_unmatched_rise=5, min_turns=50, on_hold="promote"
    )
    [summary] = run_agents(studio, conversations=200, rounds=2)
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.PROMOTED, rollout.figures
    assert Environment.objects.get(profile=profile, name="production").version == good
    assert summary["pulls"][0] == "updated"
    assert set(Event.objects.filter(turn=1).values_list("pack_version", flat=True)) == {good.number}
    promoted = AuditEntry.objects.get(action="rollout.promoted")
    assert promoted.after["figures"]["candidate"]["turns"] >= 50


def test_shadow_reports_disagreements_with_both_revisions(studio, profile, owner):
    bad = bad_candidate(profile, owner)
    rollout = start(profile, bad, owner, mode="shadow", share=0, min_turns=1_000_000)
    run_agents(studio, conversations=60, rounds=1)
    figures = rollout_figures(rollout)
    assert figures["live"]["turns"] == 60 and figures["disagreements"] == 60
    unmatched = Event.objects.filter(shadow_verdict="unmatched").count()
    assert figures["candidate"]["unmatched"] == unmatched > 0 == figures["live"]["unmatched"]
    assert set(Event.objects.values_list("pack_version", flat=True)) == {studio["live"].number}
    assert set(Event.objects.values_list("shadow_verdict", flat=True)) == {"menu", "unmatched"}
