"""An agent process with reporting on, against a live studio on loopback (pytest-django live_server).

The agent is a real separate process (routing_core only, no Django); the studio is the real URL
stack served over HTTP. "Slow" is a socket that accepts connections and never answers.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.models import Event, TokenScope
from studio.publishing.versions import promote, publish
from studio.shared.tokens import create_read_token

ROOT = Path(__file__).resolve().parents[3]
MESSAGES = [
    "why was I charged twice, write to jo@example.com",
    "where is my parcel",
    "call +44 20 7946 0958",
]
MAX_TURN_S = 0.1  # a turn routes in well under a millisecond; 100 ms leaves room for a busy machine


@pytest.fixture
def studio(live_server, transactional_db, profile, owner) -> dict[str, str]:
    promote(publish(profile, user=owner), "production", user=owner)
    return {
        "pack_url": f"{live_server.url}/api/profiles/shop/packs/production",
        "events_url": f"{live_server.url}/api/profiles/shop/events",
        "pull_token": create_read_token(profile, "agent", user=owner)[1],
        "events_token": create_read_token(profile, "ev", user=owner, scope=TokenScope.EVENTS)[1],
    }


@pytest.fixture
def black_hole() -> Iterator[str]:
    """A listening socket that never reads or answers: a studio that hangs."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/api/profiles/shop/events"
    sock.close()


def run_agent(**config: object) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "tests.agent_process", json.dumps({"messages": MESSAGES, **config})],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=env, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_events_from_an_agent_arrive_redacted(studio):
    result = run_agent(**studio, turns=30)
    assert result["drained"] and (result["sent"], result["dropped"], result["failed"]) == (30, 0, 0)
    stored = list(Event.objects.order_by("pk"))
    assert len(stored) == 30
    assert {e.message for e in stored} == {
        "why was I charged twice, write to [email]",
        "where is my parcel",
        "call [phone]",
    }
    assert {(e.conversation, e.turn) for e in stored[:2]} == {("c0", 0), ("c0", 1)}
    assert stored[1].route == "shipping"


def test_a_hanging_studio_never_delays_a_turn(studio, black_hole):
    result = run_agent(**{**studio, "events_url": black_hole}, turns=200, timeout=2.0, flush_s=0.5)
    assert result["slowest_turn_s"] < MAX_TURN_S
    assert result["sent"] == 0 and not result["drained"]
    assert Event.objects.count() == 0


def test_a_studio_that_is_down_never_delays_a_turn_and_counts_the_failures(studio):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{closed.getsockname()[1]}/events"  # bound, not listening
        result = run_agent(**{**studio, "events_url": down}, turns=100, batch_size=100)
    assert result["slowest_turn_s"] < MAX_TURN_S
    assert result["drained"] and result["failed"] == 100 and result["sent"] == 0


def test_a_full_queue_drops_and_counts(studio, black_hole):
    result = run_agent(
        **{**studio, "events_url": black_hole},
        turns=100,
        max_queue=5,
        batch_size=1,
        timeout=5.0,
        flush_s=0.2,
    )
    # One record may be in flight to the hanging studio, five wait in the queue: the rest drop.
    assert result["dropped"] >= 94
    assert result["dropped"] + result["queued"] + 1 >= 100
    assert result["slowest_turn_s"] < MAX_TURN_S
