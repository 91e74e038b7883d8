"""The route server passes the conformance suite, pack after pack swapped into one process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from routing_core.cli import main
from tests.routing_core.test_conformance import edited_copy
from tests.server.serving import CONFORMANCE, replace_file, serve, wait_until


def _suite() -> list[tuple[str, bytes, str]]:
    out = []
    for path in sorted((CONFORMANCE / "cases").glob("*.json")):
        document = json.loads(path.read_text())
        out.append((path.stem, (CONFORMANCE / document["pack"]).read_bytes(), document["checksum"]))
    return out


def test_the_server_passes_the_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ROUTING_CORE_TOKEN", "conformance")
    suite = _suite()
    pack_file = tmp_path / "pack.json"
    pack_file.write_bytes(suite[0][1])
    with serve(tmp_path, "--pack", str(pack_file), token="conformance") as server:
        for name, data, checksum in suite:
            replace_file(pack_file, data)
            wait_until(lambda c=checksum: server.call("/v1/pack")[1].get("checksum") == c, name)
            assert (
                main(["conformance", "check", "--server", server.url, "--dir", str(CONFORMANCE)])
                == 0
            )
            assert "ok: " in capsys.readouterr().out


def test_a_server_that_differs_fails_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def change(cases: list[dict[str, Any]]) -> None:
        cases[2]["expect"]["verdict"] = "stay"

    copy = edited_copy(tmp_path, "tiny", change)
    with serve(tmp_path, "--pack", str(copy / "packs" / "tiny.json")) as server:
        assert main(["conformance", "check", "--server", server.url, "--dir", str(copy)]) == 1
        assert "tiny/002: verdict: expected 'stay', got 'move'" in capsys.readouterr().out
        # A pack that is not in the suite is an error, not a pass.
        assert (
            main(
                [
                    "conformance",
                    "check",
                    "--server",
                    server.url,
                    "--dir",
                    str(copy),
                    "--only",
                    "menus",
                ]
            )
            == 2
        )
        assert "not a pack of this suite" in capsys.readouterr().err
