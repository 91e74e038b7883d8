"""Packs from the studio: pull over HTTP with ETag caching, swap routers without a pause.

An agent keeps routing on the last good pack whatever happens upstream: an unreachable
studio, a timeout, a 500, a corrupted or invalid pack are logged and reported, never raised.
"""

from __future__ import annotations

import logging
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from routing_core import _http
from routing_core.codec import load_pack
from routing_core.decision import Decision
from routing_core.errors import PackError
from routing_core.fleet_status import STATUS_HEADER, AgentStatus

# The most a pack document may take: above the most any pack within the limits takes.
from routing_core.limits import MAX_PACK_BYTES as MAX_PACK_BYTES
from routing_core.pack import Pack
from routing_core.policy import Policy
from routing_core.reporting import EventReporter
from routing_core.rollout import (
    CANDIDATE_PATH,
    ROLLOUT_HEADER,
    Pins,
    Rollout,
    Serving,
    parse_rollout,
    rollout_record,
    serve_turn,
)
from routing_core.router import Router
from routing_core.signing import SIGNATURE_HEADER, PublicKeys, SignatureError
from routing_core.version import user_agent

log = logging.getLogger("routing_core.remote")


class LiveRouter:
    """A Router that can be replaced while other threads route on it.

    Each `route()` reads the current router once, so a turn is decided wholly by the old
    pack or wholly by the new one, never a mix.
    """

    def __init__(self, router: Router) -> None:
        self._router = router
        self._lock = threading.Lock()

    @property
    def current(self) -> Router:
        """The router in service now."""
        return self._router

    def swap(self, pack: Pack | Router) -> Router:
        """Compile `pack` (outside the lock) and put it in service; returns the old router."""
        new = pack if isinstance(pack, Router) else Router(pack)
        with self._lock:
            old, self._router = self._router, new
        return old

    def route(
        self, message: Any, incumbent: str | None = None, *, policy: Policy | None = None
    ) -> Decision:
        """Route on the router in service now (see `Router.route`)."""
        return self._router.route(message, incumbent, policy=policy)


@dataclass(frozen=True, slots=True)
class FetchResult:
    """What one pull did: a new pack, no change (304), or a failure kept away from the agent."""

    status: Literal["updated", "unchanged", "failed"]
    pack: Pack | None = None
    error: str | None = None
    # Fields of a newer format minor this reader left out (`load_pack`'s `ignored`).
    ignored: tuple[str, ...] = ()
    # The key that signed the pack, when the fetcher verifies (None: not verified).
    key_id: str | None = None
    # The environment's rollout and its candidate pack (both or neither; docs/pack-format.md).
    rollout: Rollout | None = None
    candidate: Pack | None = None
    # A pull that failed only for the rollout's candidate (a rollout halted between the two
    # requests, say): the live pack it got, good and verified, for an agent that has no pack
    # yet. One that has keeps what it serves; `key_id` and `ignored` are this pack's.
    fallback: Pack | None = None


class _Refused(Exception):
    """A pack answer this fetcher will not use; the message says why, for a person."""


class PackFetcher:
    """Conditional GETs of one pack URL: `If-None-Match` with the last ETag, a timeout.

    Args:
        url: e.g. `https://studio/api/profiles/support/packs/production`.
        token: the profile's read token, sent as `Authorization: Bearer …`.
        timeout: seconds for the whole request, redirects and a slow body included.
        keys: public keys that turn verification on (docs/pack-format.md, Signed packs): a
            pack whose signature is missing, unknown or bad is then refused like an invalid one.
    """

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        timeout: float = 5.0,
        keys: PublicKeys | None = None,
    ) -> None:
        self.url = url
        self.timeout = timeout
        self.keys = keys
        self._token = token
        self.etag: str | None = None
        self._held: tuple[str, Pack] | None = None  # the candidate last pulled, by checksum
        # Sent on every pull (`Route-Agent-Status`): what runs here and how the last pull went.
        self.status = AgentStatus()
        # The reporter's dropped-event count, when one is wired (`RemoteRouter`, the server).
        self.count_dropped: Callable[[], int] | None = None

    def fetch(self) -> FetchResult:
        """Pull once. Never raises: failures come back as `status="failed"` with the reason.

        The token goes only to the configured origin: a redirect elsewhere is a failure, not
        followed, and no pack is taken from another site. During a rollout the candidate is
        fetched too; when it cannot be had, the whole pull fails (the ETag is not kept), so
        the agent keeps what it had and the next pull tries again; the live pack comes back
        as the result's `fallback`, so that an agent with nothing yet starts on it.
        """
        try:
            answer = self._get(self.url, self.etag)
            if answer.status == 304:
                self.status.last_error = None
                return FetchResult("unchanged")
            pack, ignored, key_id = self._load(answer)
            rollout = parse_rollout(answer.headers.get(ROLLOUT_HEADER))
        except (_http.FetchError, _Refused) as exc:
            return self._failed(str(exc))
        try:
            candidate = self._candidate(rollout) if rollout is not None else None
        except (_http.FetchError, _Refused) as exc:
            failed = self._failed(str(exc))
            return replace(failed, fallback=pack, key_id=key_id, ignored=tuple(ignored))
        self.etag = answer.headers.get("ETag")
        if candidate is None:
            rollout = None
        return FetchResult(
            "updated",
            pack,
            ignored=tuple(ignored),
            key_id=key_id,
            rollout=rollout,
            candidate=candidate,
        )

    def _get(self, url: str, etag: str | None) -> _http.Answer:
        return _http.get(url, self._headers(etag), timeout=self.timeout, limit=MAX_PACK_BYTES)

    def _load(self, answer: _http.Answer) -> tuple[Pack, list[str], str | None]:
        """The pack a 200 carries, decoded, verified when keys are set, validated; with the id
        of the key that signed it (None: not verified). The candidate goes through it too.

        Raises:
            _Refused: another status, a body that does not decode, a refused signature, an
                invalid pack.
        """
        if answer.status != 200:
            raise _Refused(f"HTTP {answer.status} from the studio")
        encoding = (answer.headers.get("Content-Encoding") or "identity").lower()
        try:
            body = _decoded(answer.body, encoding)
        except ValueError as exc:
            raise _Refused(str(exc)) from None
        except (zlib.error, EOFError) as exc:
            raise _Refused(f"the compressed pack does not decode: {exc}") from None
        if len(body) > MAX_PACK_BYTES:
            raise _Refused(f"pack larger than {MAX_PACK_BYTES // 2**20} MiB refused")
        key_id = None
        if self.keys is not None:
            try:
                key_id = self.keys.verify(body, answer.headers.get(SIGNATURE_HEADER))
            except SignatureError as exc:
                raise _Refused(f"signature refused: {exc.reason}") from None
        ignored: list[str] = []
        try:
            pack = load_pack(body, ignored=ignored)
        except PackError as exc:
            raise _Refused("invalid pack: " + "; ".join(exc.lines()[:5])) from None
        return pack, ignored, key_id

    def _candidate(self, rollout: Rollout) -> Pack:
        """The rollout's candidate: the one held when its checksum is unchanged, else pulled.

        Raises:
            _Refused, _http.FetchError: it could not be had, or is not the one announced.
        """
        if self._held is not None and self._held[0] == rollout.checksum:
            return self._held[1]
        answer = self._get(_candidate_url(self.url), None)
        try:
            pack, _ignored, _key = self._load(answer)
        except _Refused as exc:
            raise _Refused(f"candidate pack: {exc}") from None
        if pack.checksum != rollout.checksum:
            raise _Refused("candidate pack: not the one the rollout names (it changed meanwhile)")
        self._held = (rollout.checksum, pack)
        return pack

    def _headers(self, etag: str | None) -> dict[str, str]:
        # gzip: a CLINC-size pack is ~10x smaller on the wire, decoded with the standard library.
        # The studio records the agent's routing_core version from the User-Agent (Agents page).
        headers = {
            "Accept": "application/json",
            "Accept-Encoding": "gzip",
            "User-Agent": user_agent(),
        }
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        if self.count_dropped is not None:
            self.status.events_dropped = self.count_dropped()
        headers[STATUS_HEADER] = self.status.to_header()
        if etag:
            headers["If-None-Match"] = etag
        return headers

    def _failed(self, reason: str) -> FetchResult:
        log.warning("pack pull from %s failed, keeping the last good pack: %s", self.url, reason)
        self.status.last_error = reason
        return FetchResult("failed", error=reason)

    def took(self, pack: Pack, key_id: str | None) -> None:
        """Record that `pack` went into service (the next pull reports it)."""
        self.status.running(pack.version, pack.checksum, key_id)


def _candidate_url(url: str) -> str:
    """The environment's candidate URL: its pull URL's path + `/candidate`, query kept."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + CANDIDATE_PATH))


def _decoded(body: bytes, encoding: str) -> bytes:
    """The body without its Content-Encoding; at most MAX_PACK_BYTES + 1 (a bomb is cut short).

    Raises:
        ValueError: an encoding this client did not ask for.
        zlib.error, EOFError: a body that does not decode.
    """
    if encoding in ("identity", ""):
        return body
    if encoding not in ("gzip", "x-gzip"):
        raise ValueError(f"unexpected Content-Encoding {encoding!r}")
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    out = inflater.decompress(body, MAX_PACK_BYTES + 1)
    if len(out) <= MAX_PACK_BYTES and not inflater.eof:
        raise EOFError("the gzip stream ends early")
    return out


class RemoteRouter(LiveRouter):
    """A LiveRouter fed from the studio: `refresh()` pulls and swaps when the pack changed.

    Construct it with a pack to start from (a bundled copy) or let it pull the first one;
    `refresh()` is cheap (a 304 when nothing changed) so an agent can call it every minute.
    With a `reporter`, every turn's decision is also queued for the studio (never waiting on it).
    During a rollout it serves each conversation from the live pack or the candidate
    (`routing_core.rollout`), and in shadow scores the candidate beside the live pack.
    """

    def __init__(
        self,
        fetcher: PackFetcher,
        initial: Pack | None = None,
        *,
        reporter: EventReporter | None = None,
    ) -> None:
        """Start from `initial`, or pull the first pack now.

        Raises:
            PackError: when there is no initial pack and the first pull fails: an agent
                cannot route without one, so this is the one failure it must see.
        """
        self.fetcher = fetcher
        self.reporter = reporter
        self.last_error: str | None = None
        self._pins = Pins()
        first = None
        if reporter is not None:
            fetcher.count_dropped = lambda: reporter.stats.dropped
        key_id = None
        if initial is None:
            first = fetcher.fetch()
            initial = first.pack or first.fallback  # a rollout it could not join: live alone
            if initial is None:
                raise PackError([("$", f"no pack to start from: {first.error}")])
            key_id, self.last_error = first.key_id, first.error
        super().__init__(Router(initial))
        fetcher.took(initial, key_id)
        self._serving = Serving.of(self._router)
        if first is not None and first.candidate is not None:
            self._serving = Serving.of(self._router, first.rollout, Router(first.candidate))

    @property
    def current(self) -> Router:
        """The live router in service now."""
        return self._serving.live

    @property
    def serving(self) -> Serving:
        """The live router and, during a rollout, the candidate's."""
        return self._serving

    def swap(self, pack: Pack | Router) -> Router:
        """Put a new live pack in service (any rollout goes on); returns the old live router."""
        new = pack if isinstance(pack, Router) else Router(pack)
        with self._lock:
            old = self._serving.live
            self._router = new
            self._serving = Serving.of(new, self._serving.rollout, self._serving.candidate)
        return old

    def route(
        self,
        message: Any,
        incumbent: str | None = None,
        *,
        policy: Policy | None = None,
        conversation: str | None = None,
        turn: int | None = None,
    ) -> Decision:
        """Route (see `Router.route`) and queue the decision for the studio when reporting.

        Args:
            conversation: an id that groups the turns of one conversation in the studio's review;
                during a canary it also chooses the pack (by its bucket), kept for the
                conversation's later turns.
            turn: the turn's number within the conversation.
        """
        serving = self._serving  # read once: the turn is decided wholly on one state
        arm, decision, shadow = serve_turn(
            serving,
            self._pins,
            message,
            incumbent,
            conversation,
            policy,
            shadow=self.reporter is not None,  # only a report reads the candidate's decision
        )
        if self.reporter is not None:
            self.reporter.report(
                decision,
                message,
                conversation=conversation,
                turn=turn,
                rollout=rollout_record(serving, arm, shadow),
            )
        return decision

    def refresh(self) -> FetchResult:
        """Pull once and swap in a new pack; keeps serving the old one on any failure."""
        result = self.fetcher.fetch()
        self.last_error = result.error
        if result.pack is not None:
            try:
                serving = self._compiled(result)
            except Exception as exc:  # noqa: BLE001 - a pack that fails to compile is kept out
                self.last_error = f"pack failed to compile: {exc}"
                self.fetcher.status.last_error = self.last_error
                log.warning("new pack failed to compile, keeping the old one: %s", exc)
                return FetchResult("failed", error=self.last_error)
            with self._lock:
                self._router, self._serving = serving.live, serving
            self.fetcher.took(result.pack, result.key_id)
        return result

    def _compiled(self, result: FetchResult) -> Serving:
        """The routers for a pull's packs, reusing those in service whose pack is unchanged."""
        assert result.pack is not None
        held = self._serving
        live = held.live if result.pack.checksum == held.live_checksum else Router(result.pack)
        candidate = None
        if result.candidate is not None and result.rollout is not None:
            kept = held.rollout is not None and held.rollout.checksum == result.rollout.checksum
            candidate = held.candidate if kept else None
            candidate = candidate or Router(result.candidate)
        return Serving.of(live, result.rollout, candidate)
