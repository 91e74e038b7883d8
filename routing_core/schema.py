"""The published JSON Schemas: the pack format (generated from the pydantic models) and the
decision event (docs/event-schema.md)."""

from __future__ import annotations

from typing import Any, get_args

from routing_core.decision import EVENT_SCHEMA, By, EvidenceMatch, EvidenceSource
from routing_core.pack import FORMAT_VERSION, Pack
from routing_core.policy import Strictness, VerdictKind
from routing_core.scorers.base import TermKind
from routing_core.triage import Label


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


def decision_schema(*, numbers_at: str = "#/$defs/number") -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of a decision event, `route-decision/1` (docs/event-schema.md).

    Written out rather than generated: the event is made by `to_event` methods, not by a
    model, and an agent in any language logs or reads it. Its enumerations are taken from
    the code's own literal types, so a new verdict or tier reaches the schema with the code.
    Objects are left open to keys the schema does not name: within a schema version keys are
    only ever added, and a reader written against an older list must accept the newer event.
    `numbers_at`: where its numbers' schema is referred to (the route server's OpenAPI
    document keeps it among its components).
    """
    number = {"$ref": numbers_at}
    verdict = {"enum": list(get_args(VerdictKind))}
    names = {"type": "array", "items": {"type": "string"}}
    count = {"type": "integer", "minimum": 0}
    usage = object_schema(input=count, output=count, cached=count, total=count)
    ranked = object_schema(route={"type": "string"}, score=number, relevance=number)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://route-studio.dev/schemas/{EVENT_SCHEMA}.json",
        "title": "A routing decision",
        **object_schema(
            schema={"const": EVENT_SCHEMA},
            pack=object_schema(
                slug={"type": "string"}, version={"type": "integer"}, checksum={"type": "string"}
            ),
            route=nullable({"type": "string"}),
            by={"enum": list(get_args(By))},
            verdict=verdict,
            from_route=nullable({"type": "string"}),
            dropped_incumbent=nullable({"type": "string"}),
            offered=names,
            stay_offered={"type": "boolean"},
            decisive={"type": "boolean"},
            ranked={"type": "array", "items": ranked},
            runner_up=nullable(object_schema(route={"type": "string"}, gap=number)),
            evidence=nullable(
                object_schema(
                    source={"enum": list(get_args(EvidenceSource))},
                    route={"type": "string"},
                    rule=nullable({"type": "integer", "minimum": 0}),
                    match=nullable({"enum": list(get_args(EvidenceMatch))}),
                    text=nullable({"type": "string"}),
                    keyword=nullable({"type": "string"}),
                    span=nullable({"type": "array", "items": count, "minItems": 2, "maxItems": 2}),
                    terms={
                        "type": "array",
                        "items": object_schema(
                            term={"type": "string"},
                            weight=number,
                            kind={"enum": list(get_args(TermKind))},
                        ),
                    },
                    reason=nullable({"type": "string"}),
                )
            ),
            action=nullable(
                object_schema(
                    kind={"enum": ["answer", "delegate", "stuck"]},
                    agent=nullable({"type": "string"}),
                    message=nullable({"type": "string"}),
                )
            ),
            triage=nullable(
                object_schema(
                    label={"enum": list(get_args(Label))},
                    confidence={"type": "number"},
                    matched_tools=names,
                    reasoning={"type": "string"},
                    action_score={"type": "number"},
                    knowledge_score={"type": "number"},
                    signals=names,
                )
            ),
            tools=object_schema(
                mode={"enum": ["off", "shadow", "enforce"]},
                bound=names,
                kept=names,
                dropped=names,
                tokens_saved=count,
            ),
            usage=usage,
            policy=object_schema(
                near_tie_margin=number,
                menu_size={"type": "integer", "minimum": 1},
                floor=nullable(number),
                strictness={"enum": list(get_args(Strictness))},
                effective_floor=nullable(number),
            ),
            scorer=object_schema(
                name={"type": "string"},
                categorical={"type": "boolean"},
                floor=nullable(number),
                error=nullable({"type": "string"}),
            ),
            tiers={
                "type": "array",
                "items": object_schema(
                    name={"type": "string"},
                    decided={"type": "boolean"},
                    verdict=nullable(verdict),
                    elapsed_us=count,
                    usage=usage,
                    error=nullable({"type": "string"}),
                    note=nullable({"type": "string"}),
                ),
            },
            regex=nullable(object_schema(spent_us=count, budget_us=count, skipped=names)),
            elapsed_us=count,
        ),
        "$defs": {
            "number": {
                "description": "A number; one that is not finite is written as text.",
                "anyOf": [{"type": "number"}, {"enum": ["nan", "inf", "-inf"]}],
            }
        },
    }


def object_schema(**properties: Any) -> dict[str, Any]:
    """An object schema whose named properties are all required (every `to_event` writes
    each of its keys, null when there is nothing to say)."""
    return {"type": "object", "properties": properties, "required": list(properties)}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema, or null."""
    return {"anyOf": [schema, {"type": "null"}]}
