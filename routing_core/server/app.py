"""The application behind `routing-core serve` (docs/server.md): an ASGI app, which the
command runs under uvicorn and any other ASGI server can run too.

A plain callable rather than a framework: six endpoints with JSON bodies need no
routing table or middleware stack, and each layer a framework adds is paid on every turn
(docs/decisions.md, "The route server"). A turn is decided on the event loop itself: it is
CPU work of tens to hundreds of microseconds, less than a hop to a thread pool costs.
"""

from __future__ import annotations

import gc
import hmac
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson

from routing_core.decision import Decision
from routing_core.remote import PackFetcher
from routing_core.reporting import EventReporter
from routing_core.rollout import Pins, rollout_record, serve_turn
from routing_core.server import metrics
from routing_core.server.api import (
    ApiError,
    BatchRequest,
    RouteRequest,
    Turn,
    check_turns,
    decision_body,
    pack_body,
    parse,
)
from routing_core.server.config import ServeConfig
from routing_core.server.openapi import openapi_document
from routing_core.server.packs import FileWatcher, PackHolder, PackState, StudioFollower
from routing_core.signing import PublicKeys

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
# (status, body, content type, extra headers)
Answer = tuple[int, bytes, bytes, list[tuple[bytes, bytes]]]

log = logging.getLogger("routing_core.server")

_JSON = (b"content-type", b"application/json")
_ENDPOINTS: dict[str, tuple[str, bool]] = {
    # path: (method, needs the caller's token)
    "/v1/route": ("POST", True),
    "/v1/route/batch": ("POST", True),
    "/v1/pack": ("GET", True),
    "/healthz": ("GET", False),
    "/readyz": ("GET", False),
    "/metrics": ("GET", False),
    # Open like the probes: it names no route and no pack, and a client generator fetches it.
    "/openapi.json": ("GET", False),
}


class RouteServer:
    """The app: a pack holder fed by a background thread, and the endpoints that read it."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.holder = PackHolder(
            config.source, on_swap=_swapped, on_failure=metrics.observe_failure
        )
        self.reporter = _reporter(config)
        self._pins = Pins()  # each conversation's pack during a rollout
        self.watcher: FileWatcher | StudioFollower
        keys = PublicKeys.from_files(config.verify_keys) if config.verify_keys else None
        if config.pack_file:
            self.watcher = FileWatcher(
                config.pack_file, self.holder, interval=config.watch_interval, keys=keys
            )
        else:
            assert config.studio_url is not None  # ServeConfig checks one source is given
            fetcher = PackFetcher(
                config.studio_url,
                token=config.studio_token,
                timeout=config.pull_timeout,
                keys=keys,
            )
            reporter = self.reporter
            if reporter is not None:
                fetcher.count_dropped = lambda: reporter.stats.dropped
            self.watcher = StudioFollower(fetcher, self.holder, interval=config.pull_interval)
        self._tokens = tuple(t.encode() for t in config.tokens)
        self._openapi: bytes | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """ASGI: what uvicorn, or any other ASGI server, calls."""
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            try:
                answer = await self._answer(scope, receive)
            except ApiError as exc:  # every refusal in the documented error shape
                metrics.REFUSED.labels(str(exc.status)).inc()
                answer = exc.status, orjson.dumps(exc.body()), _JSON[1], exc.headers
            await _send(send, *answer)

    def start(self) -> None:
        """Start following the pack's source (the first load happens on that thread)."""
        self.watcher.start()

    def stop(self) -> None:
        """Stop following the source and send what the reporter still holds."""
        self.watcher.stop()
        if self.reporter is not None:
            self.reporter.close()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _answer(self, scope: Scope, receive: Receive) -> Answer:
        """(status, body, content type, extra headers) of one request."""
        method, path = scope["method"], scope["path"]
        endpoint = _ENDPOINTS.get(path)
        if endpoint is None:
            raise ApiError(404, "not_found", f"no endpoint {path[:200]}")
        expected, guarded = endpoint
        if method != expected and not (expected == "GET" and method == "HEAD"):
            raise ApiError(
                405,
                "method_not_allowed",
                f"{path} takes {expected}",
                headers=[(b"allow", expected.encode())],
            )
        if guarded and self._tokens:
            self._authenticate(_header(scope, b"authorization") or b"")
        if expected == "POST":
            _check_content_type(_header(scope, b"content-type"))
            body = await _read_body(receive, self.config.max_body_bytes)
            started = time.perf_counter()
            answer = self._route(body) if path == "/v1/route" else self._route_batch(body)
            # orjson: at 150 routes the standard library's encoder took longer than the turn
            # itself (docs/decisions.md, "The route server"). Non-finite numbers are text.
            data = orjson.dumps(answer)
            metrics.observe_latency(path, time.perf_counter() - started)
            return 200, data, _JSON[1], []
        return self._get(path)

    def _get(self, path: str) -> Answer:
        state = self.holder.state
        if path == "/healthz":
            return _json(200, {"status": "ok"})
        if path == "/metrics":
            return 200, metrics.exposition(), metrics.CONTENT_TYPE.encode(), []
        if path == "/openapi.json":
            return 200, self._openapi_bytes(), _JSON[1], []
        if state is None:
            raise _not_ready(self.holder.last_error)
        if path == "/readyz":
            return _json(200, {"ready": True, **state.identity()})
        return _json(200, pack_body(state, self.holder.source, self.holder.last_error))

    def _openapi_bytes(self) -> bytes:
        """The OpenAPI document of this server's settings, made on first asking."""
        if self._openapi is None:
            self._openapi = orjson.dumps(openapi_document(self.config))
        return self._openapi

    def _authenticate(self, given: bytes) -> None:
        scheme, _, token = given.partition(b" ")
        # compare_digest on every configured token: no early exit tells which one was close.
        matched = False
        for expected in self._tokens:
            matched |= hmac.compare_digest(token.strip(), expected)
        if scheme.lower() != b"bearer" or not matched:
            raise ApiError(
                401,
                "unauthorized",
                "send a valid token as 'Authorization: Bearer <token>'",
                headers=[(b"www-authenticate", b"Bearer")],
            )

    def _route(self, body: bytes) -> dict[str, Any]:
        request: RouteRequest = parse(RouteRequest, body)
        state = self._state()
        check_turns([request], state, self.config.max_message_chars)
        return decision_body(self._decide(state, request), state, request)

    def _route_batch(self, body: bytes) -> dict[str, Any]:
        request: BatchRequest = parse(BatchRequest, body)
        if len(request.turns) > self.config.max_batch:
            raise ApiError(
                422,
                "batch_too_large",
                f"at most {self.config.max_batch} turns in one batch",
                [("turns", f"{len(request.turns)} turns given")],
            )
        state = self._state()  # one pack for the whole batch
        check_turns(request.turns, state, self.config.max_message_chars, prefix="turns")
        decisions = [
            decision_body(self._decide(state, turn), state, request) for turn in request.turns
        ]
        return {"pack": state.identity(), "decisions": decisions}

    def _state(self) -> PackState:
        state = self.holder.state
        if state is None:
            raise _not_ready(self.holder.last_error)
        return state

    def _decide(self, state: PackState, turn: Turn) -> Decision:
        """Route on the live pack, or during a rollout on the conversation's pack (the library's
        `serve_turn`, so the server and `RemoteRouter` choose alike: docs/server.md)."""
        serving = state.serving
        arm, decision, shadow = serve_turn(
            serving,
            self._pins,
            turn.message,
            turn.incumbent,
            turn.conversation,
            shadow=self.reporter is not None,
        )
        metrics.observe_decision(decision)
        record = rollout_record(serving, arm, shadow)
        if self.reporter is not None and not self.reporter.report(
            decision, turn.message, conversation=turn.conversation, turn=turn.turn, rollout=record
        ):
            metrics.EVENTS_DROPPED.inc()
        return decision


def create_app() -> RouteServer:
    """The app for the settings `routing-core serve` put in the environment (the server's factory)."""
    return RouteServer(ServeConfig.from_env())


def _swapped(state: PackState) -> None:
    """A new pack is in service: count it, then set the heap's long-lived objects aside.

    A worker serving a CLINC150-size pack holds some 46,000 objects the cyclic garbage
    collector tracks, and a full collection walks them all: 25 ms of CPU, every request
    waiting on that worker stalled with it (docs/decisions.md, "The route server"). Frozen,
    they are never walked again. The previous pack's objects are made
    collectable first and collected once, here on the watcher thread: a pause at each swap
    (rare) instead of at a full collection (every few thousand requests), and no pack kept
    alive by the freeze.
    """
    metrics.observe_swap(state)
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def _reporter(config: ServeConfig) -> EventReporter | None:
    if not config.events_url or not config.events_token:
        return None
    from routing_core.redaction import redact

    return EventReporter(
        config.events_url, token=config.events_token, redactor=redact if config.redact else None
    )


def _not_ready(reason: str | None) -> ApiError:
    message = "no pack is loaded yet" + (f": {reason}" if reason else "")
    return ApiError(503, "not_ready", message, headers=[(b"retry-after", b"1")])


def _check_content_type(given: bytes | None) -> None:
    if given is None:
        return
    kind = given.split(b";", 1)[0].strip().lower()
    if kind != b"application/json" and not kind.endswith(b"+json"):
        raise ApiError(415, "unsupported_media_type", "send the body as application/json")


def _header(scope: Scope, name: bytes) -> bytes | None:
    """The request's first header of this lower-case name."""
    headers: list[tuple[bytes, bytes]] = scope["headers"]
    for key, value in headers:
        if key == name:
            return value
    return None


async def _read_body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ApiError(400, "disconnected", "the client went away before its body ended")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise ApiError(413, "body_too_large", f"the body is larger than {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _json(status: int, body: dict[str, Any]) -> Answer:
    return status, orjson.dumps(body), _JSON[1], []


async def _send(
    send: Send,
    status: int,
    data: bytes,
    content_type: bytes,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(data)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})
