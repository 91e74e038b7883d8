"""Rollouts on the agent's side: which pack serves a conversation, and what a shadow turn reports.

An environment can carry a candidate version beside its live one (docs/pack-format.md,
"Rollouts over HTTP"). The studio names it in the pull's `Routing-Rollout` header; the agent fetches the
candidate from the environment's `/candidate` URL and then, turn by turn:

- **canary**: a conversation whose bucket (docs/pack-format.md, "Conversation buckets") is
  below the share is served by the candidate, the others by the live pack;
- **shadow**: every turn is served by the live pack and the candidate is scored too; the
  record the agent reports carries the candidate's route and verdict beside the live one's.

A conversation keeps the pack it started on for as long as that pack is still live or
candidate: a rollout that starts, or a share that changes, never moves a conversation mid-way
(`routing_core.canary.CanaryRouter` keeps sides within one rollout; here the pin is the pack's
checksum, so it holds across pulls and across the start of a rollout too).
A halt (the candidate is gone) and a promotion (the live pack is replaced) do move it, to the
live pack: that is what they are for.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Literal

from routing_core.canary import on_candidate
from routing_core.decision import Decision
from routing_core.policy import Policy
from routing_core.router import Router

log = logging.getLogger("routing_core.rollout")

ROLLOUT_HEADER = "Routing-Rollout"
CANDIDATE_PATH = "/candidate"
MAX_PINNED = 100_000  # conversations remembered per agent; the oldest are forgotten first

Arm = Literal["live", "candidate"]
Mode = Literal["shadow", "canary"]


@dataclass(frozen=True, slots=True)
class Rollout:
    """What the studio says about an environment's candidate, from the `Routing-Rollout` header."""

    id: int
    mode: Mode
    share: int  # percent of conversations the candidate serves (canary); 0 in shadow
    version: int | None
    checksum: str

    def header(self) -> str:
        """The header's value, as the studio writes it."""
        version = "" if self.version is None else f"; version={self.version}"
        return (
            f"id={self.id}; mode={self.mode}; share={self.share}{version}; checksum={self.checksum}"
        )


def parse_rollout(value: str | None) -> Rollout | None:
    """The rollout a `Routing-Rollout` header names; None when absent or not understood.

    A header this agent cannot read is treated as no rollout: the live pack serves everything,
    which is always a safe way to run.
    """
    if not value:
        return None
    fields = dict(_pair(part) for part in value.split(";") if "=" in part)
    try:
        mode = fields["mode"]
        share = int(fields.get("share", "0"))
        version = int(fields["version"]) if "version" in fields else None
        rollout = Rollout(int(fields["id"]), mode, share, version, fields["checksum"])  # type: ignore[arg-type]
    except (KeyError, ValueError):
        return None
    if mode not in ("shadow", "canary") or not 0 <= share <= 100 or not rollout.checksum:
        return None
    return rollout


def _pair(part: str) -> tuple[str, str]:
    key, _, value = part.partition("=")
    return key.strip().lower(), value.strip().strip('"')


@dataclass(frozen=True, slots=True)
class Serving:
    """The routers in service: the live one and, during a rollout, the candidate's."""

    live: Router
    live_checksum: str  # computed once: a pack's checksum hashes its canonical JSON
    rollout: Rollout | None = None
    candidate: Router | None = None

    @classmethod
    def of(
        cls, live: Router, rollout: Rollout | None = None, candidate: Router | None = None
    ) -> Serving:
        """Serving `live`, with the candidate when there is a rollout (both or neither)."""
        if rollout is None or candidate is None:
            rollout, candidate = None, None
        return cls(live, live.pack.checksum, rollout, candidate)

    def arm_for(self, pinned: str | None, conversation: str | None) -> Arm:
        """The arm for a conversation pinned to the pack `pinned` (a checksum), or new."""
        if self.rollout is None or self.candidate is None:
            return "live"
        if pinned == self.live_checksum:
            return "live"
        if pinned == self.rollout.checksum:
            return "candidate"
        is_canary = self.rollout.mode == "canary" and conversation is not None
        if is_canary and on_candidate(conversation or "", self.rollout.share):
            return "candidate"
        return "live"

    def checksum_of(self, arm: Arm) -> str:
        return self.rollout.checksum if arm == "candidate" and self.rollout else self.live_checksum


class Pins:
    """Conversation id → the checksum of the pack it started on; bounded, thread-safe."""

    def __init__(self, limit: int = MAX_PINNED) -> None:
        self._limit = limit
        self._pins: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def arm(self, serving: Serving, conversation: str | None) -> Arm:
        """The conversation's arm under `serving`, remembered for its next turns."""
        if conversation is None:
            return serving.arm_for(None, None)
        with self._lock:
            arm = serving.arm_for(self._pins.get(conversation), conversation)
            self._pins[conversation] = serving.checksum_of(arm)
            self._pins.move_to_end(conversation)
            if len(self._pins) > self._limit:
                self._pins.popitem(last=False)
        return arm


def serve_turn(
    serving: Serving,
    pins: Pins,
    message: Any,
    incumbent: str | None,
    conversation: str | None,
    policy: Policy | None = None,
    *,
    shadow: bool = True,
) -> tuple[Arm, Decision, Decision | None]:
    """Decide one turn under `serving`: (the arm that served it, its decision, and in shadow
    the candidate's decision on the same turn, when `shadow` asks for it and it did not fail).

    The one place `RemoteRouter` and `routing-core serve` choose a pack for a turn.
    """
    arm = pins.arm(serving, conversation)
    router = serving.candidate if arm == "candidate" and serving.candidate else serving.live
    decision = router.route(message, incumbent, policy=policy)
    shadowed = None
    rollout, candidate = serving.rollout, serving.candidate
    if shadow and rollout is not None and candidate is not None and rollout.mode == "shadow":
        try:
            shadowed = candidate.route(message, incumbent, policy=policy)
        except Exception as exc:  # noqa: BLE001 - the candidate must never fail a live turn
            log.warning("shadow candidate failed on a turn: %s", exc)
    return arm, decision, shadowed


def rollout_record(
    serving: Serving, arm: Arm, shadow: Decision | None = None
) -> dict[str, Any] | None:
    """The `rollout` key of the agent's event record (docs/event-schema.md); None outside one."""
    rollout = serving.rollout
    if rollout is None or serving.candidate is None:
        return None
    record: dict[str, Any] = {
        "id": rollout.id,
        "mode": rollout.mode,
        "arm": arm,
        "live_version": serving.live.pack.version,
        "candidate_version": serving.candidate.pack.version,
        "shadow": None,
    }
    if shadow is not None:
        record["shadow"] = {"route": shadow.route, "verdict": shadow.verdict}
    return record
