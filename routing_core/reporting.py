"""Decision events back to the studio: batched, redacted, from a bounded queue that never blocks.

An agent's turn must never wait for, or fail because of, reporting. `EventReporter.report()`
only puts a record on a bounded queue (a full queue drops it and counts it); one daemon thread
takes batches off the queue and POSTs them. A studio that is down or slow costs that thread
time, never a turn. Messages are redacted (`routing_core.redaction`) before they are queued,
and the evidence that quotes them keeps no more of them than the redacted message does.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from routing_core import _http
from routing_core.decision import Decision
from routing_core.redaction import redact, scrub_evidence
from routing_core.version import user_agent

log = logging.getLogger("routing_core.reporting")

MAX_BATCH = 500  # the studio refuses larger batches
# The studio refuses bodies over ~5 MB, and an event ranks every route (a 150-route pack's is
# ~10 KB): a batch is split so that each POST stays under this many bytes.
MAX_BODY_BYTES = 1_000_000
MAX_MESSAGE_CHARS = 4000  # the studio keeps no more of a message
# Marks a conversation id that was replaced by its keyed hash (docs/event-schema.md).
CONVERSATION_HASH_PREFIX = "h:"
# The hash is written in letters a–p, never digits: no redaction pass (the studio's on ingest
# too) can take a digit run out of it and break the grouping.
_HEX_AS_LETTERS = str.maketrans("0123456789abcdef", "abcdefghijklmnop")


@dataclass(frozen=True, slots=True)
class ReporterStats:
    """What the reporter did so far: a snapshot, safe to read from any thread."""

    queued: int
    sent: int
    dropped: int
    failed: int
    last_error: str | None


class EventReporter:
    """Send `decision.to_event()` records to `POST /api/profiles/<slug>/events`.

    Args:
        url: e.g. `https://studio/api/profiles/support/events`.
        token: a token with the write-events scope (`Authorization: Bearer …`).
        batch_size: records per POST (at most 500).
        flush_every: seconds a partial batch waits before it is sent.
        max_queue: records held while the studio is slow; beyond it new records are dropped.
        timeout: seconds for one POST, redirects and a slow answer included.
        redactor: applied to every message before it is queued; `None` sends no message text.
    """

    def __init__(
        self,
        url: str,
        *,
        token: str,
        batch_size: int = 100,
        flush_every: float = 1.0,
        max_queue: int = 10_000,
        timeout: float = 5.0,
        redactor: Callable[[str], str] | None = redact,
    ) -> None:
        self.url = url
        self.batch_size = max(1, min(batch_size, MAX_BATCH))
        self.flush_every = flush_every
        self.timeout = timeout
        self._token = token
        self._redactor = redactor
        self._queue: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=max_queue)
        self._lock = threading.Lock()
        self._counts = {"sent": 0, "dropped": 0, "failed": 0}
        self._last_error: str | None = None
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def stats(self) -> ReporterStats:
        """Counts so far: queued now, sent, dropped (queue full) and failed (the POST failed)."""
        with self._lock:
            return ReporterStats(
                queued=self._queue.qsize(), last_error=self._last_error, **self._counts
            )

    def report(
        self,
        decision: Decision,
        message: str | None = None,
        *,
        conversation: str | None = None,
        turn: int | None = None,
        rollout: dict[str, Any] | None = None,
    ) -> bool:
        """Queue one turn's record; never blocks, never raises. Returns False when it was dropped.

        Args:
            rollout: during a rollout, which pack served the turn and, in shadow, the
                candidate's route and verdict (`routing_core.rollout.rollout_record`).
        """
        try:
            record = self._record(decision, message, conversation, turn)
            if rollout is not None:  # absent outside a rollout: a studio without them accepts it
                record["rollout"] = rollout
            self._ensure_thread()
            self._queue.put_nowait(record)
        except queue.Full:
            self._count("dropped")
            return False
        except Exception as exc:  # noqa: BLE001 - reporting must never fail a turn
            log.warning("decision event not reported: %s", exc)
            self._count("dropped")
            return False
        return True

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every queued record was sent or failed; True when the queue drained in time."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._queue.unfinished_tasks == 0:  # taken records count until settled
                return True
            time.sleep(0.01)
        return False

    def close(self, timeout: float = 5.0) -> None:
        """Send what is queued (within `timeout`) and stop the thread."""
        self.flush(timeout)
        self._closed.set()

    def _record(
        self, decision: Decision, message: str | None, conversation: str | None, turn: int | None
    ) -> dict[str, Any]:
        text = None
        if message is not None and self._redactor is not None:
            raw = message if isinstance(message, str) else str(message)
            text = self._redactor(raw[:MAX_MESSAGE_CHARS])
        return {
            "at": datetime.now(UTC).isoformat(),
            "conversation": self._conversation_id(conversation),
            "turn": turn,
            "message": text,
            # Its evidence quotes the message: no more of it than the message keeps.
            "event": scrub_evidence(decision.to_event(), text),
        }

    def _conversation_id(self, conversation: str | None) -> str | None:
        """The id as sent, or a keyed hash of it when it holds what redaction takes out.

        Agents often key conversations by the user's e-mail address or phone number. Such an
        id is replaced by an HMAC keyed with the reporter's token: the same id always gives the
        same hash, so the studio still groups a conversation's turns (from every process that
        reports with the token), while whoever reads the stored events, the studio included
        (which keeps only a hash of the token), cannot recover or test guesses of the address.
        """
        if conversation is None:
            return None
        text = conversation if isinstance(conversation, str) else str(conversation)
        if redact(text) == text:
            return text
        digest = hmac.new(self._token.encode(), text.encode(), hashlib.sha256).hexdigest()
        return CONVERSATION_HASH_PREFIX + digest[:32].translate(_HEX_AS_LETTERS)

    def _ensure_thread(self) -> None:
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, daemon=True, name="routing-core-reporter"
                    )
                    self._thread.start()

    def _run(self) -> None:
        while not self._closed.is_set():
            batch = self._take_batch()
            if batch:
                self._send(batch)

    def _take_batch(self) -> list[dict[str, Any]]:
        """Up to `batch_size` records, waiting at most `flush_every` for the batch to fill."""
        batch: list[dict[str, Any]] = []
        deadline = time.monotonic() + self.flush_every
        while len(batch) < self.batch_size:
            wait = deadline - time.monotonic()
            try:
                record = self._queue.get(timeout=max(wait, 0.001)) if wait > 0 else None
            except queue.Empty:
                record = None
            if record is None:
                break
            batch.append(record)
        return batch

    def _send(self, batch: list[dict[str, Any]]) -> None:
        for body, n in _bodies(batch, self.stats.dropped):
            self._post(body, n)

    def _post(self, body: bytes, n: int) -> None:
        """POST one body under `PackFetcher`'s transport rules (`routing_core._http`).

        The token goes only to the configured origin: a redirect elsewhere is a failure, so
        events are counted as sent only when the studio itself accepted them (a 2xx).
        """
        try:
            answer = _http.request(
                self.url,
                self._headers(),
                method="POST",
                body=body,
                timeout=self.timeout,
                limit=64 * 1024,  # the studio's answer is a short JSON summary
            )
        except _http.FetchError as exc:
            self._settle(n, "failed", str(exc))
            return
        if 200 <= answer.status < 300:
            self._settle(n, "sent", None)
        else:
            self._settle(n, "failed", f"HTTP {answer.status} from the studio")

    def _headers(self) -> dict[str, str]:
        return {
            "Content-Type": "application/json",
            "Authorization": f"Bearer {self._token}",
            "User-Agent": user_agent(),
        }

    def _settle(self, n: int, outcome: str, error: str | None) -> None:
        with self._lock:
            self._counts[outcome] += n
            if error is not None:
                self._last_error = error
        for _ in range(n):
            self._queue.task_done()
        if error is not None:
            log.warning("%d decision events not delivered: %s", n, error)

    def _count(self, outcome: str) -> None:
        with self._lock:
            self._counts[outcome] += 1


def _bodies(batch: list[dict[str, Any]], dropped: int = 0) -> list[tuple[bytes, int]]:
    """The batch as POST bodies of at most MAX_BODY_BYTES (one record each at the least).

    Each body also carries `dropped`, the records this reporter dropped so far, so that the
    studio can show that an agent's queue overflowed.
    """
    encoded = [json.dumps(r, allow_nan=False).encode() for r in batch]
    bodies: list[tuple[bytes, int]] = []
    start, size = 0, 0
    for i, one in enumerate(encoded):
        if i > start and size + len(one) > MAX_BODY_BYTES:
            bodies.append((_body(encoded[start:i], dropped), i - start))
            start, size = i, 0
        size += len(one) + 1
    if start < len(encoded):
        bodies.append((_body(encoded[start:], dropped), len(encoded) - start))
    return bodies


def _body(records: list[bytes], dropped: int) -> bytes:
    return b'{"dropped": %d, "events": [' % dropped + b",".join(records) + b"]}"
