"""The event reporter's transport, against real HTTP servers on loopback.

It follows `PackFetcher`'s rules (routing_core/_http.py): the token goes only to the configured
origin, a redirect elsewhere loses the events (counted as failed, never as sent), and a
timeout bounds the whole POST, not each socket read.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from routing_core import Router, load_pack
from routing_core.reporting import EventReporter
from tests.routing_core.conftest import PACKS


class Origin:
    """One loopback origin (its own port) that records every POST and answers as told."""

    def __init__(self) -> None:
        self.status, self.location = 202, ""
        self.seen: list[tuple[str, str | None, bytes]] = []  # (path, Authorization, body)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                outer.seen.append((self.path, self.headers.get("Authorization"), body))
                status, location = outer.status, outer.location
                if self.path == "/moved-here":  # the target of a same-origin redirect
                    status, location = 202, ""
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST  # noqa: N815 - a 303 turned into a GET would land here

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def studio() -> Iterator[Origin]:
    o = Origin()
    yield o
    o.close()


@pytest.fixture
def elsewhere() -> Iterator[Origin]:
    o = Origin()
    yield o
    o.close()


@pytest.fixture(scope="module")
def router() -> Router:
    return Router(load_pack((PACKS / "support.json").read_text(encoding="utf-8")))


def _report_twice(url: str, router: Router, **kwargs: float) -> EventReporter:
    """Two records in one batch (of two), so one POST carries both."""
    reporter = EventReporter(url, token="rse_secret", batch_size=2, flush_every=5.0, **kwargs)
    decisions = [(router.route(text), text) for text in ("I want a refund", "where is my parcel")]
    for decision, text in decisions:
        assert reporter.report(decision, text)
    return reporter


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_origin_never_gets_the_token_and_the_events_fail(
    studio, elsewhere, router, status
):
    studio.status, studio.location = status, elsewhere.base + "/events"  # another port
    reporter = _report_twice(studio.base + "/events", router)
    assert reporter.flush(5)
    assert [auth for _, auth, _ in studio.seen] == ["Bearer rse_secret"]
    assert elsewhere.seen == []  # never contacted: neither the token nor the events
    stats = reporter.stats
    assert (stats.sent, stats.failed) == (0, 2)
    assert stats.last_error and "redirected to another site" in stats.last_error


def test_a_same_origin_307_is_followed_with_the_token_and_the_body(studio, router):
    studio.status, studio.location = 307, "/moved-here"
    reporter = _report_twice(studio.base + "/events", router)
    assert reporter.flush(5)
    (_, _, first), (path, auth, body) = studio.seen
    assert (path, auth, body) == ("/moved-here", "Bearer rse_secret", first)
    assert len(json.loads(body)["events"]) == 2
    assert (reporter.stats.sent, reporter.stats.failed) == (2, 0)


def test_a_same_origin_303_is_not_turned_into_a_get_that_loses_the_events(studio, router):
    studio.status, studio.location = 303, "/moved-here"
    reporter = _report_twice(studio.base + "/events", router)
    assert reporter.flush(5)
    assert [path for path, _, _ in studio.seen] == ["/events"]
    assert (reporter.stats.sent, reporter.stats.failed) == (0, 2)
    assert "would drop the request's body" in (reporter.stats.last_error or "")


class Dripper:
    """Reads the POST, then answers one byte every 0.5 s; counts the bytes it got out."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.dripped = 0
        self.cut = threading.Event()  # the client closed the connection under it
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                self.rfile.read(int(self.headers["Content-Length"]))
                head = b"HTTP/1.1 202 Accepted\r\nContent-Length: 100\r\n\r\n"
                try:
                    for byte in head + b"x" * 100:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        outer.dripped += 1
                        if outer.stop.wait(0.5):
                            return
                except OSError:
                    outer.cut.set()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/events"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def test_the_timeout_bounds_the_whole_post_against_a_server_that_drips(router):
    dripper = Dripper()
    try:
        reporter = _report_twice(dripper.url, router, timeout=1.0)
        assert reporter.flush(10)  # per-read timeouts would take 73 s of drips
        assert dripper.cut.wait(5)  # the client hung up; the server did not finish
    finally:
        dripper.stop.set()
        dripper.httpd.shutdown()
        dripper.httpd.server_close()
    stats = reporter.stats
    assert (stats.sent, stats.failed) == (0, 2)
    assert "no complete answer within 1 s" in (stats.last_error or "")
    assert dripper.dripped < 10  # 0.5 s a byte: the 1 s deadline let only a few through
