"""MkDocs hooks: generate what the site shows from the code, so it can never drift from it.

Before each build, the pack format's JSON Schema (what `routing-core schema` prints) and the
studio's OpenAPI document (what `/api/openapi.json` serves, exported by django-ninja's
`export_openapi_schema`) are written under `build/docs-gen/`; the pack specification
includes the first (pymdownx.snippets) and the HTTP API reference renders the second
(neoteroi-mkdocs). The studio is exported in a child process: Django configures itself once
per process, and MkDocs' own process should not carry the studio's settings.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "build" / "docs-gen"


def on_pre_build(config: Any, **_: Any) -> None:
    """Write the pack schema and the studio's OpenAPI before MkDocs reads the pages."""
    GENERATED.mkdir(parents=True, exist_ok=True)
    _write_pack_schema(GENERATED / "pack-schema.json")
    _write_openapi(GENERATED / "openapi.json")


def _write_pack_schema(path: Path) -> None:
    from routing_core import pack_schema

    path.write_text(json.dumps(pack_schema(), indent=2, ensure_ascii=False) + "\n", "utf-8")


def _write_openapi(path: Path) -> None:
    command = [
        sys.executable,
        "manage.py",
        "export_openapi_schema",
        "--api",
        "studio.api.api",
        "--indent",
        "2",
        "--output",
        str(path),
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise PluginError(f"exporting the studio's OpenAPI failed:\n{done.stderr[-2000:]}")
