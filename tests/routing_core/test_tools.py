"""Tool narrowing and the tokens it saves (docs/pack-format.md, Tool narrowing)."""

from __future__ import annotations

import pytest

from routing_core.pack import Tool
from routing_core.tools import estimate_dropped_tokens, narrow_tools
from routing_core.triage import TriageVerdict

TOOLS = [
    Tool(name="hydrate_context", description="load context", always_include=True),
    Tool(name="refund_order", description="refund an order", trigger_keywords=("refund",)),
    Tool(name="log_event", description="always bound: no keywords"),
    Tool(name="track_parcel", description="track a parcel", trigger_keywords=("track",)),
]


def verdict(label, tools=()):
    return TriageVerdict(label, 0.9, tuple(tools), "test", 0.0, 0.0)


def names(tools):
    return [t.name for t in tools]


@pytest.mark.parametrize(
    ("triage", "kept"),
    [
        (None, ["hydrate_context", "refund_order", "log_event", "track_parcel"]),
        (verdict("ambiguous"), ["hydrate_context", "refund_order", "log_event", "track_parcel"]),
        (verdict("knowledge", ["refund_order"]), ["hydrate_context"]),
        (verdict("action", ["refund_order"]), ["hydrate_context", "refund_order", "log_event"]),
        (verdict("action"), ["hydrate_context", "log_event"]),
    ],
)
def test_it_narrows_by_verdict_and_keeps_the_order(triage, kept):
    assert names(narrow_tools(triage, TOOLS, always_include=("hydrate_context",))) == kept


def test_always_include_names_that_do_not_exist_are_ignored():
    kept = narrow_tools(verdict("knowledge"), TOOLS, always_include=("nope",))
    assert kept == []


def test_tokens_saved_is_a_floor_of_name_plus_description_over_four():
    dropped = [TOOLS[1], TOOLS[3]]  # 12+15=27 -> 6, 12+14=26 -> 6
    assert estimate_dropped_tokens(dropped) == 6 + 6
    assert estimate_dropped_tokens([]) == 0
