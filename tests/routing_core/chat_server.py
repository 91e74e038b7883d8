"""A real OpenAI-compatible chat-completions server on 127.0.0.1, scripted by the test.

It speaks HTTP like such an endpoint: JSON completions with `usage`, error statuses, broken
bodies, slow answers. The LLM tier's tests talk to it through the real urllib transport.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer: a completion (`content`), or an error status, or a raw body."""

    content: str = ""
    status: int = 200
    delay: float = 0.0
    raw: bytes | None = None
    usage: dict[str, Any] = field(
        default_factory=lambda: {
            "prompt_tokens": 100,
            "completion_tokens": 2,
            "total_tokens": 102,
            "prompt_tokens_details": {"cached_tokens": 40},
        }
    )

    def body(self, model: str) -> bytes:
        if self.raw is not None:
            return self.raw
        if self.status != 200:
            return json.dumps({"error": {"message": "upstream exploded"}}).encode()
        return json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": self.content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": self.usage,
            }
        ).encode()


@dataclass
class Seen:
    """A request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def system(self) -> str:
        return str(self.body["messages"][0]["content"])

    @property
    def last_user(self) -> str:
        return str(self.body["messages"][-1]["content"])


class ChatServer:
    """Answers each request with `script(request)`; records every request it got."""

    def __init__(self, script: Callable[[Seen], Reply]) -> None:
        self.script = script
        self.seen: list[Seen] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                length = int(self.headers.get("Content-Length", "0"))
                seen = Seen(self.path, dict(self.headers), json.loads(self.rfile.read(length)))
                server.seen.append(seen)
                reply = server.script(seen)
                time.sleep(reply.delay)
                body = reply.body(seen.body.get("model", ""))
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left: that is the point of a slow reply

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


def answers(*replies: Reply | str) -> Callable[[Seen], Reply]:
    """A script that gives these replies in order, then repeats the last one."""
    queue: Iterator[Reply | str] = iter(replies)
    last: list[Reply] = []

    def script(_seen: Seen) -> Reply:
        item = next(queue, None)
        if item is not None:
            last[:] = [item if isinstance(item, Reply) else Reply(item)]
        return last[0]

    return script
