"""Labelled turns for evaluation: what a case expects, and how cases are read from JSONL."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VERDICTS = ("move", "stay", "menu", "unmatched")
TRIAGE_LABELS = ("action", "knowledge", "ambiguous")


@dataclass(frozen=True, slots=True)
class Case:
    """One labelled turn.

    `expected` None means the message must come out unmatched. The optional expectations
    (verdict kind, triage label, tools) are checked only when given. Cases sharing a
    `conversation` id are turns of one conversation, run in order: each turn's incumbent is
    the route the previous turn landed on.

    Tools: `expected_tools` are tools the turn must keep (others may be kept too, so adding a
    tool to the pack later does not fail the case) and `dropped_tools` tools it must not keep.
    `exact_tools` asks for exactly `expected_tools`. An empty `expected_tools` ("keep nothing")
    would check nothing, so it means "no tool kept", as it always did.
    """

    text: str
    expected: str | None
    incumbent: str | None = None
    expected_verdict: str | None = None
    expected_triage: str | None = None
    expected_tools: tuple[str, ...] | None = None
    conversation: str | None = None
    dropped_tools: tuple[str, ...] | None = None
    exact_tools: bool = False

    def tool_misses(self, kept: tuple[str, ...]) -> list[str]:
        """What the kept tools miss of this case's tool expectations, as short sentences."""
        misses = []
        got = ", ".join(kept) or "none"
        wanted = self.expected_tools
        if wanted is not None and (self.exact_tools or not wanted):
            if set(kept) != set(wanted):
                misses.append(f"tools: expected exactly {', '.join(wanted) or 'none'}, got {got}")
        elif wanted is not None and (missing := [t for t in wanted if t not in kept]):
            misses.append(f"tools: must keep {', '.join(missing)}, got {got}")
        if self.dropped_tools and (kept_anyway := [t for t in self.dropped_tools if t in kept]):
            misses.append(f"tools: must drop {', '.join(kept_anyway)}, but kept them")
        return misses


def load_cases(path: str | Path) -> list[Case]:
    """Read JSONL cases, one object a line (blank lines skipped).

    Raises:
        ValueError: naming the line of the first malformed case.
    """
    cases = []
    with Path(path).open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                cases.append(parse_case(line, number))
    return cases


def parse_case(line: str, number: int = 1) -> Case:
    """One JSONL line as a case; ValueError with the line number when it is malformed."""
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"line {number}: invalid JSON: {exc.msg}") from None
    return case_from_mapping(row, number)


def case_from_mapping(row: Any, number: int = 1) -> Case:
    """A case from a decoded object (JSONL line, CSV row, API body)."""
    if not isinstance(row, Mapping) or not isinstance(row.get("text"), str):
        raise ValueError(f"line {number}: a case is an object with a string 'text'")
    for key in ("expected", "incumbent", "conversation"):
        if row.get(key) is not None and not isinstance(row.get(key), str):
            raise ValueError(f"line {number}: '{key}' is a route name or null")
    _one_of(row, "expected_verdict", VERDICTS, number)
    _one_of(row, "expected_triage", TRIAGE_LABELS, number)
    tools = _tool_list(row, "expected_tools", number)
    dropped = _tool_list(row, "dropped_tools", number)
    exact = row.get("exact_tools", False)
    if not isinstance(exact, bool):
        raise ValueError(f"line {number}: 'exact_tools' is true or false")
    return Case(
        text=row["text"],
        expected=row.get("expected") or None,
        incumbent=row.get("incumbent") or None,
        expected_verdict=row.get("expected_verdict") or None,
        expected_triage=row.get("expected_triage") or None,
        expected_tools=tools,
        conversation=row.get("conversation") or None,
        dropped_tools=dropped,
        exact_tools=exact,
    )


def _tool_list(row: Mapping[str, Any], key: str, number: int) -> tuple[str, ...] | None:
    tools = row.get(key)
    if tools is not None and not (
        isinstance(tools, list) and all(isinstance(t, str) for t in tools)
    ):
        raise ValueError(f"line {number}: '{key}' is a list of tool names or null")
    return tuple(tools) if tools is not None else None


def _one_of(row: Mapping[str, Any], key: str, allowed: tuple[str, ...], number: int) -> None:
    value = row.get(key)
    if value not in (None, "") and value not in allowed:
        raise ValueError(f"line {number}: '{key}' is one of {', '.join(allowed)}")
