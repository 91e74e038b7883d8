"""Replay logged turns against a pack: which turns would change route, verdict or tools.

Pure: records in (what `EventReporter` sends and the studio stores: `message`, `event`), a
report out. Each turn is replayed on its own with the incumbent it had then (`event.from_route`),
so turns are independent and any split into partitions gives the same report: the in-process
replay and a cluster's agree exactly (tested).

A line of an events file that is not a record (not JSON, not an object, not UTF-8, nested past
what a parser takes) is a `BadLine`: skipped, counted and named by file and line (the first
`NAMED_BAD_LINES`), and the replay goes on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from routing_core.decision import Decision
from routing_core.router import Router

MENU, UNMATCHED = "(menu)", "(unmatched)"
NAMED_BAD_LINES = 20  # a file of garbage is named by its first lines, then counted


@dataclass(frozen=True, slots=True, order=True)
class BadLine:
    """A line of an events file that holds no record: where it is and why."""

    path: str
    line: int  # 1-based
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"path": self.path, "line": self.line, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class TurnChange:
    """One turn whose outcome differs on the new pack."""

    message: str
    incumbent: str | None
    old: str  # a route name, (menu) or (unmatched)
    new: str
    old_verdict: str
    new_verdict: str
    old_tools: tuple[str, ...]
    new_tools: tuple[str, ...]
    changed: tuple[str, ...]  # which of route, verdict, tools
    # Where the turn was among the records `replay_turns` read (0-based), so that a caller
    # keeping changes elsewhere (the studio's rows) can name the record; not in `to_dict`,
    # nor in equality: a turn's change is the same whichever partition it was read in.
    record: int = field(default=-1, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "message": self.message,
            "incumbent": self.incumbent,
            "old": self.old,
            "new": self.new,
            "old_verdict": self.old_verdict,
            "new_verdict": self.new_verdict,
            "old_tools": list(self.old_tools),
            "new_tools": list(self.new_tools),
            "changed": list(self.changed),
        }


@dataclass(frozen=True, slots=True)
class PartialReplay:
    """What one partition gave: its changes and how many turns it replayed or skipped."""

    changes: tuple[TurnChange, ...]
    replayed: int
    skipped: int
    bad_lines: int = 0
    bad: tuple[BadLine, ...] = ()  # the first NAMED_BAD_LINES of them


@dataclass(frozen=True, slots=True)
class FlipGroup:
    """Every change from one outcome to another, e.g. billing → refunds."""

    old: str
    new: str
    share: float  # of the replayed turns
    changes: tuple[TurnChange, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "old": self.old,
            "new": self.new,
            "count": len(self.changes),
            "share": round(self.share, 6),
            "turns": [c.to_dict() for c in self.changes],
        }


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """The flip report: groups biggest first, and the share of replayed turns that moves."""

    replayed: int
    skipped: int
    groups: tuple[FlipGroup, ...] = field(default=())
    bad_lines: int = 0
    bad: tuple[BadLine, ...] = ()  # the first NAMED_BAD_LINES, by file and line

    @property
    def changed(self) -> int:
        return sum(len(g.changes) for g in self.groups)

    @property
    def share_changed(self) -> float:
        return self.changed / self.replayed if self.replayed else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form: what `routing-core replay --json` prints and the studio stores."""
        return {
            "replayed": self.replayed,
            "skipped": self.skipped,
            "changed": self.changed,
            "share_changed": round(self.share_changed, 6),
            "groups": [g.to_dict() for g in self.groups],
            "bad_lines": self.bad_lines,
            "bad": [b.to_dict() for b in self.bad],
        }


def outcome(route: str | None, verdict: str) -> str:
    """A turn's outcome as one label: its route, or (menu) / (unmatched) when it has none."""
    if verdict == "menu":
        return MENU
    if verdict == "unmatched":
        return UNMATCHED
    return route or UNMATCHED


def replay_turns(router: Router, records: Iterable[Mapping[str, Any] | BadLine]) -> PartialReplay:
    """Route every record's message again on `router` and keep the turns that changed.

    Records without a message (the profile keeps no text) or without an event are skipped;
    bad lines (a reader's `BadLine`s among the records) are counted and the first named.
    """
    changes: list[TurnChange] = []
    bad: list[BadLine] = []
    replayed = skipped = bad_lines = 0
    for index, record in enumerate(records):
        if isinstance(record, BadLine):
            bad_lines += 1
            if len(bad) < NAMED_BAD_LINES:
                bad.append(record)
            continue
        message, event = record.get("message"), _event(record.get("event"))
        if not isinstance(message, str) or event is None:
            skipped += 1
            continue
        replayed += 1
        change = _compare(message, event, router.route(message, event.get("from_route")), index)
        if change is not None:
            changes.append(change)
    return PartialReplay(tuple(changes), replayed, skipped, bad_lines, tuple(bad))


def summarise(parts: Iterable[PartialReplay]) -> ReplayReport:
    """Merge partitions into one report; the order of partitions does not matter."""
    parts = list(parts)
    replayed = sum(p.replayed for p in parts)
    grouped: dict[tuple[str, str], list[TurnChange]] = {}
    for change in (c for p in parts for c in p.changes):
        grouped.setdefault((change.old, change.new), []).append(change)
    groups = [
        FlipGroup(old, new, len(rows) / replayed, tuple(sorted(rows, key=_change_key)))
        for (old, new), rows in grouped.items()
    ]
    groups.sort(key=lambda g: (-len(g.changes), g.old, g.new))
    bad = tuple(sorted(b for p in parts for b in p.bad)[:NAMED_BAD_LINES])
    skipped = sum(p.skipped for p in parts)
    return ReplayReport(replayed, skipped, tuple(groups), sum(p.bad_lines for p in parts), bad)


class ReplayTally:
    """A replay's counts fed one part at a time: the report without its turns, in memory that
    does not grow with the traffic (the studio keeps the changed turns as rows, a page at a
    time). Its `to_dict` has `ReplayReport.to_dict`'s keys; a group has no `turns`."""

    def __init__(self) -> None:
        self.replayed = self.skipped = self.bad_lines = 0
        self.groups: dict[tuple[str, str], int] = {}
        self.bad: list[BadLine] = []

    def add(self, part: PartialReplay) -> None:
        """Count a part in (its changes are not kept)."""
        self.replayed += part.replayed
        self.skipped += part.skipped
        self.bad_lines += part.bad_lines
        self.bad = sorted([*self.bad, *part.bad])[:NAMED_BAD_LINES]
        for change in part.changes:
            key = (change.old, change.new)
            self.groups[key] = self.groups.get(key, 0) + 1

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form; groups biggest first, as in `summarise`."""
        changed = sum(self.groups.values())
        order = sorted(self.groups.items(), key=lambda kv: (-kv[1], kv[0]))
        return {
            "replayed": self.replayed,
            "skipped": self.skipped,
            "changed": changed,
            "share_changed": round(changed / self.replayed, 6) if self.replayed else 0.0,
            "groups": [
                {"old": old, "new": new, "count": n, "share": round(n / self.replayed, 6)}
                for (old, new), n in order
            ],
            "bad_lines": self.bad_lines,
            "bad": [b.to_dict() for b in self.bad],
        }


def replay(router: Router, records: Iterable[Mapping[str, Any] | BadLine]) -> ReplayReport:
    """Replay records in this process (see `replay_turns`) and report the flips."""
    return summarise([replay_turns(router, records)])


def _event(value: Any) -> Mapping[str, Any] | None:
    """The event as a mapping: Parquet files may hold it as a JSON string."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):  # nested past what the parser takes: no event
            return None
    return value if isinstance(value, Mapping) else None


def _compare(
    message: str, event: Mapping[str, Any], decision: Decision, index: int
) -> TurnChange | None:
    old_verdict = str(event.get("verdict"))
    old_tools = tuple((event.get("tools") or {}).get("kept") or ())
    old = outcome(event.get("route"), old_verdict)
    new = outcome(decision.route, decision.verdict)
    changed = tuple(
        name
        for name, differs in (
            ("route", old != new),
            ("verdict", old_verdict != decision.verdict),
            ("tools", old_tools != decision.tools.kept),
        )
        if differs
    )
    if not changed:
        return None
    return TurnChange(
        message=message,
        incumbent=event.get("from_route"),
        old=old,
        new=new,
        old_verdict=old_verdict,
        new_verdict=decision.verdict,
        old_tools=old_tools,
        new_tools=decision.tools.kept,
        changed=changed,
        record=index,
    )


def _change_key(change: TurnChange) -> tuple[str, str, str, str]:
    return (change.message, change.incumbent or "", change.old_verdict, change.new_verdict)
