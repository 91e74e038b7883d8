"""The ASGI app itself, called in process as any ASGI server calls it (docs/server.md, "Under
another ASGI server"): what `routing-core serve` runs under uvicorn, here without a socket, so
that the refusals of a body in parts and a client gone mid-body can be driven exactly."""

from __future__ import annotations

import contextlib
import gc
import json
import time
import weakref
from pathlib import Path
from typing import Any

import pytest

from routing_core import Router, load_pack
from routing_core.server import ENV_CONFIG, ServeConfig, create_app
from tests.server.serving import CONFORMANCE, replace_file, run_on_own_loop, wait_until

PACK = CONFORMANCE / "packs" / "support.json"


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv(ENV_CONFIG, ServeConfig(pack_file=str(PACK), max_body_bytes=1000).to_env())
    server = create_app()
    run_on_own_loop(lambda: _lifespan(server, "startup"))
    deadline = time.monotonic() + 30
    while server.holder.state is None and time.monotonic() < deadline:
        time.sleep(0.02)
    yield server
    run_on_own_loop(lambda: _lifespan(server, "shutdown"))
    gc.unfreeze()  # the app froze this test process's heap when its pack came in


async def _lifespan(server: Any, phase: str) -> None:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": f"lifespan.{phase}"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        raise _Done

    with contextlib.suppress(_Done):
        await server({"type": "lifespan"}, receive, send)
    assert sent == [{"type": f"lifespan.{phase}.complete"}]


class _Done(Exception):
    pass


def _call(
    server: Any,
    method: str,
    path: str,
    chunks: list[bytes],
    headers: list[tuple[bytes, bytes]] | None = None,
    disconnect: bool = False,
) -> tuple[int, dict[str, Any], dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]
    if disconnect:
        messages[-1] = {"type": "http.disconnect"}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "headers": headers if headers is not None else [(b"content-type", b"application/json")],
    }
    run_on_own_loop(lambda: server(scope, receive, send))
    start, body = sent
    assert dict(start["headers"])[b"content-length"] == str(len(body["body"])).encode()
    return start["status"], dict(start["headers"]), json.loads(body["body"])


def test_a_turn_is_routed_as_the_library_routes_it(app: Any) -> None:
    router = Router(load_pack(PACK.read_text(encoding="utf-8")))
    for message in ("I was charged twice", "where is my parcel", "hello"):
        status, headers, body = _call(
            app, "POST", "/v1/route", [json.dumps({"message": message}).encode()]
        )
        assert status == 200 and headers[b"content-type"] == b"application/json"
        expected = router.route(message)
        assert (body["route"], body["verdict"]) == (expected.route, expected.verdict)


def test_a_body_in_parts_is_read_whole_and_held_to_the_limit(app: Any) -> None:
    whole = json.dumps({"message": "where is my parcel"}).encode()
    status, _, body = _call(app, "POST", "/v1/route", [whole[:7], whole[7:]])
    assert status == 200 and body["route"] is not None
    status, _, body = _call(app, "POST", "/v1/route", [b"x" * 600, b"x" * 600])
    assert (status, body["error"]["code"]) == (413, "body_too_large")


def test_refusals_have_the_documented_shape(app: Any) -> None:
    cases = [
        ("POST", "/v1/nowhere", [b"{}"], None, 404, "not_found"),
        ("GET", "/v1/route", [b""], None, 405, "method_not_allowed"),
        (
            "POST",
            "/v1/route",
            [b"{}"],
            [(b"content-type", b"text/plain")],
            415,
            "unsupported_media_type",
        ),
        ("POST", "/v1/route", [b"{not json"], None, 400, "invalid_json"),
    ]
    for method, path, chunks, headers, status, code in cases:
        got, sent_headers, body = _call(app, method, path, chunks, headers)
        assert (got, body["error"]["code"], body["error"]["status"]) == (status, code, status)
    _, sent_headers, _ = _call(app, "GET", "/v1/route", [b""])
    assert sent_headers[b"allow"] == b"POST"


def test_a_client_gone_before_its_body_ended_is_told_so(app: Any) -> None:
    status, _, body = _call(app, "POST", "/v1/route", [b'{"mess', b""], disconnect=True)
    assert (status, body["error"]["code"]) == (400, "disconnected")


def test_probes_answer(app: Any) -> None:
    assert _call(app, "GET", "/healthz", [b""])[2] == {"status": "ok"}
    status, _, ready = _call(app, "GET", "/readyz", [b""])
    assert status == 200 and ready["ready"] is True


def test_a_pack_in_service_is_frozen_and_the_one_it_replaced_is_freed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full collection never walks the pack in service (its objects are frozen), and the
    pack a swap replaced is freed, not kept alive by the freeze."""
    path = tmp_path / "pack.json"
    path.write_bytes(PACK.read_bytes())
    config = ServeConfig(pack_file=str(path), watch_interval=0.05)
    monkeypatch.setenv(ENV_CONFIG, config.to_env())
    gc.unfreeze()
    server = create_app()
    run_on_own_loop(lambda: _lifespan(server, "startup"))
    try:
        wait_until(lambda: server.holder.state is not None, "a pack in service")
        # The freeze follows each swap on the watcher thread.
        wait_until(lambda: _frozen(server.holder.state.router), "the pack frozen after the load")
        first = weakref.ref(server.holder.state.router)
        replace_file(path, (CONFORMANCE / "packs" / "tiny.json").read_bytes())
        wait_until(lambda: server.holder.state.revision == 2, "the swap")
        wait_until(lambda: _frozen(server.holder.state.router), "the new pack frozen")
        wait_until(lambda: first() is None, "the replaced pack freed")
    finally:
        run_on_own_loop(lambda: _lifespan(server, "shutdown"))
        gc.unfreeze()


def _frozen(tracked: object) -> bool:
    """Whether the collector has set this tracked object aside (`gc.get_objects` lists the
    objects of every generation a collection walks, never the frozen ones)."""
    assert gc.is_tracked(tracked)
    return not any(found is tracked for found in gc.get_objects())
