"""One bounded HTTP request for the studio: a whole-request deadline, redirects only within the origin.

Both directions an agent talks to the studio in go through here: pack pulls (`PackFetcher`'s GET)
and decision events (`EventReporter`'s POST), so the token they carry obeys the same rules.

urllib's `timeout` bounds each socket operation, not the request, so a server that drips a byte
at a time holds a caller for as long as it likes; and urllib follows a redirect to any host
with every header, the agent's bearer token included. Here a timer cuts the connection at the
deadline (headers and body alike), and redirects are followed by hand, only to the URL's own
origin (scheme, host and port: so never from https down to http), at most `MAX_REDIRECTS` times.
A request with a body follows only 307 and 308 (which repeat it whole): a 301, 302 or 303 would
turn it into a GET without its body, which delivers nothing, so it is a failure.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.message import Message
from typing import Any
from urllib.parse import urljoin, urlsplit

MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class FetchError(Exception):
    """The GET did not give a usable answer; the message says why, for a person."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A final (non-redirect) answer: its status, headers and body (at most `limit` + 1 bytes)."""

    status: int
    headers: Message[str, str]
    body: bytes


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port filled in."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


def get(url: str, headers: Mapping[str, str], *, timeout: float, limit: int) -> Answer:
    """GET `url`, following same-origin redirects, all within `timeout` seconds.

    Raises:
        FetchError: no answer in time, a redirect to another origin, too many redirects, or
            the network failed.
    """
    return request(url, headers, timeout=timeout, limit=limit)


def request(
    url: str,
    headers: Mapping[str, str],
    *,
    timeout: float,
    limit: int,
    method: str = "GET",
    body: bytes | None = None,
) -> Answer:
    """Send `method` (with `body`) to `url` under the module's rules, all within `timeout` seconds.

    Raises:
        FetchError: no answer in time, a redirect to another origin (or one that would drop
            the body), too many redirects, or the network failed.
    """
    deadline = _Deadline(timeout)
    sent = _Request(method, dict(headers), body)
    try:
        return _follow(url, sent, deadline, limit)
    finally:
        deadline.cancel()


@dataclass(frozen=True, slots=True)
class _Request:
    method: str
    headers: dict[str, str]
    body: bytes | None


def _follow(url: str, sent: _Request, deadline: _Deadline, limit: int) -> Answer:
    home, current = origin(url), url
    for _ in range(MAX_REDIRECTS + 1):
        answer = _once(current, sent, deadline, limit)
        if answer.status not in _REDIRECTS:
            return answer
        target = urljoin(current, answer.headers.get("Location", ""))
        if origin(target) != home:
            raise FetchError(
                f"redirected to another site ({_site(target)}); not followed, "
                "the token goes only to the configured address"
            )
        if sent.body is not None and answer.status not in (307, 308):
            raise FetchError(
                f"redirected with {answer.status}, which would drop the request's body; "
                "not followed"
            )
        current = target
    raise FetchError(f"more than {MAX_REDIRECTS} redirects")


def _site(url: str) -> str:
    scheme, host, port = origin(url)
    return f"{scheme}://{host}:{port}" if host else "an address without a host"


def _once(url: str, sent: _Request, deadline: _Deadline, limit: int) -> Answer:
    opener = urllib.request.build_opener(
        _NoRedirects(), _HTTPHandler(deadline), _HTTPSHandler(deadline)
    )
    try:
        prepared = urllib.request.Request(
            url, data=sent.body, headers=sent.headers, method=sent.method
        )
        answer = _open(opener, prepared, deadline, limit)
    except (OSError, ValueError, http.client.HTTPException) as exc:
        if not deadline.expired:
            raise FetchError(f"cannot reach the studio: {exc}") from None
    if deadline.expired:  # a cut connection can also look like a short, complete body
        raise FetchError(f"no complete answer within {deadline.seconds:g} s")
    return answer


def _open(
    opener: urllib.request.OpenerDirector,
    request: urllib.request.Request,
    deadline: _Deadline,
    limit: int,
) -> Answer:
    try:
        with opener.open(request, timeout=deadline.remaining()) as response:
            return Answer(response.status, response.headers, response.read(limit + 1))
    except urllib.error.HTTPError as exc:  # 3xx (not followed) and 4xx/5xx
        with exc:
            return Answer(exc.code, exc.headers, b"")


class _Deadline:
    """Shuts down every connection it made once `seconds` have passed."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._at = time.monotonic() + seconds
        self._sockets: list[socket.socket] = []
        self._cut_done = False
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True
        self._timer.start()

    @property
    def expired(self) -> bool:
        """The deadline has passed (the cut may not have run yet: a socket timeout can win)."""
        return self._cut_done or time.monotonic() >= self._at

    def remaining(self) -> float:
        return max(0.001, self._at - time.monotonic())

    def cancel(self) -> None:
        self._timer.cancel()

    def connection(
        self, cls: type[http.client.HTTPConnection]
    ) -> Callable[..., http.client.HTTPConnection]:
        def make(host: str, **kwargs: Any) -> http.client.HTTPConnection:
            connection = cls(host, **kwargs)
            connect = connection.connect

            def connect_watched() -> None:
                connect()
                # Kept here: urllib drops the connection's reference once headers are in,
                # while the body is still read from the same socket.
                self._sockets.append(connection.sock)

            connection.connect = connect_watched  # type: ignore[method-assign]
            return connection

        return make

    def _cut(self) -> None:
        self._cut_done = True
        for sock in self._sockets:
            with contextlib.suppress(OSError):  # already closed: nothing to wake
                sock.shutdown(socket.SHUT_RDWR)  # wakes a read blocked in another thread


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Hand every redirect back as an HTTPError: `_follow` decides where to go."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._deadline.connection(http.client.HTTPConnection), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        factory = self._deadline.connection(http.client.HTTPSConnection)
        return self.do_open(factory, req, context=self._context)  # type: ignore[attr-defined]
