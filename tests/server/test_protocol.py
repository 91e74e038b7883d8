"""An answer's writes joined into one (`routing_core/server/protocol.py`): on real sockets,
and through `routing-core serve` as a real process."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

from routing_core.server.protocol import JoinedWrites
from tests.server.serving import CONFORMANCE, run_on_own_loop, serve


class _Peer(asyncio.Protocol):
    """The far end of a socket pair: what it received, and whether the stream ended."""

    def __init__(self) -> None:
        self.data = b""
        self.ended = asyncio.Event()

    def data_received(self, data: bytes) -> None:
        self.data += data

    def eof_received(self) -> None:
        self.ended.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended.set()


async def _pair() -> tuple[JoinedWrites, list[bytes], _Peer]:
    """A real transport wrapped in `JoinedWrites`, the writes that reached it, and its peer."""
    loop = asyncio.get_running_loop()
    near, far = socket.socketpair()
    transport, _ = await loop.connect_accepted_socket(asyncio.Protocol, near)
    _, peer = await loop.connect_accepted_socket(_Peer, far)
    written: list[bytes] = []
    write = transport.write

    def counted(data: bytes | bytearray | memoryview) -> None:  # the real write, counted
        written.append(bytes(data))
        write(data)

    transport.write = counted  # type: ignore[method-assign]
    return JoinedWrites(transport, loop), written, peer


async def _turn() -> None:
    """Let the event loop finish the turn it is in (the held writes go at its end)."""
    await asyncio.sleep(0)
    await asyncio.sleep(0)


def test_writes_in_one_turn_reach_the_socket_as_one_write_in_order() -> None:
    async def run() -> None:
        joined, written, peer = await _pair()
        joined.write(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n")
        joined.write(b"hello")
        assert written == []  # held until the turn ends
        assert joined.get_write_buffer_size() == 43
        await _turn()
        assert written == [b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello"]
        joined.write(b"next")  # a later turn: a write of its own, not held past its turn
        await _turn()
        assert written[1:] == [b"next"]
        joined.close()
        await asyncio.wait_for(peer.ended.wait(), 5)
        assert peer.data == b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhellonext"

    run_on_own_loop(run)


def test_closing_writes_what_is_held_first_and_aborting_drops_it() -> None:
    async def run() -> None:
        joined, written, peer = await _pair()
        joined.write(b"the whole answer")
        joined.close()  # in the same turn as the write
        await asyncio.wait_for(peer.ended.wait(), 5)
        assert peer.data == b"the whole answer" and written == [b"the whole answer"]
        await _turn()  # the scheduled flush finds nothing more to write
        assert written == [b"the whole answer"]

        joined, written, peer = await _pair()
        joined.write(b"never sent")
        joined.abort()
        await asyncio.wait_for(peer.ended.wait(), 5)
        await _turn()
        assert peer.data == b"" and written == []

    run_on_own_loop(run)


def test_everything_else_is_the_wrapped_transports() -> None:
    async def run() -> None:
        joined, _, _ = await _pair()
        assert joined.get_extra_info("socket") is not None
        assert joined.is_closing() is False
        joined.pause_reading()
        assert joined.is_reading() is False
        joined.close()
        assert joined.is_closing() is True

    run_on_own_loop(run)


def test_pipelined_requests_are_answered_whole_and_in_order(tmp_path: Path) -> None:
    """Two requests in one write on one connection, then one asking to close: three whole
    answers in order, then the end of the stream (the last answer written before the close)."""
    pack_file = tmp_path / "pack.json"
    pack_file.write_bytes((CONFORMANCE / "packs" / "support.json").read_bytes())
    messages = ["where is my parcel", "why was I charged twice?", "I want a refund"]
    with serve(tmp_path, "--pack", str(pack_file)) as server:
        expected = [server.route(m)["route"] for m in messages]
        host, port = server.url.removeprefix("http://").split(":")
        requests = b""
        for i, message in enumerate(messages):
            body = json.dumps({"message": message}).encode()
            close = b"connection: close\r\n" if i == len(messages) - 1 else b""
            requests += (
                b"POST /v1/route HTTP/1.1\r\nhost: %s\r\ncontent-type: application/json\r\n"
                b"%scontent-length: %d\r\n\r\n%s" % (host.encode(), close, len(body), body)
            )
        with socket.create_connection((host, int(port)), timeout=30) as connection:
            connection.sendall(requests)
            received = b""
            while chunk := connection.recv(65536):  # until the server closes
                received += chunk
    routes = []
    while received:
        head, _, rest = received.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 ")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        routes.append(json.loads(rest[:length])["route"])
        received = rest[length:]
    assert routes == expected
