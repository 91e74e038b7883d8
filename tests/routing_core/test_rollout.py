"""Rollouts in the agent: canary by bucket, sticky conversations, shadow disagreements, halts."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from routing_core import PackError, dump_pack, load_pack
from routing_core.canary import bucket
from routing_core.reasks import is_reask
from routing_core.remote import PackFetcher, RemoteRouter
from routing_core.reporting import ReporterStats
from routing_core.rollout import (
    ROLLOUT_HEADER,
    Rollout,
    parse_rollout,
)
from tests.routing_core.conftest import minimal_doc

# The candidate swaps the two descriptions: a parcel question moves from shipping to billing.
LIVE = dump_pack(load_pack(minimal_doc(version=1))).encode()
CANDIDATE = dump_pack(
    load_pack(
        minimal_doc(
            version=2,
            routes=[
                {"name": "billing", "description": "parcels and delivery"},
                {"name": "shipping", "description": "invoices and charges"},
                {"name": "human", "action": {"kind": "stuck", "message": "Handing over."}},
            ],
        )
    )
).encode()


def _checksum(body: bytes) -> str:
    return load_pack(body).checksum


class RolloutServer:
    """A studio stand-in: the live pack, a rollout header when set, the candidate URL."""

    def __init__(self) -> None:
        self.rollout: Rollout | None = None
        self.candidate_pulls = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                if self.path.endswith("/candidate"):
                    server.candidate_pulls += 1
                    if server.rollout is None:
                        return self._send(404, b"", None)
                    return self._send(200, CANDIDATE, f'"{_checksum(CANDIDATE)}"')
                etag = f'"{_checksum(LIVE)}"'
                if server.rollout is not None:
                    etag = f'"{_checksum(LIVE)}+{server.rollout.header()}"'
                if self.headers.get("If-None-Match") == etag:
                    return self._send(304, b"", etag)
                return self._send(200, LIVE, etag)

            def _send(self, code: int, body: bytes, etag: str | None) -> None:
                self.send_response(code)
                if etag:
                    self.send_header("ETag", etag)
                if server.rollout is not None and not self.path.endswith("/candidate"):
                    self.send_header(ROLLOUT_HEADER, server.rollout.header())
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/packs/production"

    def start(self, mode: str, share: int = 0) -> None:
        self.rollout = Rollout(7, mode, share, 2, _checksum(CANDIDATE))  # type: ignore[arg-type]


@pytest.fixture
def server() -> Iterator[RolloutServer]:
    s = RolloutServer()
    thread = threading.Thread(target=s.httpd.serve_forever, daemon=True)
    thread.start()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


class Recorder:
    """An EventReporter stand-in that keeps what `report` was given."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.stats = ReporterStats(queued=0, sent=0, dropped=0, failed=0, last_error=None)

    def report(self, decision: Any, message: Any = None, **kw: Any) -> bool:
        self.records.append({"route": decision.route, **kw})
        return True


def test_the_header_round_trips_and_a_header_it_cannot_read_means_no_rollout():
    rollout = Rollout(3, "canary", 30, 9, "sha256:abc")
    assert parse_rollout(rollout.header()) == rollout
    assert parse_rollout("mode=canary; share=30") is None
    assert parse_rollout("id=1; mode=sideways; share=3; checksum=x") is None
    assert parse_rollout("id=1; mode=canary; share=300; checksum=x") is None
    assert parse_rollout(None) is None


def test_buckets_are_stable_and_spread_over_0_to_99():
    buckets = [bucket(f"conv-{i}") for i in range(5000)]
    assert buckets == [bucket(f"conv-{i}") for i in range(5000)]
    assert min(buckets) == 0 and max(buckets) == 99
    assert 0.27 < sum(b < 30 for b in buckets) / 5000 < 0.33


def test_a_canary_serves_its_share_by_bucket_and_never_moves_a_conversation(server):
    server.start("canary", 30)
    recorder = Recorder()
    router = RemoteRouter(PackFetcher(server.url), reporter=recorder)  # type: ignore[arg-type]
    arms: dict[str, set[str]] = {}
    for turn in range(2):
        for i in range(1000):
            router.route("where is my parcel", conversation=f"c{i}", turn=turn)
            record = recorder.records[-1]
            arms.setdefault(f"c{i}", set()).add(record["rollout"]["arm"])
        assert router.refresh().status == "unchanged"
    assert all(len(a) == 1 for a in arms.values())
    on_candidate = sum(a == {"candidate"} for a in arms.values())
    assert on_candidate == sum(bucket(f"c{i}") < 30 for i in range(1000))
    assert 250 < on_candidate < 350
    assert server.candidate_pulls == 1


def test_a_conversation_started_before_the_canary_stays_on_live(server):
    recorder = Recorder()
    router = RemoteRouter(PackFetcher(server.url), reporter=recorder)  # type: ignore[arg-type]
    started = [f"c{i}" for i in range(200)]
    for c in started:
        router.route("hello", conversation=c, turn=0)
    server.start("canary", 100)
    assert router.refresh().status == "updated"
    for c in started:
        router.route("where is my parcel", conversation=c, turn=1)
        assert recorder.records[-1]["rollout"]["arm"] == "live"
    router.route("where is my parcel", conversation="new", turn=0)
    assert recorder.records[-1]["rollout"]["arm"] == "candidate"


def test_shadow_serves_live_and_reports_the_candidates_decision_beside_it(server):
    server.start("shadow")
    recorder = Recorder()
    router = RemoteRouter(PackFetcher(server.url), reporter=recorder)  # type: ignore[arg-type]
    decision = router.route("where is my parcel delivery", conversation="c1", turn=0)
    assert decision.route == "shipping"
    rollout = recorder.records[-1]["rollout"]
    assert rollout["arm"] == "live" and rollout["mode"] == "shadow" and rollout["id"] == 7
    assert rollout["shadow"]["route"] == "billing"
    assert (rollout["live_version"], rollout["candidate_version"]) == (1, 2)


def test_a_halt_puts_every_conversation_back_on_live_at_the_next_pull(server):
    server.start("canary", 100)
    recorder = Recorder()
    router = RemoteRouter(PackFetcher(server.url), reporter=recorder)  # type: ignore[arg-type]
    router.route("where is my parcel delivery", conversation="c1", turn=0)
    assert recorder.records[-1]["rollout"]["arm"] == "candidate"
    server.rollout = None
    assert router.refresh().status == "updated"
    decision = router.route("where is my parcel delivery", conversation="c1", turn=1)
    assert decision.route == "shipping" and recorder.records[-1]["rollout"] is None


def test_a_candidate_that_cannot_be_pulled_fails_the_pull_and_keeps_what_was_served(server):
    router = RemoteRouter(PackFetcher(server.url))
    server.start("canary", 100)
    server.rollout = Rollout(7, "canary", 100, 2, "sha256:not-the-candidate")
    result = router.refresh()
    assert result.status == "failed" and "not the one the rollout names" in (result.error or "")
    assert router.serving.rollout is None
    assert router.fetcher.etag == f'"{_checksum(LIVE)}"'  # the next pull tries again


def test_an_agent_starting_while_the_candidate_cannot_be_pulled_starts_on_live(server):
    """A rollout halted between the pull and the candidate's pull must not keep an agent from
    starting: the live pack it got is good. It joins the rollout at a later pull."""
    server.start("canary", 100)
    server.rollout = Rollout(7, "canary", 100, 2, "sha256:not-the-candidate")
    router = RemoteRouter(PackFetcher(server.url))
    assert router.serving.rollout is None
    assert "not the one the rollout names" in (router.last_error or "")
    assert router.route("where is my parcel delivery", conversation="c1").route == "shipping"
    assert router.fetcher.etag is None  # the next pull asks in full, the candidate again
    server.start("canary", 100)
    assert router.refresh().status == "updated" and router.serving.rollout is not None
    assert router.route("where is my parcel delivery", conversation="c2").route == "billing"


def test_an_agent_with_no_pack_and_a_studio_that_fails_still_cannot_start(server):
    server.httpd.shutdown()
    server.httpd.server_close()
    with pytest.raises(PackError, match="no pack to start from"):
        RemoteRouter(PackFetcher(server.url, timeout=1.0))


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ("where is my parcel", "where is my parcel??", True),
        ("where is my parcel", "my parcel, where is it", True),
        ("cancel my order", "no, I meant change my order", True),
        ("refund please", "That's not what I asked", True),
        ("where is my parcel", "thanks, and what about my invoice", False),
        ("hi", "where is my parcel", False),
        ("where is my parcel", "", False),
    ],
)
def test_a_reask_is_the_same_again_or_a_correction(before, after, expected):
    assert is_reask(before, after) is expected
