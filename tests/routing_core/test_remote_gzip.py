"""PackFetcher asks for gzip and decodes it (standard library), against a real loopback server."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from routing_core import dump_pack, load_pack
from routing_core.remote import PackFetcher
from tests.routing_core.conftest import minimal_doc


class GzipServer:
    """Serves one pack gzip-compressed when asked for it; `body` may be replaced by a bad one."""

    def __init__(self) -> None:
        self.plain = dump_pack(load_pack(minimal_doc())).encode()
        self.body: bytes | None = None  # None: the pack, compressed as the client accepts
        self.accepts: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                accept = self.headers.get("Accept-Encoding")
                server.accepts.append(accept)
                gzipped = "gzip" in (accept or "")
                if server.body is not None:
                    body = server.body
                else:
                    body = gzip.compress(server.plain) if gzipped else server.plain
                self.send_response(200)
                self.send_header("ETag", '"e1"')
                if gzipped:
                    self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/pack"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def server() -> Iterator[GzipServer]:
    s = GzipServer()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def test_it_asks_for_gzip_and_loads_the_decoded_pack(server: GzipServer) -> None:
    result = PackFetcher(server.url).fetch()

    assert server.accepts == ["gzip"]
    assert result.status == "updated" and result.pack is not None
    assert dump_pack(result.pack).encode() == server.plain


def test_a_body_that_is_not_gzip_is_a_failed_pull(server: GzipServer) -> None:
    server.body = b"not gzip at all"

    result = PackFetcher(server.url).fetch()

    assert result.status == "failed" and "does not decode" in (result.error or "")


def test_a_truncated_gzip_body_is_a_failed_pull(server: GzipServer) -> None:
    server.body = gzip.compress(server.plain)[:-20]

    result = PackFetcher(server.url).fetch()

    assert result.status == "failed" and result.pack is None


def test_a_gzip_bomb_is_cut_at_the_size_limit(
    server: GzipServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import routing_core.remote as remote

    monkeypatch.setattr(remote, "MAX_PACK_BYTES", 1000)  # the real limit is 83 MiB
    server.body = gzip.compress(b" " * 100_000)

    result = PackFetcher(server.url).fetch()

    assert result.status == "failed" and "larger than" in (result.error or "")
