"""The published OpenAPI schema: names that mean one thing, bodies that are the handlers', and
schemathesis against the studio on loopback: no API operation answers with a server error or
with an answer its document does not list.

django-ninja keys every schema by its class's name (`schemas.update(definitions)` in
`ninja.openapi.schema`), so two classes of one name silently become one, and an operation can
document a body its handler refuses.

Each operation of the published OpenAPI schema gets generated requests (valid and invalid
bodies, paths and query strings) sent over HTTP to a live server, as a publisher's API token
(every operation is open to that role, so the handlers run, not just the role check).
The loop is hand-written because schemathesis' pytest plugin does not run under pytest 9.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum
from typing import Any, get_args

import pytest
import schemathesis
from django.contrib.auth.models import User
from hypothesis import HealthCheck, given, settings
from ninja.openapi.schema import REF_TEMPLATE
from ninja.operation import Operation
from ninja.schema import NinjaGenerateJsonSchema
from pydantic import BaseModel
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.generation import GenerationMode

from studio.api import api
from studio.models import Profile, TokenScope
from studio.publishing.versions import promote, publish
from studio.shared.roles import grant
from studio.shared.tokens import create_api_token, create_read_token


def _operations() -> Iterator[Operation]:
    for _prefix, router in api._routers:
        for path_view in router.path_operations.values():
            yield from path_view.operations


def _schema_classes(annotation: Any, seen: set[type]) -> Iterator[type]:
    """The models and enums an annotation names, and those their fields name, once each."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel | Enum):
        if annotation in seen:
            return
        seen.add(annotation)
        yield annotation
        if issubclass(annotation, BaseModel):
            for field in annotation.model_fields.values():
                yield from _schema_classes(field.annotation, seen)
    for argument in get_args(annotation):
        yield from _schema_classes(argument, seen)


def _documented_classes() -> dict[str, set[type]]:
    """Schema name -> the classes documented under it, for every operation's body and answers.

    The wrappers django-ninja makes per operation (path, query and body parameters, responses)
    are not documented themselves: the classes their fields name are.
    """
    seen: set[type] = set()
    names: dict[str, set[type]] = {}
    for operation in _operations():
        wrappers = [*operation.models, *operation.response_models.values()]
        for wrapper in wrappers:
            if not (isinstance(wrapper, type) and issubclass(wrapper, BaseModel)):
                continue
            for field in wrapper.model_fields.values():
                for cls in _schema_classes(field.annotation, seen):
                    names.setdefault(cls.__name__, set()).add(cls)
    return names


def test_no_two_schema_classes_share_a_name():
    names = _documented_classes()
    assert {"RouteIn", "RouteMessageIn", "ProfileOut", "ErrorOut"} <= names.keys()
    shared = {
        name: sorted(f"{cls.__module__}.{cls.__qualname__}" for cls in classes)
        for name, classes in names.items()
        if len(classes) > 1
    }
    assert not shared, f"schema names used by more than one class: {shared}"


def _own_schema(cls: type[BaseModel]) -> dict[str, Any]:
    schema = cls.model_json_schema(
        ref_template=REF_TEMPLATE, schema_generator=NinjaGenerateJsonSchema, mode="validation"
    )
    schema.pop("$defs", None)
    return schema


def test_every_documented_request_body_is_the_one_its_handler_accepts():
    """Each operation's documented JSON body is the class the handler's signature takes."""
    document = api.get_openapi_schema()
    components = document["components"]["schemas"]
    documented = {
        op["operationId"]: op["requestBody"]["content"]["application/json"]["schema"]
        for ops in document["paths"].values()
        for op in ops.values()
        if "requestBody" in op
    }
    handled = {}
    for operation in _operations():
        for params in operation.models:
            if params.__ninja_param_source__ == "body":
                (field,) = params.model_fields.values()
                name = operation.operation_id or api.get_openapi_operation_id(operation)
                handled[name] = field.annotation
    assert documented.keys() == handled.keys()
    for operation_id, body in handled.items():
        schema = documented[operation_id]
        if not (isinstance(body, type) and issubclass(body, BaseModel)):
            assert "$ref" not in schema, operation_id  # a free-form document (a pack)
            continue
        assert schema == {"$ref": REF_TEMPLATE.format(model=body.__name__)}, operation_id
        assert components[body.__name__] == _own_schema(body), operation_id
    assert handled["route_message"].__name__ == "RouteMessageIn"
    assert handled["create_routes"].__name__ == "RouteIn"


@pytest.fixture
def api_schema(live_server, profile, owner):
    """The OpenAPI schema as the live server publishes it, with data worth probing."""
    promote(publish(profile, user=owner), "production", user=owner)
    Profile.objects.create(slug="empty", name="Empty")
    return schemathesis.openapi.from_url(f"{live_server.url}/api/openapi.json")


def test_every_api_operation_answers_as_its_document_says(api_schema, live_server, request):
    django_settings = request.getfixturevalue("settings")  # `settings` is hypothesis' here
    django_settings.STUDIO_RATE_ROUTE = django_settings.STUDIO_RATE_PACK_PULL = "100000/m"
    publisher = User.objects.create_user("schemathesis")
    grant(publisher, "publisher")
    headers = {"Authorization": f"Bearer {create_api_token(publisher, 'schemathesis')[1]}"}
    # Events are sent with an event token only: with it, generated batches reach validation.
    events_token = create_read_token(Profile.objects.get(slug="shop"), "st", user=publisher,
                                     scope=TokenScope.EVENTS)[1]  # fmt: skip
    operations = [result.ok() for result in api_schema.get_all_operations()]
    labels = {f"{op.method.upper()} {op.path}" for op in operations}
    assert len(operations) == 50
    assert {
        "POST /api/profiles/{slug}/route",
        "GET /api/profiles/{slug}/packs/{environment}",
        "GET /api/profiles/{slug}/versions/{number}/signature",
        "GET /api/profiles/{slug}/agents",
    } <= labels

    for operation in operations:
        token = {"Authorization": f"Bearer {events_token}"}
        _probe(operation, live_server.url, token if operation.path.endswith("/events") else headers)


def _probe(operation: schemathesis.APIOperation, base_url: str, headers: dict[str, str]) -> None:
    # Requests it documents as valid, and (for an operation that takes a body) ones it does not.
    modes = list(GenerationMode) if operation.body else [GenerationMode.POSITIVE]
    for mode in modes:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=12, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        def probe(case: schemathesis.Case) -> None:
            response = case.call(base_url=base_url, headers=headers)
            case.validate_response(response, checks=CHECKS)

        probe()


# No server error, and an answer the document lists: its status, media type and body shape.
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
