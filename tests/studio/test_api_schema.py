"""schemathesis against the studio on loopback: no API operation answers with a server error.

Each operation of the published OpenAPI schema gets generated requests (valid and invalid
bodies, paths and query strings) sent over HTTP to a live server, as the owner's API token.
The loop is hand-written because schemathesis' pytest plugin does not run under pytest 9.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

from studio.models import Profile
from studio.publishing import promote, publish
from studio.tokens import create_api_token


@pytest.fixture
def api_schema(live_server, profile, owner):
    """The OpenAPI schema as the live server publishes it, with data worth probing."""
    promote(publish(profile, user=owner), "production", user=owner)
    Profile.objects.create(slug="empty", name="Empty")
    return schemathesis.openapi.from_url(f"{live_server.url}/api/openapi.json")


def test_no_api_operation_answers_with_a_server_error(api_schema, owner, live_server):
    headers = {"Authorization": f"Bearer {create_api_token(owner, 'schemathesis')[1]}"}
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) > 30

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=12, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        def probe(case: schemathesis.Case) -> None:
            response = case.call(base_url=live_server.url, headers=headers)
            case.validate_response(response, checks=[not_a_server_error])

        probe()
