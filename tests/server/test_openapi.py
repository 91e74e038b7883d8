"""The route server's OpenAPI document, and a real `routing-core serve` held to it.

schemathesis reads the document the server publishes, generates requests for every operation
(bodies it documents as valid, and bodies it does not), sends them over loopback, and checks
each answer: never a server error, a status the document lists, a media type it lists for
that status, and a body of the documented shape, a decision field for field included. The loop is hand-written, as the studio's is
(studio/shared/tests/test_api_schema.py): schemathesis' pytest plugin does not run under pytest 9.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.generation import GenerationMode

from routing_core.server.app import _ENDPOINTS
from tests.server.serving import CONFORMANCE, serve

TOKEN = "s3cret-token"


def _pack(tmp_path: Path) -> Path:
    path = tmp_path / "pack.json"
    path.write_bytes((CONFORMANCE / "packs" / "support.json").read_bytes())
    return path


def test_the_document_is_open_names_every_endpoint_and_this_server_s_limits(
    tmp_path: Path,
) -> None:
    """Fetched without the callers' token (a client generator has none), it lists every
    endpoint the server answers and the limits it was started with."""
    args = ("--pack", str(_pack(tmp_path)), "--max-message-chars", "500", "--max-batch", "8")
    with serve(tmp_path, *args, token=TOKEN) as server:
        status, document = server.call("/openapi.json", token=None)
        assert status == 200
        assert server.call("/v1/pack", token=None)[0] == 401  # the rest stays guarded
    assert document["openapi"].startswith("3.1")
    assert set(document["paths"]) == set(_ENDPOINTS)
    schemas = document["components"]["schemas"]
    assert schemas["RouteRequest"]["properties"]["message"]["maxLength"] == 500
    assert schemas["Turn"]["properties"]["message"]["maxLength"] == 500
    assert schemas["BatchRequest"]["properties"]["turns"]["maxItems"] == 8
    assert "revision" in schemas["PackIdentity"]["required"]


def test_every_operation_answers_as_documented_to_generated_requests(tmp_path: Path) -> None:
    with serve(tmp_path, "--pack", str(_pack(tmp_path)), token=TOKEN) as server:
        schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json")
        operations = [result.ok() for result in schema.get_all_operations()]  # type: ignore[union-attr]
        labels = {f"{op.method.upper()} {op.path}" for op in operations}
        assert {"POST /v1/route", "POST /v1/route/batch", "GET /v1/pack"} <= labels
        headers = {"Authorization": f"Bearer {TOKEN}"}
        for operation in operations:
            # An operation with no body nor parameters has nothing to send wrong.
            modes = (
                list(GenerationMode) if operation.method == "post" else [GenerationMode.POSITIVE]
            )
            for mode in modes:
                _probe(operation, mode, server.url, headers)
        assert "Traceback" not in server.log()


def _probe(
    operation: Any,
    mode: GenerationMode,
    base_url: str,
    headers: dict[str, str],
) -> None:
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    def probe(case: Any) -> None:
        response = case.call(base_url=base_url, headers=headers)
        case.validate_response(
            response,
            checks=[
                not_a_server_error,
                status_code_conformance,
                content_type_conformance,
                response_schema_conformance,
            ],
        )

    probe()
