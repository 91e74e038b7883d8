"""The published JSON Schema of the pack format, generated from the pydantic models."""

from __future__ import annotations

from typing import Any

from routing_core.pack import FORMAT_VERSION, Pack


def pack_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of a pack document, checksum included."""
    schema = Pack.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://route-studio.dev/schemas/route-pack/{FORMAT_VERSION}.json"
    schema["properties"]["checksum"] = {
        "type": "string",
        "pattern": "^sha256:[0-9a-f]{64}$",
        "description": "sha256 of the canonical JSON of every other field (sorted keys, no "
        "whitespace, UTF-8). Optional in a hand-written pack; verified when present.",
    }
    return schema
