"""Simultaneous requests on PostgreSQL: one restore per deletion, one 201 per new slug.

Each request runs in its own thread with its own database connection, started together at a
barrier, as several gunicorn workers would run them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from studio.authoring.restore import restore
from studio.models import AuditEntry, Profile, TestCase
from studio.shared.edits import delete_item
from studio.shared.errors import Refused
from studio.shared.packs import build_pack_dict
from studio.shared.tokens import create_api_token
from studio.suites.cases import delete_case

# Deselected on SQLite by tests/studio/fixtures.py: they run in the PostgreSQL pass.
pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]


def at_once(n: int, work: Callable[[], Any]) -> list[Any]:
    """Run `work` in `n` threads released together; each result or exception, in any order."""
    barrier = threading.Barrier(n)
    results: list[Any] = []

    def run() -> None:
        barrier.wait()
        try:
            results.append(work())
        except Exception as exc:  # noqa: BLE001 - the test looks at what each one got
            results.append(exc)
        finally:
            connection.close()  # this thread's own connection

    threads = [threading.Thread(target=run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def deleted(kind: str, profile: Profile, owner: Any) -> AuditEntry:
    if kind == "testcase":
        delete_case(TestCase.objects.create(profile=profile, message="hi"), user=owner)
    else:
        item = {
            "route": lambda: profile.routes.get(name="shipping"),
            "rule": lambda: profile.rules.get(),
            "tool": lambda: profile.tools.get(name="refund_order"),
        }[kind]()
        delete_item(item, user=owner)
    return AuditEntry.objects.get(action=f"{kind}.delete")


@pytest.mark.parametrize("kind", ["route", "rule", "tool", "testcase"])
def test_simultaneous_restores_of_one_deletion_restore_it_once(kind, profile, owner):
    entry = deleted(kind, profile, owner)
    count_before = {
        "route": profile.routes.count,
        "rule": profile.rules.count,
        "tool": profile.tools.count,
        "testcase": profile.test_cases.count,
    }[kind]
    before = count_before()

    results = at_once(4, lambda: restore(AuditEntry.objects.get(pk=entry.pk), user=owner))

    refused = [r for r in results if isinstance(r, Refused)]
    others = [r for r in results if isinstance(r, Exception) and not isinstance(r, Refused)]
    assert others == []
    assert len(refused) == 3, results
    # The three that lost say why, in words, unless they lost on the name the winner took back.
    assert all("already restored" in str(r) or "exists" in str(r) for r in refused)
    assert count_before() == before + 1
    assert AuditEntry.objects.filter(action=f"{kind}.restore").count() == 1


def test_simultaneous_imports_of_one_slug_give_one_201_and_409s(profile, owner):
    _, secret = create_api_token(owner, "ci")
    pack = build_pack_dict(profile)
    pack["profile"]["slug"] = "twin"
    body = json.dumps(pack)

    def post() -> int:
        client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
        return client.post("/api/imports", body, content_type="application/json").status_code

    statuses = sorted(at_once(4, post))

    assert statuses == [201, 409, 409, 409]
    assert Profile.objects.filter(slug="twin").count() == 1


def test_importing_over_an_existing_slug_is_a_409_in_the_error_shape(profile, owner):
    _, secret = create_api_token(owner, "ci")
    response = Client(HTTP_AUTHORIZATION=f"Bearer {secret}").post(
        "/api/imports", json.dumps(build_pack_dict(profile)), content_type="application/json"
    )
    assert response.status_code == 409
    assert "a profile 'shop' exists" in response.json()["detail"]


def test_simultaneous_creations_of_one_slug_give_one_201_and_409s(owner):
    _, secret = create_api_token(owner, "ci")
    body = json.dumps({"slug": "twin", "name": "Twin"})

    def post() -> int:
        client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
        return client.post("/api/profiles", body, content_type="application/json").status_code

    assert sorted(at_once(4, post)) == [201, 409, 409, 409]
    assert Profile.objects.filter(slug="twin").count() == 1


def test_two_admins_demoting_each_other_at_once_leave_one_admin(owner):
    from django.contrib.auth.models import User

    from studio.people.accounts import PeopleRefused, roles_of, set_roles
    from studio.shared.roles import grant

    second = User.objects.create_user("second")
    grant(second, "admin")
    pairs = iter([(owner, second), (second, owner)])
    lock = threading.Lock()

    def demote() -> None:
        with lock:
            who, by = next(pairs)
        set_roles(User.objects.get(pk=who.pk), ["viewer"], by=User.objects.get(pk=by.pk))

    results = at_once(2, demote)

    assert sum(isinstance(r, PeopleRefused) for r in results) == 1, results
    assert [
        r for r in results if isinstance(r, Exception) and not isinstance(r, PeopleRefused)
    ] == []
    admins = [u for u in User.objects.all() if "admin" in roles_of(u)]
    assert len(admins) == 1


def test_three_people_labelling_turns_of_one_route_at_once_lose_nothing(profile, owner):
    from studio.agents.events import EventBatchIn, ingest
    from studio.models import Event
    from studio.traffic.review import label_turn

    texts = ["parcel charged once", "parcel charged twice", "parcel charged thrice"]
    event = {"schema": "route-decision/1", "verdict": "menu", "by": "menu"}
    ingest(
        profile,
        EventBatchIn.model_validate({"events": [{"message": t, "event": event} for t in texts]}),
    )
    pending = iter(list(Event.objects.values_list("pk", flat=True)))
    lock = threading.Lock()

    def label() -> object:
        with lock:
            pk = next(pending)
        return label_turn(Event.objects.get(pk=pk), "billing", save_as="example", user=owner)

    results = at_once(3, label)

    assert [r for r in results if isinstance(r, Exception)] == []
    assert set(texts) <= set(profile.routes.get(name="billing").examples)
    assert Event.objects.filter(reviewed_at=None).count() == 0
