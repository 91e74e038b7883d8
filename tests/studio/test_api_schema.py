"""schemathesis against the studio on loopback: no API operation answers with a server error.

Each operation of the published OpenAPI schema gets generated requests (valid and invalid
bodies, paths and query strings) sent over HTTP to a live server, as a publisher's API token
(every operation is open to that role, so the handlers run, not just the role check).
The loop is hand-written because schemathesis' pytest plugin does not run under pytest 9.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.contrib.auth.models import User
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

from studio.models import Profile, TokenScope
from studio.publishing import promote, publish
from studio.roles import grant
from studio.tokens import create_api_token, create_read_token


@pytest.fixture
def api_schema(live_server, profile, owner):
    """The OpenAPI schema as the live server publishes it, with data worth probing."""
    promote(publish(profile, user=owner), "production", user=owner)
    Profile.objects.create(slug="empty", name="Empty")
    return schemathesis.openapi.from_url(f"{live_server.url}/api/openapi.json")


def test_no_api_operation_answers_with_a_server_error(api_schema, live_server, request):
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
    assert len(operations) == 41
    assert {
        "POST /api/profiles/{slug}/route",
        "GET /api/profiles/{slug}/packs/{environment}",
    } <= labels

    for operation in operations:
        token = {"Authorization": f"Bearer {events_token}"}
        _probe(operation, live_server.url, token if operation.path.endswith("/events") else headers)


def _probe(operation: schemathesis.APIOperation, base_url: str, headers: dict[str, str]) -> None:
    @given(case=operation.as_strategy())
    @settings(
        max_examples=12, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    def probe(case: schemathesis.Case) -> None:
        response = case.call(base_url=base_url, headers=headers)
        case.validate_response(response, checks=[not_a_server_error])

    probe()
