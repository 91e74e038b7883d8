"""`/healthz` reports whether this process can reach its database, without a login."""

from __future__ import annotations

from unittest import mock

from django.db import OperationalError, connection
from django.test import Client


def test_the_health_check_answers_ok_without_a_login(client: Client, db: None) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "no-cache" in response.headers["Cache-Control"]


def test_the_health_check_answers_503_when_the_database_does_not(client: Client, db: None) -> None:
    refused = OperationalError("connection refused")
    with mock.patch.object(connection, "cursor", side_effect=refused):
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"


def test_a_load_balancer_may_probe_it_with_head(client: Client, db: None) -> None:
    assert client.head("/healthz").status_code == 200
