"""The studio's JSON API: one NinjaAPI, a router per resource, one error shape for every failure.

Errors are always `{"detail": str, "errors": [{"path", "message"}]}` so scripts handle a
refused edit (422), a conflict (409) or a missing object (404) the same way.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.db import IntegrityError
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI, Router
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.openapi.schema import OpenAPISchema
from ninja.operation import Operation

from routing_core import PackError
from studio.agents import events_api, fleet_api, packs_api
from studio.authoring import items_api, profiles_api
from studio.jobs.notes import training_note
from studio.playground import api as playground_api
from studio.publishing import api as publishing_api
from studio.publishing import rollouts_api
from studio.publishing.gate import RedGate
from studio.shared.drafts import ModelPending
from studio.shared.errors import Conflict, Refused
from studio.shared.ratelimits import RateLimited
from studio.suites import repairs_api

log = logging.getLogger(__name__)

# Each area's router, mounted under its prefix (the order is the documentation's).
ROUTERS: list[tuple[str, Router]] = [
    ("/profiles", items_api.router),
    ("/profiles", publishing_api.router),
    ("/profiles", packs_api.router),
    ("/profiles", events_api.router),
    ("/profiles", fleet_api.router),
    ("/profiles", profiles_api.router),
    ("/imports", publishing_api.imports),
    ("/profiles", playground_api.router),
    ("/profiles", repairs_api.router),
    ("/profiles", rollouts_api.router),
]


class StudioAPI(NinjaAPI):
    """The API, with operation ids that do not depend on where a handler's module lives.

    django-ninja's default id is the handler's module path and name, so moving a module would
    rename the operation in every client generated from the schema. Here it is the handler's
    name, or the `operation_id` its route gives (studio/shared/tests/test_api_schema.py keeps them
    unique).
    """

    def get_openapi_operation_id(self, operation: Operation) -> str:
        return operation.view_func.__name__

    def get_openapi_schema(
        self, *, path_prefix: str | None = None, path_params: dict[str, Any] | None = None
    ) -> OpenAPISchema:
        """ninja's document, with what every operation that takes a body may answer before
        its handler runs: a body that is not JSON (400) or is over the size limit (413). Each
        handler's `response=` names what the handler itself may answer; these two belong to
        the body, so they are said once, here, for every such operation."""
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        for operations in schema["paths"].values():
            for operation in operations.values():
                if "requestBody" in operation:
                    operation["responses"] = _with_body_errors(operation["responses"])
        return schema


# Answers the body itself may cause: ninja's HttpError(400) when it cannot parse it
# (`_http_error` below), Django's RequestDataTooBig (`_too_big`).
BODY_ERRORS = (HTTPStatus.BAD_REQUEST, HTTPStatus.REQUEST_ENTITY_TOO_LARGE)


def _with_body_errors(responses: dict[int, Any]) -> dict[int, Any]:
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}
    added = {int(s): {"description": s.phrase, "content": error} for s in BODY_ERRORS}
    return dict(sorted({**added, **responses}.items()))


api = StudioAPI(
    title="Route Studio API",
    version="1",
    description="Author, test and ship intent routes. Browser: session + CSRF. Scripts and "
    "agents: `Authorization: Bearer <token>`.",
    urls_namespace="api",
)


def error_body(detail: str, errors: list[tuple[str, str]] | None = None) -> dict[str, object]:
    """The one error shape of the API."""
    return {"detail": detail, "errors": [{"path": p, "message": m} for p, m in errors or []]}


def _reply(
    request: HttpRequest, status: int, detail: str, errors: list[tuple[str, str]] | None = None
) -> HttpResponse:
    return api.create_response(request, error_body(detail, errors), status=status)


@api.exception_handler(Refused)
def _refused(request: HttpRequest, exc: Refused) -> HttpResponse:
    return _reply(request, 422, "the change would make the pack invalid", exc.errors)


@api.exception_handler(PackError)
def _invalid_pack(request: HttpRequest, exc: PackError) -> HttpResponse:
    return _reply(request, 422, "invalid pack", exc.errors)


@api.exception_handler(ValidationError)
def _invalid_input(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    errors = [
        (".".join(str(p) for p in e.get("loc", ())), str(e.get("msg", ""))) for e in exc.errors
    ]
    return _reply(request, 422, "invalid input", errors)


@api.exception_handler(ModelPending)
def _training(request: HttpRequest, exc: ModelPending) -> HttpResponse:
    """No model to score with yet: say so at once (never a 5xx, never a wait on training)."""
    response = _reply(request, 409, training_note(exc.compiled.training))
    response["Retry-After"] = "2"
    return response


@api.exception_handler(Conflict)
def _conflict(request: HttpRequest, exc: Conflict) -> HttpResponse:
    """409; an edit's also carries both versions (ConflictOut)."""
    body = {**error_body(str(exc)), **(exc.versions or {})}
    return api.create_response(request, body, status=409)


@api.exception_handler(RedGate)
def _red_gate(request: HttpRequest, exc: RedGate) -> HttpResponse:
    """A red publish gate; while its suite or model is still working, say when to ask again."""
    response = _reply(request, 409, str(exc))
    if exc.waiting:
        response["Retry-After"] = "2"
    return response


@api.exception_handler(IntegrityError)
def _clashed(request: HttpRequest, exc: IntegrityError) -> HttpResponse:
    """A row another request changed at the same moment (a profile deleted while it was being
    published): the same 409 as any conflict, never a 500."""
    log.warning("integrity error answered as a conflict: %s", exc)
    return _reply(request, 409, "a simultaneous change clashed with this one: reload and try again")


@api.exception_handler(AuthenticationError)
def _unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    given = exc.message if exc.message != AuthenticationError().message else ""
    return _reply(request, 401, given or "authentication required")


@api.exception_handler(PermissionDenied)
def _forbidden(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    return _reply(request, 403, str(exc) or "permission denied")


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return _reply(request, exc.status_code, str(exc))  # e.g. ninja's "CSRF check Failed" (403)


@api.exception_handler(RateLimited)
def _rate_limited(request: HttpRequest, exc: RateLimited) -> HttpResponse:
    response = _reply(request, 429, str(exc))
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(RequestDataTooBig)
def _too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE // 1024
    return _reply(request, 413, f"the request body is larger than the {limit} KB limit")


@api.exception_handler(Http404)
def _not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return _reply(request, 404, "not found")


for prefix, router in ROUTERS:
    api.add_router(prefix, router)
