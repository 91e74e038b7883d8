"""Shared by the importer tests: where the hand-written exports are, and zipping a folder."""

from __future__ import annotations

import zipfile
from pathlib import Path

from routing_core import Router, dump_pack, load_pack
from routing_core.importers import ImportResult

EXPORTS = Path(__file__).parent / "exports"


def zip_folder(folder: Path, target: Path, *, top: str = "") -> Path:
    """Zip a folder as the tools' export buttons do (optionally inside one top folder)."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"{top}{path.relative_to(folder).as_posix()}")
    return target


def round_trip(result: ImportResult) -> Router:
    """The import as a pack that is written, read back and validated, ready to route."""
    pack = result.to_pack(slug="imported")
    return Router(load_pack(dump_pack(pack)))


def notes(result: ImportResult, kind: str) -> list[str]:
    return [n.line() for n in result.notes_of(kind)]  # type: ignore[arg-type]
