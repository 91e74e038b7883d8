"""The route server's OpenAPI document (docs/server.md, "The OpenAPI document").

An agent in a language without a client of ours (Go, Java, Ruby, C#) gets one from a client
generator that reads this document, and a test harness (schemathesis, in this project's own
tests) holds the server to it. Nothing here is written twice: the request bodies are the
pydantic models the server parses with (`routing_core.server.api`), the decision is the event's
published schema (`routing_core.schema.decision_schema`), and the limits are the running
server's own settings, so the document states the limits this server holds.
"""

from __future__ import annotations

from typing import Any

from routing_core.schema import decision_schema, nullable, object_schema
from routing_core.server.api import BatchRequest, RouteRequest
from routing_core.server.config import ServeConfig
from routing_core.server.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from routing_core.version import engine_version

_COMPONENTS = "#/components/schemas/"
_ERRORS = {
    "400": "The body is not JSON (`invalid_json`).",
    "401": "Tokens are configured and none matched (`unauthorized`).",
    "413": "The body is larger than the server takes (`body_too_large`).",
    "415": "The body is not sent as JSON (`unsupported_media_type`).",
    "422": "A field is missing, mistyped, unknown or too long, the incumbent is not a route "
    "of the pack (`unknown_incumbent`), or a batch has too many turns (`batch_too_large`); "
    "`problems` names each.",
    "503": "No pack is loaded yet (`not_ready`); try again after `Retry-After` seconds.",
}


def openapi_document(config: ServeConfig) -> dict[str, Any]:
    """The OpenAPI 3.1 document of a server started with `config`."""
    schemas = {**_request_schemas(config), **_answer_schemas()}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Route Studio route server",
            "version": engine_version(),
            "description": "Routes a user's turn with a pack, as `routing-core serve` runs it "
            "(docs/server.md). The decision is the library's, field for field "
            "(docs/event-schema.md).",
        },
        "paths": _paths(),
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


def _paths() -> dict[str, Any]:
    return {
        "/v1/route": {"post": _post("route", "Route one turn.", "RouteRequest", "Decision")},
        "/v1/route/batch": {
            "post": _post(
                "routeBatch", "Route many turns on one pack.", "BatchRequest", "BatchAnswer"
            )
        },
        "/v1/pack": {"get": _get("pack", "The pack in service.", "PackInfo", guarded=True)},
        "/healthz": {
            "get": _get("health", "Whether the process runs.", "Health", needs_pack=False)
        },
        "/readyz": {"get": _get("ready", "Whether a pack is loaded.", "Ready")},
        "/metrics": {
            "get": {
                "operationId": "metrics",
                "summary": "Prometheus metrics (docs/server.md).",
                "responses": {
                    "200": {
                        "description": "Prometheus' text exposition format, sent as "
                        f"`{METRICS_CONTENT_TYPE}`.",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    }
                },
            }
        },
        "/openapi.json": {
            "get": {
                "operationId": "openapi",
                "summary": "This document.",
                "responses": {
                    "200": {
                        "description": "The OpenAPI document.",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    }
                },
            }
        },
    }


def _post(operation: str, summary: str, body: str, answer: str) -> dict[str, Any]:
    return {
        "operationId": operation,
        "summary": summary,
        "security": [{"bearer": []}, {}],
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": _COMPONENTS + body}}},
        },
        "responses": {
            "200": _json("The answer.", answer),
            # Every refusal a routing request can meet (docs/server.md, "Errors").
            **{status: _json(text, "Error") for status, text in _ERRORS.items()},
        },
    }


def _get(
    operation: str, summary: str, answer: str, *, guarded: bool = False, needs_pack: bool = True
) -> dict[str, Any]:
    responses = {"200": _json("The answer.", answer)}
    if guarded:
        responses["401"] = _json(_ERRORS["401"], "Error")
    if needs_pack:
        responses["503"] = _json(_ERRORS["503"], "Error")
    security: dict[str, Any] = {"security": [{"bearer": []}, {}]} if guarded else {}
    return {"operationId": operation, "summary": summary, **security, "responses": responses}


def _json(description: str, schema: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": _COMPONENTS + schema}}},
    }


def _request_schemas(config: ServeConfig) -> dict[str, Any]:
    """The request bodies as the server's models validate them, with this server's limits."""
    schemas: dict[str, Any] = {}
    for model in (RouteRequest, BatchRequest):
        schema = model.model_json_schema(ref_template=_COMPONENTS + "{model}", mode="validation")
        schemas.update(schema.pop("$defs", {}))
        schemas[model.__name__] = schema
    for turn in (schemas["RouteRequest"], schemas["Turn"]):
        turn["properties"]["message"]["maxLength"] = config.max_message_chars
    schemas["BatchRequest"]["properties"]["turns"]["maxItems"] = config.max_batch
    return schemas


def _answer_schemas() -> dict[str, Any]:
    decision = decision_schema(numbers_at=_COMPONENTS + "EventNumber")
    number = decision.pop("$defs")["number"]
    for key in ("$schema", "$id"):
        decision.pop(key)
    identity = decision["properties"]["pack"]
    identity["properties"]["revision"] = {"type": "integer", "minimum": 1}
    identity["required"].append("revision")
    ranked = decision["properties"]["ranked"]
    decision["properties"]["exact"] = object_schema(ranked=ranked)
    decision["description"] = (
        "The library's decision event with the pack's revision in this process and, when the "
        "request asked for `exact`, every route's unrounded numbers."
    )
    text = {"type": "string"}
    return {
        "EventNumber": number,
        "Decision": decision,
        "PackIdentity": identity,
        "BatchAnswer": object_schema(
            pack={"$ref": _COMPONENTS + "PackIdentity"},
            decisions={"type": "array", "items": {"$ref": _COMPONENTS + "Decision"}},
        ),
        "PackInfo": object_schema(
            loaded={"const": True},
            slug=text,
            name=text,
            version={"type": "integer"},
            revision={"type": "integer", "minimum": 1},
            checksum=text,
            loaded_at=text,
            source=text,
            routes={"type": "array", "items": text},
            verified_by=nullable(text),
            last_error=nullable(text),
        ),
        "Health": object_schema(status={"const": "ok"}),
        "Ready": object_schema(
            ready={"const": True},
            slug=text,
            version={"type": "integer"},
            checksum=text,
            revision={"type": "integer", "minimum": 1},
        ),
        "Error": object_schema(
            error=object_schema(
                status={"type": "integer"},
                code=text,
                message=text,
                problems={"type": "array", "items": object_schema(path=text, reason=text)},
            )
        ),
    }
