"""MkDocs hooks: generate what the site shows from the code, so it can never drift from it.

Before each build, the pack format's and the decision event's JSON Schemas (what
`routing-core schema` prints, with and without `--decision`), the route server's OpenAPI
document (what `routing-core serve` answers at `/openapi.json`) and the studio's (what
`/api/openapi.json` serves, exported by django-ninja's `export_openapi_schema`) are written
under `build/docs-gen/`; the pack specification and the event's page include the schemas
(pymdownx.snippets) and the two HTTP API references render the documents (neoteroi-mkdocs). The studio is exported in a child process: Django configures itself once
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
    _write_schemas(GENERATED)
    _write_openapi(GENERATED / "openapi.json")


def _write_schemas(folder: Path) -> None:
    """The pack's and the decision event's JSON Schemas, and the route server's OpenAPI
    document as a server started with the default limits serves it."""
    from routing_core import decision_schema, pack_schema
    from routing_core.server import ServeConfig, openapi_document

    written = {
        "pack-schema.json": pack_schema(),
        "decision-schema.json": decision_schema(),
        "route-server-openapi.json": openapi_document(ServeConfig(pack_file="pack.json")),
    }
    for name, document in written.items():
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        (folder / name).write_text(text, "utf-8")


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
