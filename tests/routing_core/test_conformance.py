"""The conformance suite (conformance/README.md): the library passes it, and it catches a change."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from routing_core.cli import main
from routing_core.conformance.cases import TOLERANCE

SUITE = Path(__file__).resolve().parents[2] / "conformance"
SMALL = ["tiny", "support", "espanol", "menus", "background", "no-route"]


def test_the_library_passes_the_whole_suite(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "check", "--pack", "--dir", str(SUITE)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: ") and "synthetic150" in out


def edited_copy(tmp_path: Path, name: str, edit: Callable[[list[dict[str, Any]]], None]) -> Path:
    """A copy of the small packs' suite with `edit` applied to the cases of `name`."""
    copy = tmp_path / "suite"
    shutil.copytree(SUITE, copy, ignore=shutil.ignore_patterns("synthetic150.json"))
    path = copy / "cases" / f"{name}.json"
    document = json.loads(path.read_text())
    edit(document["cases"])
    path.write_text(json.dumps(document))
    return copy


def test_one_changed_expected_score_fails_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = json.loads((SUITE / "cases" / "support.json").read_text())["cases"][0]
    row = case["expect"]["ranked"][1]

    def nudge(cases: list[dict[str, Any]]) -> None:
        cases[0]["expect"]["ranked"][1]["score"] += 2e-6  # beyond the 1e-6 tolerance

    copy = edited_copy(tmp_path, "support", nudge)
    assert main(["conformance", "check", "--pack", "--dir", str(copy)]) == 1
    out = capsys.readouterr().out
    assert f"{case['id']}: ranked[{row['route']}].score: expected" in out
    total = sum(len(json.loads((copy / "cases" / f"{n}.json").read_text())["cases"]) for n in SMALL)
    total += len(json.loads((copy / "buckets.json").read_text())["cases"])
    assert out.rstrip().endswith(
        f"FAILED: 1 differences in {total} cases (background, espanol, menus, no-route, support, tiny, buckets)"
    )


def test_a_difference_within_the_tolerance_passes(tmp_path: Path) -> None:
    def nudge(cases: list[dict[str, Any]]) -> None:
        cases[0]["expect"]["ranked"][0]["relevance"] += 5e-7

    copy = edited_copy(tmp_path, "tiny", nudge)
    assert main(["conformance", "check", "--pack", "--dir", str(copy), "--only", "tiny"]) == 0


def test_a_changed_route_and_tool_list_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def change(cases: list[dict[str, Any]]) -> None:
        cases[0]["expect"]["route"] = "shipping"
        cases[1]["expect"]["tools_kept"] = []

    copy = edited_copy(tmp_path, "support", change)
    assert main(["conformance", "check", "--pack", "--dir", str(copy), "--only", "support"]) == 1
    out = capsys.readouterr().out
    assert "support/000: route: expected 'shipping', got 'billing'" in out
    assert "support/001: tools_kept: expected [], got [" in out


def same(committed: Any, fresh: Any, where: str = "") -> list[str]:
    """Where two suite documents differ: text, routes and structure exactly, numbers within the
    suite's own tolerance (a float32 sum's last digit moves with the CPU's vector width)."""
    if isinstance(committed, dict) and isinstance(fresh, dict):
        if committed.keys() != fresh.keys():
            return [f"{where}: keys {sorted(committed)} != {sorted(fresh)}"]
        return [d for k in committed for d in same(committed[k], fresh[k], f"{where}.{k}")]
    if isinstance(committed, list) and isinstance(fresh, list):
        if len(committed) != len(fresh):
            return [f"{where}: {len(committed)} items != {len(fresh)}"]
        return [
            d
            for i, pair in enumerate(zip(committed, fresh, strict=True))
            for d in same(*pair, f"{where}[{i}]")
        ]
    numbers = (int, float)
    if isinstance(committed, numbers) and isinstance(fresh, numbers):
        both_bool = isinstance(committed, bool) == isinstance(fresh, bool)
        if both_bool and abs(committed - fresh) <= TOLERANCE:
            return []
    elif committed == fresh:
        return []
    return [f"{where}: {committed!r} != {fresh!r}"]


def test_the_committed_suite_is_what_the_reference_engine_generates(tmp_path: Path) -> None:
    """A change to the routing semantics must come with a regenerated suite (and a reason)."""
    assert main(["conformance", "generate", "--dir", str(tmp_path), "--only", *SMALL]) == 0
    for name in SMALL:
        for kind in ("packs", "cases"):
            fresh = json.loads((tmp_path / kind / f"{name}.json").read_text())
            committed = json.loads((SUITE / kind / f"{name}.json").read_text())
            assert same(committed, fresh) == [], f"{kind}/{name}.json"


def test_a_regenerated_suite_that_moved_one_score_is_caught() -> None:
    committed = json.loads((SUITE / "cases" / "tiny.json").read_text())
    moved = json.loads(json.dumps(committed))
    moved["cases"][0]["expect"]["ranked"][0]["score"] += 10 * TOLERANCE
    assert same(committed, moved) != [] and same(committed, committed) == []


def test_check_refuses_an_unknown_pack_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "check", "--pack", "--dir", str(SUITE), "--only", "nope"]) == 2
    assert "not in the suite: nope" in capsys.readouterr().err
