"""The normative spec names the format version the engine writes (docs/pack-format.md)."""

from __future__ import annotations

import re
from pathlib import Path

from routing_core.pack import FORMAT_MINOR

SPEC = (Path(__file__).resolve().parents[2] / "docs" / "pack-format.md").read_text()


def test_the_spec_describes_the_minor_the_engine_writes():
    described = re.search(r"major version \*\*1\*\*, minor \*\*(\d+)\*\*", SPEC)
    assert described is not None and int(described.group(1)) == FORMAT_MINOR


def test_the_minors_table_ends_at_the_minor_the_engine_writes():
    rows = [int(m) for m in re.findall(r"^\| (\d+) \| ", SPEC, flags=re.M)]
    assert rows == list(range(FORMAT_MINOR + 1))
