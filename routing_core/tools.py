"""Tool narrowing: bind only the tools a turn can use, and count the prompt tokens that saves."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from routing_core.triage import TriageVerdict


class ToolLike(Protocol):
    """Anything with a name, a description and trigger keywords (pack tools qualify)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def trigger_keywords(self) -> Sequence[str]: ...


T = TypeVar("T", bound=ToolLike)

DEFAULT_ALWAYS_INCLUDE = ("hydrate_context",)


def narrow_tools(
    verdict: TriageVerdict | None,
    tools: Sequence[T],
    always_include: Iterable[str] = DEFAULT_ALWAYS_INCLUDE,
) -> list[T]:
    """The tools to bind for this turn, in their original order.

    No verdict or ambiguous: every tool (narrowing must never hide a tool when unsure).
    Knowledge: only the always-include tools. Action: always-include, the tools whose
    keywords matched, and every tool with no trigger keywords ("always bind").

    Args:
        verdict: the triage verdict, or None when triage is off.
        tools: the profile's tools.
        always_include: tool names kept whatever the verdict.
    """
    if verdict is None or verdict.label == "ambiguous":
        return list(tools)
    keep = set(always_include)
    if verdict.label == "knowledge":
        return [t for t in tools if t.name in keep]
    keep.update(verdict.matched_tools)
    return [t for t in tools if t.name in keep or not t.trigger_keywords]


def estimate_dropped_tokens(dropped: Iterable[ToolLike]) -> int:
    """A floor on the prompt tokens saved: (len(description) + len(name)) // 4 per tool."""
    return sum((len(t.description) + len(t.name)) // 4 for t in dropped)
