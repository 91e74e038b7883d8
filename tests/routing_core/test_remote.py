"""Pulling packs over HTTP and swapping routers live, against a real server on loopback."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urljoin

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
        ("slow", "no complete answer within 0.3 s"),
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


class Redirector:
    """A second origin on loopback (another port): answers every GET with `status` to `location`."""

    def __init__(self, status: int = 302) -> None:
        self.status, self.location = status, ""
        self.seen_tokens: list[str | None] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                outer.seen_tokens.append(self.headers.get("Authorization"))
                self.send_response(outer.status)
                self.send_header("Location", outer.location)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/pack"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def redirector() -> Iterator[Redirector]:
    r = Redirector()
    yield r
    r.close()


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_origin_gets_neither_the_token_nor_trust(server, status):
    studio = Redirector(status)  # the configured origin, pointing at another one
    studio.location = server.url  # same host, another port: another origin
    try:
        result = PackFetcher(studio.url, token="rsp_secret").fetch()
    finally:
        studio.close()
    assert studio.seen_tokens == ["Bearer rsp_secret"]
    assert server.seen_tokens == []  # never contacted: neither the token nor a pack
    assert result.status == "failed" and result.pack is None
    assert "redirected to another site" in (result.error or "")


def test_a_same_origin_redirect_is_followed_with_the_token(server):
    # /old on the pack server's own origin (same scheme, host and port) redirects to /pack.
    original = server.httpd.RequestHandlerClass.do_GET

    def do_get(handler: BaseHTTPRequestHandler) -> None:
        if handler.path != "/old":
            return original(handler)
        handler.send_response(302)
        handler.send_header("Location", "/pack")
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    server.httpd.RequestHandlerClass.do_GET = do_get  # type: ignore[method-assign]
    result = PackFetcher(server.url.replace("/pack", "/old"), token="rsp_secret").fetch()
    assert result.status == "updated" and result.pack is not None
    assert server.seen_tokens == ["Bearer rsp_secret"]


@pytest.mark.parametrize(
    "target",
    ["http://studio/pack", "https://studio:444/pack", "https://other/pack", "//other/pack"],
)
def test_a_different_scheme_or_port_is_another_origin(target):
    from routing_core import _http

    configured = _http.origin("https://studio/pack")
    assert _http.origin("https://STUDIO:443/x") == configured
    assert _http.origin(urljoin("https://studio/old", target)) != configured


def test_a_redirect_loop_ends_in_a_failure(redirector):
    redirector.location = redirector.url
    result = PackFetcher(redirector.url).fetch()
    assert result.status == "failed" and "redirects" in (result.error or "")
    assert len(redirector.seen_tokens) == 6


class Dripper:
    """Answers with headers, then one byte of body every 0.5 s (or drips the headers too)."""

    def __init__(self, headers_too: bool) -> None:
        self.stop = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                head = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"
                chunks = [bytes([b]) for b in head] if headers_too else [head]
                try:
                    for chunk in chunks + [b"{"] * 100:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                        if outer.stop.wait(0.5 if chunk != head else 0):
                            return
                except OSError:
                    return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/pack"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.mark.parametrize("headers_too", [False, True], ids=["body", "headers"])
def test_timeout_bounds_the_whole_request_against_a_server_that_drips(headers_too):
    dripper = Dripper(headers_too)
    started = time.monotonic()
    try:
        result = PackFetcher(dripper.url, timeout=1.0).fetch()
    finally:
        elapsed = time.monotonic() - started
        dripper.stop.set()
        dripper.httpd.shutdown()
        dripper.httpd.server_close()
    assert result.status == "failed"
    assert "no complete answer within 1 s" in (result.error or "")
    assert elapsed < 1.5
