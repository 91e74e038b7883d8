"""The studio's suite run and `routing-core eval` report the same figures, to the digit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from routing_core import dump_pack
from studio.models import Profile, Route, TestCase
from studio.shared.packs import release_pack
from studio.suites.case_import import export_jsonl, import_cases, parse_cases
from studio.suites.runs import start_run

CLINC = Path(__file__).resolve().parents[4] / "shared" / "datasets" / "clinc150"
CLI = [str(Path(sys.executable).parent / "routing-core")]


def _cli_figures(profile: Profile, tmp_path: Path) -> dict[str, object]:
    pack, cases = tmp_path / "pack.json", tmp_path / "cases.jsonl"
    pack.write_text(dump_pack(release_pack(profile)), encoding="utf-8")
    cases.write_text(export_jsonl(profile), encoding="utf-8")
    out = subprocess.run(
        [*CLI, "eval", str(pack), str(cases), "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(out.stdout)


def _without_latency(figures: object) -> object:
    """Every figure but timings, which no two runs share."""
    if isinstance(figures, dict):
        return {k: _without_latency(v) for k, v in figures.items() if k != "latency_us"}
    return figures


def test_studio_and_cli_agree_on_a_profile_with_conversations_and_out_of_scope_cases(
    profile, tmp_path
):
    rows = [
        ("download my invoice", "billing", "", ""),
        ("where is my parcel", "billing", "", ""),
        ("hello there", "", "", ""),
        ("what is the weather on mars", "", "", ""),
        ("parcel invoice", "shipping", "", ""),
        ("download my invoice", "billing", "c1", "move"),
        ("how long does delivery take", "shipping", "c1", "move"),
        ("where is my parcel", "shipping", "c1", "stay"),
    ]
    for order, (message, expected, conversation, verdict) in enumerate(rows):
        TestCase.objects.create(
            profile=profile, message=message, expected_route=expected, order=order,
            conversation=conversation, turn=order, expected_verdict=verdict,
        )  # fmt: skip

    run = start_run(profile, user=None)

    assert _without_latency(run.figures) == _without_latency(_cli_figures(profile, tmp_path))


def test_studio_and_cli_agree_on_a_slice_of_clinc150(db, tmp_path):
    if not CLINC.exists():
        # CI always has the shared data beside the checkout: missing there is a failure.
        message = f"the shared CLINC150 data set is not at {CLINC}"
        pytest.fail(message) if os.environ.get("CI") else pytest.skip(message)
    routes = json.loads((CLINC / "routes.json").read_text())[:20]
    names = {r["name"] for r in routes}
    profile = Profile.objects.create(slug="clinc-slice", name="CLINC150 slice")
    for order, r in enumerate(routes):
        Route.objects.create(
            profile=profile, name=r["name"], order=order, description=r.get("description", ""),
            examples=r["examples"],
        )  # fmt: skip
    lines = (CLINC / "val.jsonl").read_text().splitlines()
    wanted = [line for line in lines if json.loads(line)["expected"] in names]
    wanted += [line for line in lines if json.loads(line)["expected"] is None][:40]
    import_cases(profile, parse_cases("\n".join(wanted), "jsonl").rows, user=None)

    run = start_run(profile, user=None)

    assert run.total > 400
    assert _without_latency(run.figures) == _without_latency(_cli_figures(profile, tmp_path))
