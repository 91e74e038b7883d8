"""The suite's canary buckets (docs/pack-format.md, Conversation buckets): ids and their buckets.

`conformance/buckets.json` lists conversation ids — plain, empty, long, non-ASCII, with an
unpaired surrogate — and the bucket the reference engine gives each, so that every runtime
(the TypeScript client too) can check its own hash against the same file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from routing_core.canary import bucket

SUITE = "route-buckets/1"
FILE = "buckets.json"
FUNCTION = (
    "bucket = (uint64_be(sha256(utf8(id))[0:8]) mod 10000) div 100; "
    "an unpaired surrogate counts as U+FFFD"
)
_SPECIAL = (
    "",
    " ",
    "a",
    "A",
    "abc",
    " abc",
    "abc ",
    "c0",
    "c1",
    "0",
    "123e4567-e89b-12d3-a456-426614174000",
    "123E4567-E89B-12D3-A456-426614174000",
    "whatsapp:+447700900123",
    "conversación-ñ",
    "Gespräch/Straße",
    "会話-42",
    "😀 chat",
    "e\u0301",  # a combining accent: not normalised
    "\u00e9",
    "\ud800-lone-high",
    "lone-low-\udc00",
    "\ufffd-lone-high",  # buckets as the lone surrogate above
    "tab\there",
    "line\nbreak",
    "x" * 1000,
)


def cases() -> list[dict[str, object]]:
    """The ids: the special ones, then `conv-0` … `conv-299` (every bucket but a few, 0 and 99 too)."""
    ids = [*_SPECIAL, *(f"conv-{i}" for i in range(300))]
    return [{"conversation": c, "bucket": bucket(c)} for c in ids]


def write(directory: Path) -> Path:
    """Write `buckets.json` from the reference engine."""
    path = directory / FILE
    lines = [json.dumps(case) for case in cases()]  # ASCII: every runtime reads the escapes
    head = json.dumps({"suite": SUITE, "function": FUNCTION}, indent=1)[:-2]
    path.write_text(head + ',\n "cases": [\n  ' + ",\n  ".join(lines) + "\n ]\n}\n")
    return path


def check(directory: Path, runtime: Callable[[str], int] = bucket) -> tuple[int, list[str]]:
    """Run `runtime` over the file's ids: how many, and one line per bucket that differs.

    Raises:
        ValueError: the file is missing or not a bucket suite.
    """
    path = directory / FILE
    document = json.loads(path.read_text(encoding="utf-8"))
    if document.get("suite") != SUITE:
        raise ValueError(f"{path}: not a {SUITE} file")
    report = []
    for case in document["cases"]:
        got = runtime(case["conversation"])
        if got != case["bucket"]:
            shown = json.dumps(case["conversation"])[:60]
            report.append(f"bucket {shown}: expected {case['bucket']}, got {got}")
    return len(document["cases"]), report
