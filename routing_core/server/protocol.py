"""uvicorn's HTTP protocol with a response's writes joined into one (docs/decisions.md, "The
route server").

uvicorn writes a response's head and its body to the socket in two calls, so every answer
costs two system calls and leaves in two TCP segments. On loopback the sender's system call
also carries the receiver's side of TCP, and the send was a quarter of a worker's CPU under
load. Here the writes an answer makes in one turn of the event loop are held and written
together at the end of that turn: one call, one segment (what aiohttp does for small
responses). Nothing waits longer than the loop's turn in which it was written, and the
writes keep their order.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class JoinedWrites:
    """A transport whose writes in one turn of the event loop reach the socket as one write.

    Every other operation is the wrapped transport's. Closing writes what is held first;
    aborting drops it, as aborting drops what the transport buffers.
    """

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] | None = None

    def write(self, data: bytes) -> None:
        if self._held is None:
            self._held = [data]
            self._loop.call_soon(self.flush)
        else:
            self._held.append(data)

    def flush(self) -> None:
        """Write what is held, as one write (a closed transport drops it, as it would have)."""
        held, self._held = self._held, None
        if held and not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        held = sum(map(len, self._held)) if self._held else 0
        return held + self._transport.get_write_buffer_size()

    def __getattr__(self, name: str) -> Any:
        # Only for what this class does not define: reading, flow control, extra info.
        return getattr(self._transport, name)


class JoinedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol on a transport that joins an answer's writes."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        joined: Any = JoinedWrites(transport, self.loop)
        super().connection_made(joined)
