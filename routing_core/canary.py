"""Canary rollouts: a candidate pack serves a share of conversations, chosen by a stable hash.

Every runtime must put a conversation in the same bucket, so the function is specified
(docs/pack-format.md, Conversation buckets) and pinned by the conformance suite
(`conformance/buckets.json`). A conversation stays on the side its first turn was given while
both packs serve, whatever happens to the share meanwhile.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any, Literal

from routing_core.decision import Decision
from routing_core.policy import Policy
from routing_core.router import Router

__all__ = ["BUCKETS", "CanaryRouter", "Side", "bucket", "on_candidate"]

BUCKETS = 100
Side = Literal["live", "candidate"]


def bucket(conversation: str) -> int:
    """The conversation's bucket, 0 … 99: SHA-256 of its UTF-8 bytes, the first 8 bytes read as
    a big-endian unsigned integer, mod 10,000, integer-divided by 100.

    An unpaired surrogate (which UTF-8 cannot encode) counts as U+FFFD, as a browser's
    `TextEncoder` writes it, so that every runtime hashes the same bytes.
    """
    try:
        data = conversation.encode("utf-8")
    except UnicodeEncodeError:
        data = _well_formed(conversation).encode("utf-8")
    n = int.from_bytes(hashlib.sha256(data).digest()[:8], "big")
    return (n % 10_000) // 100


def _well_formed(text: str) -> str:
    # Surrogate pairs held as two code points (from JSON escapes) join; lone ones become U+FFFD.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def on_candidate(conversation: str, share: int) -> bool:
    """Whether a new conversation goes to the candidate at `share` percent (0 … 100)."""
    return bucket(conversation) < share


class CanaryRouter:
    """Routes each conversation on the live pack or on the candidate, and keeps it there.

    Args:
        live: the pack in production.
        candidate: the pack under rollout, or None (every conversation on live).
        share: the percentage of new conversations the candidate takes (0 … 100).
        remember: how many conversations' sides are kept (least recently used go first); a
            forgotten conversation is placed again by its bucket and the share in force.
    """

    def __init__(
        self,
        live: Router,
        candidate: Router | None = None,
        share: int = 0,
        *,
        remember: int = 100_000,
    ) -> None:
        self.live = live
        self._candidate: Router | None = None
        self._share = 0
        self._sides: OrderedDict[str, Side] = OrderedDict()
        self._remember = remember
        self._lock = threading.Lock()
        self.set_candidate(candidate, share)

    @property
    def share(self) -> int:
        return self._share

    @property
    def candidate(self) -> Router | None:
        return self._candidate

    def set_candidate(self, candidate: Router | None, share: int) -> None:
        """Change the rollout. A new share applies to new conversations only; withdrawing the
        candidate (None) sends its conversations back to live at their next turn.

        Raises:
            ValueError: a share outside 0 … 100.
        """
        if not 0 <= share <= 100:
            raise ValueError("a canary share is a percentage, 0 to 100")
        with self._lock:
            if candidate is None:
                self._sides.clear()
            self._candidate, self._share = candidate, share

    def side(self, conversation: str | None) -> Side:
        """The side this conversation is on (a turn without a conversation id: live)."""
        if conversation is None or self._candidate is None:
            return "live"
        with self._lock:
            side = self._sides.get(conversation)
            if side is None:
                side = "candidate" if on_candidate(conversation, self._share) else "live"
                self._sides[conversation] = side
                if len(self._sides) > self._remember:
                    self._sides.popitem(last=False)
            else:
                self._sides.move_to_end(conversation)
        return side

    def route(
        self,
        message: Any,
        incumbent: str | None = None,
        *,
        conversation: str | None = None,
        policy: Policy | None = None,
    ) -> tuple[Side, Decision]:
        """Route on the conversation's side; returns the side with the decision."""
        side = self.side(conversation)
        candidate = self._candidate
        router = candidate if side == "candidate" and candidate is not None else self.live
        return side, router.route(message, incumbent, policy=policy)
