"""A real `routing-core serve` process on loopback, and a real tiny studio for it to pull from.

Shared by the server's tests, the TypeScript client's harness (clients/typescript) and
bench/bench_server.py: each starts the same command an operator runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "conformance"
COMMAND = [sys.executable, "-m", "routing_core.cli"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """A running server: its URL, its process and what it printed."""

    url: str
    process: subprocess.Popen[bytes]
    log_path: Path
    token: str | None = None

    def call(
        self,
        path: str,
        body: Any = None,
        *,
        token: str | None = "default",
        method: str | None = None,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> tuple[int, Any]:
        """(status, parsed JSON or text) of one request; a 4xx/5xx comes back, not raised."""
        sent = {"Accept": "application/json", **(headers or {})}
        use = self.token if token == "default" else token
        if use:
            sent["Authorization"] = f"Bearer {use}"
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            sent.setdefault("Content-Type", "application/json")
        request = urllib.request.Request(self.url + path, data=data, headers=sent, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, _parsed(answer.read(), answer.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, _parsed(exc.read(), exc.headers)

    def route(self, message: str, **fields: Any) -> dict[str, Any]:
        status, body = self.call("/v1/route", {"message": message, **fields})
        assert status == 200, body
        return body

    def metric(self, name: str, **labels: str) -> float:
        """The value of one sample of /metrics (0 when it has none yet)."""
        status, text = self.call("/metrics", token=None)
        assert status == 200
        wanted = name + (
            "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}" if labels else ""
        )
        for line in text.splitlines():
            if line.startswith("#"):
                continue
            key, _, value = line.rpartition(" ")
            if _normalised(key) == wanted:
                return float(value)
        return 0.0

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def _normalised(key: str) -> str:
    if "{" not in key:
        return key
    name, _, rest = key.partition("{")
    pairs = sorted(p for p in rest.rstrip("}").split(",") if p)
    return name + "{" + ",".join(pairs) + "}"


def _parsed(data: bytes, headers: Any) -> Any:
    if "json" in (headers.get("Content-Type") or ""):
        return json.loads(data)
    return data.decode()


def wait_until(predicate: Any, what: str, timeout: float = 60.0) -> None:
    """Poll `predicate` until true; an event that never comes fails with `what`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@contextmanager
def serve(
    tmp: Path,
    *args: str,
    token: str | None = None,
    env: dict[str, str] | None = None,
    ready: bool = True,
) -> Iterator[Server]:
    """`routing-core serve ARGS --port P` until the block ends (then SIGTERM, and its exit checked)."""
    port = free_port()
    log_path = tmp / f"serve-{port}.log"
    full_env = {**os.environ, **(env or {})}
    full_env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    if token:
        full_env["ROUTING_CORE_SERVE_TOKENS"] = token
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [*COMMAND, "serve", *args, "--port", str(port), "--watch-interval", "0.1"],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=full_env,
            cwd=ROOT,
        )
    server = Server(f"http://127.0.0.1:{port}", process, log_path, token)
    try:
        wait_until(lambda: _answers(server) or process.poll() is not None, "the server to listen")
        assert process.poll() is None, server.log()
        if ready:
            wait_until(lambda: server.call("/readyz")[0] == 200, "a pack in service")
        yield server
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _answers(server: Server) -> bool:
    try:
        return server.call("/healthz", token=None)[0] == 200
    except (urllib.error.URLError, ConnectionError, OSError):
        return False


def replace_file(path: Path, data: bytes) -> None:
    """Write as operators should: a temporary file renamed over the pack."""
    temporary = path.with_suffix(".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


@dataclass
class Studio:
    """A real HTTP server playing the studio's pack endpoint: ETag, 304, failures, slowness.

    `mode` is what the next pull meets: `serve` (the current pack), `error` (a 500),
    `hang` (the answer waits until `release` is set), `garbage` (a 200 that is not a pack).
    """

    pack: bytes = b""
    mode: str = "serve"
    token: str | None = None
    pulls: int = 0
    release: threading.Event = field(default_factory=threading.Event)
    url: str = ""
    events_url: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)
    # A rollout's `Routing-Rollout` header and its candidate pack (docs/pack-format.md).
    rollout: str | None = None
    candidate: bytes = b""
    _server: ThreadingHTTPServer | None = None

    def start(self) -> Studio:
        studio = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                studio.pulls += 1
                if studio.token and self.headers.get("Authorization") != f"Bearer {studio.token}":
                    self._answer(401, b"{}")
                elif studio.mode == "error":
                    self._answer(500, b"boom")
                elif studio.mode == "hang":
                    studio.release.wait(60)
                    self._answer(500, b"late")
                elif studio.mode == "garbage":
                    self._answer(200, b'{"not": "a pack"}')
                elif self.path.endswith("/candidate"):
                    self._answer(200 if studio.rollout else 404, studio.candidate)
                else:
                    etag = '"' + json.loads(studio.pack)["checksum"] + str(studio.rollout) + '"'
                    if self.headers.get("If-None-Match") == etag:
                        self._answer(304, b"", etag)
                    else:
                        self._answer(200, studio.pack, etag)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length))
                if studio.token and self.headers.get("Authorization") != f"Bearer {studio.token}":
                    self._answer(401, b"{}")
                    return
                studio.events.extend(body["events"])
                self._answer(202, json.dumps({"accepted": len(body["events"])}).encode())

            def _answer(self, status: int, body: bytes, etag: str | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                if etag:
                    self.send_header("ETag", etag)
                if studio.rollout and not self.path.endswith("/candidate"):
                    self.send_header("Routing-Rollout", studio.rollout)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        base = f"http://127.0.0.1:{self._server.server_address[1]}/api/profiles/tiny"
        self.url = base + "/packs/production"
        self.events_url = base + "/events"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def run_on_own_loop(make: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """The coroutine on its own loop in its own thread, as a server would run it: the browser
    tests leave an event loop running on this one, where `asyncio.run` refuses to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()
