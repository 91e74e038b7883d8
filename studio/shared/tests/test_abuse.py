"""Abuse: sign-in throttling (django-axes) and per-token rate limits on the route and pack-pull
endpoints (django-ratelimit), each refusing with a clear message and a way to know when to retry."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from studio.publishing.versions import promote, publish
from studio.shared.tokens import create_api_token, create_read_token

LOGIN = "/accounts/login/"


@pytest.fixture(autouse=True)
def _fresh_counters() -> Any:
    cache.clear()
    yield
    cache.clear()


def _sign_in(client: Client, username: str, password: str, ip: str = "10.0.0.1") -> Any:
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=ip)


def test_five_failed_sign_ins_lock_that_username_and_address_out_with_a_clear_message(viewer):
    client = Client()
    failures = [_sign_in(client, "viewer", "wrong").status_code for _ in range(4)]

    fifth = _sign_in(client, "viewer", "wrong")
    right_password = _sign_in(client, "viewer", "pw")

    assert failures == [200] * 4  # the form again, with Django's "please enter a correct…"
    assert fifth.status_code == right_password.status_code == 429
    page = right_password.content.decode()
    assert "Too many failed sign-ins" in page and "0:15:00" in page
    assert "_auth_user_id" not in client.session


def test_a_lockout_holds_only_for_that_username_from_that_address(viewer, editor):
    for _ in range(5):
        _sign_in(Client(), "viewer", "wrong", ip="10.0.0.1")

    other_user = _sign_in(Client(), "editor", "pw", ip="10.0.0.1")
    other_address = _sign_in(Client(), "viewer", "pw", ip="10.0.0.2")

    assert (other_user.status_code, other_address.status_code) == (302, 302)


def test_a_successful_sign_in_resets_the_failure_count(viewer):
    for _ in range(4):
        _sign_in(Client(), "viewer", "wrong")
    assert _sign_in(Client(), "viewer", "pw").status_code == 302

    after = [_sign_in(Client(), "viewer", "wrong").status_code for _ in range(4)]

    assert after == [200] * 4


def test_a_lockout_ends_after_the_cool_off(viewer, settings, monkeypatch):
    from datetime import timedelta

    from axes.models import AccessAttempt

    for _ in range(5):
        _sign_in(Client(), "viewer", "wrong")
    AccessAttempt.objects.update(
        attempt_time=AccessAttempt.objects.get().attempt_time - timedelta(minutes=16)
    )

    assert _sign_in(Client(), "viewer", "pw").status_code == 302


# -- rate limits ------------------------------------------------------------------------------------


@pytest.fixture
def pull(profile: Any, owner: User) -> tuple[str, str]:
    promote(publish(profile, user=owner), "production", user=owner)
    return f"/api/profiles/{profile.slug}/packs/production", create_read_token(
        profile, "agent", user=owner
    )[1]


def test_pack_pulls_over_the_per_token_limit_get_a_429_with_retry_after(pull, settings):
    settings.STUDIO_RATE_PACK_PULL = "3/m"
    url, token = pull
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")

    statuses = [client.get(url).status_code for _ in range(4)]
    refused = client.get(url)

    assert statuses == [200, 200, 200, 429]
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert refused.json() == {
        "detail": f"rate limit of 3 requests exceeded: retry in {refused['Retry-After']} s",
        "errors": [],
    }


def test_the_pack_pull_limit_counts_each_token_apart(pull, profile, owner, settings):
    settings.STUDIO_RATE_PACK_PULL = "2/m"
    url, first = pull
    second = create_read_token(profile, "another agent", user=owner)[1]
    for _ in range(2):
        Client(HTTP_AUTHORIZATION=f"Bearer {first}").get(url)

    assert Client(HTTP_AUTHORIZATION=f"Bearer {first}").get(url).status_code == 429
    assert Client(HTTP_AUTHORIZATION=f"Bearer {second}").get(url).status_code == 200


def test_a_304_counts_against_the_pack_pull_limit_too(pull, settings):
    settings.STUDIO_RATE_PACK_PULL = "2/m"
    url, token = pull
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    etag = client.get(url)["ETag"]

    assert client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304
    assert client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 429


def test_the_route_endpoint_over_the_per_token_limit_gets_a_429_with_retry_after(
    profile, viewer, settings
):
    settings.STUDIO_RATE_ROUTE = "2/m"
    client = Client(HTTP_AUTHORIZATION=f"Bearer {create_api_token(viewer, 'script')[1]}")
    url, body = f"/api/profiles/{profile.slug}/route", {"message": "refund please"}

    statuses = [
        client.post(url, body, content_type="application/json").status_code for _ in range(3)
    ]

    assert statuses == [200, 200, 429]
    refused = client.post(url, body, content_type="application/json")
    assert int(refused["Retry-After"]) >= 1 and set(refused.json()) == {"detail", "errors"}


def test_the_route_limit_counts_a_signed_in_browser_by_its_user(profile, viewer, settings):
    settings.STUDIO_RATE_ROUTE = "1/m"
    client = Client(enforce_csrf_checks=False)
    client.force_login(viewer)
    url, body = f"/api/profiles/{profile.slug}/route", {"message": "refund please"}

    first = client.post(url, body, content_type="application/json")
    second = client.post(url, body, content_type="application/json")

    assert (first.status_code, second.status_code) == (200, 429)


def test_the_429_is_documented_in_the_openapi_schema_of_both_endpoints(client):
    paths = client.get(reverse("api:openapi-json")).json()["paths"]

    assert "429" in paths["/api/profiles/{slug}/route"]["post"]["responses"]
    assert "429" in paths["/api/profiles/{slug}/packs/{environment}"]["get"]["responses"]
