"""Pulling packs over HTTP and swapping routers live, against a real server on loopback."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from routing_core import dump_pack, load_pack
from routing_core.remote import LiveRouter, PackFetcher, RemoteRouter
from routing_core.router import Router
from routing_core.version import user_agent
from tests.routing_core.conftest import minimal_doc


class PackServer:
    """A tiny studio stand-in: serves one pack with a strong ETag, or misbehaves on demand."""

    def __init__(self) -> None:
        self.body = dump_pack(load_pack(minimal_doc())).encode()
        self.mode = "ok"  # ok | 500 | garbage | invalid | slow
        self.seen_tokens: list[str | None] = []
        self.seen_agents: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                server.seen_tokens.append(self.headers.get("Authorization"))
                server.seen_agents.append(self.headers.get("User-Agent"))
                etag = '"' + json.loads(server.body)["checksum"] + '"'
                if server.mode == "500":
                    return self._send(500, b"boom")
                if server.mode == "slow":
                    time.sleep(1.0)
                if server.mode == "garbage":
                    return self._send(200, b'{"routes": [tru', etag)
                if server.mode == "invalid":
                    return self._send(200, json.dumps({"routes": []}).encode(), etag)
                if self.headers.get("If-None-Match") == etag:
                    return self._send(304, b"", etag)
                return self._send(200, server.body, etag)

            def _send(self, code: int, body: bytes, etag: str | None = None) -> None:
                self.send_response(code)
                if etag:
                    self.send_header("ETag", etag)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/pack"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def publish(self, **changes: object) -> None:
        self.body = dump_pack(load_pack(minimal_doc(**changes))).encode()


@pytest.fixture
def server() -> Iterator[PackServer]:
    s = PackServer()
    s.thread.start()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def test_it_pulls_a_pack_then_gets_304_until_it_changes(server):
    fetcher = PackFetcher(server.url, token="tok-1")
    assert fetcher.fetch().status == "updated"
    assert fetcher.fetch().status == "unchanged"
    server.publish(default_route="human")
    result = fetcher.fetch()
    assert result.status == "updated" and result.pack is not None
    assert result.pack.default_route == "human"
    assert server.seen_tokens[0] == "Bearer tok-1"
    assert server.seen_agents[0] == user_agent()
    assert re.fullmatch(r"routing-core/\S+ python/3\.\d+", user_agent())


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("500", "HTTP 500"),
        ("garbage", "invalid pack"),
        ("invalid", "invalid pack"),
        ("slow", "cannot reach"),
    ],
)
def test_a_bad_pull_keeps_the_last_good_pack(server, mode, reason):
    live = RemoteRouter(PackFetcher(server.url, timeout=0.3))
    before = live.current
    server.mode = mode
    result = live.refresh()
    assert result.status == "failed" and reason in (result.error or "")
    assert live.current is before
    assert live.route("anything").verdict in ("move", "stay", "menu", "unmatched")


def test_an_unreachable_studio_is_survived_after_the_first_pack(server):
    live = RemoteRouter(PackFetcher(server.url, timeout=0.5))
    server.httpd.shutdown()
    server.httpd.server_close()
    assert live.refresh().status == "failed"
    assert live.route("hello").pack[0] == "t"


def test_without_any_pack_the_first_pull_failure_is_raised():
    from routing_core import PackError

    with pytest.raises(PackError, match="no pack to start from"):
        RemoteRouter(PackFetcher("http://127.0.0.1:9/none", timeout=0.3))


def test_a_refresh_swaps_in_the_new_pack(server):
    live = RemoteRouter(PackFetcher(server.url))
    server.publish(default_route="human")
    assert live.refresh().status == "updated"
    assert live.current.pack.default_route == "human"


def test_routing_threads_see_one_pack_or_the_other_while_it_is_swapped():
    doc_a = minimal_doc()
    doc_b = minimal_doc(default_route="human", profile={"slug": "b", "name": "B"})
    a, b = Router(load_pack(doc_a)), Router(load_pack(doc_b))
    live = LiveRouter(a)
    seen: list[tuple[str, str | None]] = []
    stop = threading.Event()

    def route_forever() -> None:
        while not stop.is_set():
            d = live.route("no words that match")
            seen.append((d.pack[0], d.route))

    def wait_for(slug: str) -> None:
        # Swap only once a routing thread has decided on the pack in service, so the
        # threads really run on each pack in turn, however busy the machine is.
        deadline = time.monotonic() + 10
        while not any(s == slug for s, _ in seen[-50:]) and time.monotonic() < deadline:
            time.sleep(0.001)

    threads = [threading.Thread(target=route_forever) for _ in range(8)]
    for t in threads:
        t.start()
    for i in range(40):
        target = b if i % 2 == 0 else a
        live.swap(target)
        wait_for(target.pack.profile.slug)
    stop.set()
    for t in threads:
        t.join()
    # pack a has no default route (unmatched -> no route); pack b falls back to "human"
    assert set(seen) == {("t", None), ("b", "human")}
