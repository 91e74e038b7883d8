"""What agents install: the routing-core distribution holds the engine and nothing of the studio."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import routing_core

ROOT = Path(__file__).resolve().parents[2]


def test_importing_routing_core_pulls_in_no_django():
    code = (
        "import sys, routing_core, routing_core.cli, routing_core.evaluate; "
        "sys.exit(1 if any(m == 'django' or m.startswith('django.') for m in sys.modules) else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0


def test_the_public_api_is_pinned_and_sorted():
    assert routing_core.__all__ == sorted(routing_core.__all__)
    assert {"Pack", "load_pack", "dump_pack", "PackError", "Router", "Decision"} <= set(
        routing_core.__all__
    )
    from routing_core.policy import decide  # noqa: F401
    from routing_core.tools import estimate_dropped_tokens, narrow_tools  # noqa: F401
    from routing_core.triage import IntentClassifier  # noqa: F401


@pytest.mark.slow
def test_the_wheel_and_sdist_hold_routing_core_only(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--sdist", "--outdir", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    wheel = next(tmp_path.glob("routing_core-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    packages = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert packages == {"routing_core"}
    assert "routing_core/py.typed" in names
    # The semantic view's table (vectors and word pieces) ships with the engine.
    assert "routing_core/static/minilm-l6-static-256.npz" in names
    assert "routing_core/static/e5-small-static-256.npz" in names
    # Where the optional tiers' models come from (none ships inside the wheel).
    assert "routing_core/scorers/NOTICE.md" in names
    metadata = next(n for n in names if n.endswith("METADATA"))
    requires = [
        line
        for line in zipfile.ZipFile(wheel).read(metadata).decode().splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    assert requires and not any("django" in line.lower() for line in requires)
    sdist = next(tmp_path.glob("routing_core-*.tar.gz"))
    with tarfile.open(sdist) as archive:
        members = archive.getnames()
    assert not any("/studio/" in m or "/templates/" in m or "/tests/" in m for m in members)
