"""routing_core's agent loader (PackFetcher / RemoteRouter) against the real studio on loopback."""

from __future__ import annotations

import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread

import pytest

from routing_core.remote import PackFetcher, RemoteRouter
from studio.models import Route
from studio.publishing.versions import promote, publish
from studio.shared.edits import save_item
from studio.shared.tokens import create_read_token


@pytest.fixture
def agent(live_server, profile, owner):
    """An agent's RemoteRouter pulling the shop's production pack with its read token."""
    promote(publish(profile, user=owner), "production", user=owner)
    _, secret = create_read_token(profile, "agent", user=owner)
    url = f"{live_server.url}/api/profiles/shop/packs/production"
    return RemoteRouter(PackFetcher(url, token=secret, timeout=2.0))


def test_the_first_pull_loads_the_production_pack(agent):
    assert agent.current.pack.version == 1
    assert agent.route("why was I charged twice").route == "billing"


def test_a_second_pull_of_an_unchanged_pack_is_a_304(agent):
    assert agent.refresh().status == "unchanged"
    assert agent.current.pack.version == 1


def test_a_new_publish_promoted_to_production_is_swapped_in(agent, profile, owner):
    save_item(Route(profile=profile, name="returns", examples=["send the shoes back"]), user=owner)
    promote(publish(profile, user=owner), "production", user=owner)
    assert agent.refresh().status == "updated"
    assert agent.current.pack.version == 2
    assert "returns" in agent.current.pack.route_names


def test_a_rollback_is_swapped_in_too(agent, profile, owner):
    promote(publish(profile, user=owner), "production", user=owner)
    agent.refresh()
    promote(profile.versions.get(number=1), "production", user=owner)
    assert agent.refresh().status == "updated"
    assert agent.current.pack.version == 1


class _Proxy(BaseHTTPRequestHandler):
    """Stands in front of the studio so that the test can stop it and start it again."""

    upstream = ""

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        names = ("Authorization", "If-None-Match", "Accept")
        headers = {n: self.headers[n] for n in names if self.headers.get(n)}
        request = urllib.request.Request(self.upstream + self.path, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:
                status, body, etag = answer.status, answer.read(), answer.headers.get("ETag")
        except urllib.error.HTTPError as exc:
            status, body, etag = exc.code, exc.read(), exc.headers.get("ETag")
        self.send_response(status)
        if etag:
            self.send_header("ETag", etag)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _serve(handler: type[BaseHTTPRequestHandler], port: int = 0) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    Thread(target=server.serve_forever, daemon=True).start()
    return server


def _stop(server: ThreadingHTTPServer) -> None:
    server.shutdown()
    server.server_close()


def test_the_agent_survives_a_studio_restart_and_picks_up_what_was_published_meanwhile(
    live_server, agent, profile, owner
):
    _Proxy.upstream = live_server.url
    studio = _serve(_Proxy)
    port = studio.server_address[1]
    agent.fetcher.url = f"http://127.0.0.1:{port}/api/profiles/shop/packs/production"
    assert agent.refresh().status == "unchanged"

    _stop(studio)  # the studio goes down
    down = agent.refresh()
    assert down.status == "failed" and "cannot reach" in (down.error or "")
    assert agent.route("why was I charged twice").route == "billing"

    promote(publish(profile, user=owner), "production", user=owner)
    studio = _serve(_Proxy, port)  # and comes back
    try:
        assert agent.refresh().status == "updated"
    finally:
        _stop(studio)
    assert agent.current.pack.version == 2


class _Corrupting(BaseHTTPRequestHandler):
    """A proxy that mangles the studio's answer: the body is cut short."""

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        body = b'{"format": "route-pack", "routes": [tr'
        self.send_response(200)
        self.send_header("ETag", '"sha256:bogus"')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_corrupted_response_keeps_the_last_good_pack(agent):
    server = _serve(_Corrupting)
    try:
        agent.fetcher.url = f"http://127.0.0.1:{server.server_address[1]}/pack"
        result = agent.refresh()
    finally:
        _stop(server)
    assert result.status == "failed" and "invalid pack" in (result.error or "")
    assert agent.current.pack.version == 1


def test_a_revoked_token_is_refused_and_the_agent_keeps_its_pack(agent, owner):
    from studio.models import ReadToken
    from studio.shared.tokens import revoke

    revoke(ReadToken.objects.get(), user=owner)
    agent.fetcher.etag = None  # force a full pull
    result = agent.refresh()
    assert result.status == "failed" and "401" in (result.error or "")
    assert agent.current.pack.version == 1
