"""What an agent reports of itself on each pull (`Route-Agent-Status`): the pack it runs, the
key that signed it, why its last pull failed and the events its reporter dropped."""

from __future__ import annotations

import json
import socket

import pytest

from routing_core.fleet_status import AgentStatus
from routing_core.remote import PackFetcher, RemoteRouter
from routing_core.reporting import EventReporter
from routing_core.signing import key_id, sign_pack
from tests.routing_core.test_signing import OLD, OTHER, PACK, keys, signed_server  # noqa: F401


def reported(server) -> dict:
    return json.loads(server.seen_status[-1])


def test_each_pull_reports_what_runs_and_how_the_last_pull_went(signed_server):  # noqa: F811
    router = RemoteRouter(PackFetcher(signed_server.url, keys=keys(OLD)))
    assert reported(signed_server) == {
        "version": None, "checksum": None, "verified_by": None, "last_error": None,
        "events_dropped": 0,
    }  # fmt: skip
    router.refresh()  # a 304
    running = {"version": 0, "checksum": json.loads(PACK)["checksum"]}
    assert reported(signed_server) | running == reported(signed_server)
    assert reported(signed_server)["verified_by"] == key_id(OLD.public_key())
    signed_server.body, signed_server.signature = OTHER, None
    router.refresh()  # refused: stripped
    router.refresh()
    assert reported(signed_server)["last_error"].startswith("signature refused")
    assert reported(signed_server)["version"] == 0
    signed_server.signature = sign_pack(OTHER, OLD).to_text()
    router.refresh()
    router.refresh()
    assert reported(signed_server)["version"] == 7 and reported(signed_server)["last_error"] is None


def test_a_reporters_dropped_events_travel_with_the_pulls(signed_server):  # noqa: F811
    # A studio that accepts the connection and never answers: the queue (1 record) stays full.
    black_hole = socket.socket()
    black_hole.bind(("127.0.0.1", 0))
    black_hole.listen(8)
    url = f"http://127.0.0.1:{black_hole.getsockname()[1]}/events"
    reporter = EventReporter(url, token="t", batch_size=1, max_queue=1, timeout=10.0)
    try:
        router = RemoteRouter(PackFetcher(signed_server.url), reporter=reporter)
        for _ in range(20):
            router.route("where is my parcel")
        router.refresh()
        assert reported(signed_server)["events_dropped"] == reporter.stats.dropped >= 18
        assert reported(signed_server)["verified_by"] is None  # no keys: nothing checked
    finally:
        reporter.close(timeout=0.1)
        black_hole.close()


@pytest.mark.parametrize(
    "header",
    [None, "", "not json", "[]", '{"version": -1}', '{"version": true}',
     '{"events_dropped": "many"}', '{"last_error": "' + "x" * 301 + '"}', "{" * 2000],
)  # fmt: skip
def test_a_status_that_is_not_understood_is_none(header):
    assert AgentStatus.from_header(header) is None


def test_a_status_round_trips_and_cuts_a_long_error():
    status = AgentStatus(3, "sha256:" + "a" * 64, "0123456789abcdef", "e" * 500, 12)
    again = AgentStatus.from_header(status.to_header())
    assert again == AgentStatus(3, status.checksum, status.verified_by, "e" * 300, 12)
