"""'Find a fix' through the JSON API: what a team's script does instead of the page.

Jobs run inline here (ImmediateBackend: the search has ended when the POST answers) unless a
test queues them for a worker that never comes (`settings.TASKS = DATABASE`); the last test
runs a real worker process. Runs on SQLite and on PostgreSQL (the studio's second pass).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from studio.models import AuditEntry, Profile, RepairJob, TestCase
from studio.shared.tokens import create_api_token, create_read_token
from studio.suites.repairs import CASES_CHANGED, CHANGED, NO_FIX
from tests.job_worker import DATABASE, Workers, wait_for
from tests.studio.fixtures import found_search

COURIER = {
    "kind": "add_keyword",
    "route": "shipping",
    "text": "courier",
    "source": None,
    "description": "add the keyword “courier” to shipping",
}


def _token_client(user: Any) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {create_api_token(user, 'script')[1]}")


@pytest.fixture
def script(editor: Any) -> Client:
    """An editor's script, with its API token."""
    return _token_client(editor)


def _cases(profile: Profile) -> list[TestCase]:
    """Passing cases from the routes' own examples, and one that fails until "courier" is a
    shipping keyword (the last)."""
    rows = [("why was I charged twice", "billing"), ("where is my parcel", "shipping")]
    rows += [("let me talk to someone", "human"), ("the courier never came", "shipping")]
    return [
        TestCase.objects.create(profile=profile, message=m, expected_route=r, order=i)
        for i, (m, r) in enumerate(rows)
    ]


@pytest.fixture
def failing(profile: Profile) -> TestCase:
    return _cases(profile)[-1]


def _fixes(case: TestCase) -> str:
    return f"/api/profiles/{case.profile.slug}/test-cases/{case.pk}/fixes"


def test_a_search_that_ended_at_once_answers_200_with_the_edit_in_words_and_as_fields(
    script: Client, failing: TestCase
) -> None:
    response = script.post(_fixes(failing))
    body = response.json()
    assert response.status_code == 200 and "Location" not in response
    assert body["status"] == "done" and body["fix"] == COURIER and body["applicable"] is True
    assert body["detail"] == "Found: add the keyword “courier” to shipping."
    assert body["url"] == f"{_fixes(failing)}/{body['id']}" and body["test_case"] == failing.pk
    assert body["page"] == f"/profiles/shop/tests/{failing.pk}/fix/?job={body['id']}"
    assert script.get(body["url"]).json() == body
    assert failing.profile.routes.get(name="shipping").keywords == []  # nothing applied yet


def test_a_queued_search_answers_202_with_its_location_is_reused_and_can_be_cancelled(
    script: Client, failing: TestCase, settings: Any
) -> None:
    settings.TASKS = DATABASE  # queued for a worker, of which none runs here
    first = script.post(_fixes(failing))
    body = first.json()
    assert first.status_code == 202 and first["Location"] == body["url"]
    assert first["Retry-After"] == "2" and body["status"] == "queued" and body["fix"] is None
    assert body["detail"] == "Waiting for a worker to start the search."
    again = script.post(_fixes(failing))  # a retried call: the same search
    assert again.status_code == 202 and again.json()["id"] == body["id"]
    read = script.get(body["url"])
    assert read.status_code == 200 and read["Retry-After"] == "2"

    cancelled = script.post(f"{body['url']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert "Retry-After" not in script.get(body["url"])
    assert script.post(_fixes(failing)).json()["id"] == body["id"]  # ended: reused, as the page
    fresh = script.post(f"{_fixes(failing)}?again=true")
    assert fresh.status_code == 202 and fresh.json()["id"] != body["id"]
    assert RepairJob.objects.filter(test_case=failing).count() == 2


def test_cancelling_a_running_search_answers_202_until_it_stops(
    script: Client, failing: TestCase, settings: Any
) -> None:
    settings.TASKS = DATABASE
    body = script.post(_fixes(failing)).json()
    RepairJob.objects.filter(pk=body["id"]).update(status="running", worker="w:1", total=9)
    response = script.post(f"{body['url']}/cancel")
    assert response.status_code == 202 and response["Location"] == body["url"]
    assert response.json()["detail"] == (
        "Candidate 0 of 9 tried (each one runs every test case) (cancelling)."
    )


def test_applying_the_found_edit_saves_it_with_the_pages_audit_entry(
    script: Client, failing: TestCase, profile: Profile
) -> None:
    search = script.post(_fixes(failing)).json()
    revision = profile.draft_revision
    response = script.post(f"{search['url']}/apply")
    assert response.status_code == 200
    assert response.json() == {
        "detail": "Applied: add the keyword “courier” to shipping.",
        "edit": COURIER,
        "draft_revision": revision + 1,
    }
    assert profile.routes.get(name="shipping").keywords == ["courier"]
    entry = AuditEntry.objects.get(action="route.accept-repair")
    assert entry.username == "editor" and entry.after["case"] == "the courier never came"
    again = script.post(f"{search['url']}/apply")  # the draft is no longer the one searched
    assert again.status_code == 409 and again.json()["detail"] == CHANGED


def test_a_fix_is_a_409_with_the_reason_when_the_draft_or_the_cases_changed_since(
    script: Client, failing: TestCase, profile: Profile
) -> None:
    search = script.post(_fixes(failing)).json()
    TestCase.objects.create(profile=profile, message="courier please", expected_route="human")
    assert script.get(search["url"]).json()["applicable"] is False
    response = script.post(f"{search['url']}/apply")
    assert response.status_code == 409
    assert response.json() == {"detail": CASES_CHANGED, "errors": []}

    search = script.post(_fixes(failing)).json()  # a search of the suite as it is now
    profile.draft_revision += 1  # as every save of the draft does
    profile.save()
    response = script.post(f"{search['url']}/apply")
    assert response.status_code == 409 and response.json()["detail"] == CHANGED
    assert profile.routes.get(name="shipping").keywords == []
    assert not AuditEntry.objects.filter(action="route.accept-repair").exists()


def test_a_search_without_a_fix_cannot_be_applied(script: Client, profile: Profile) -> None:
    passing = _cases(profile)[0]
    search = script.post(_fixes(passing)).json()
    assert search["fix"] is None and "the case already passes" in search["detail"]
    response = script.post(f"{search['url']}/apply")
    assert response.status_code == 409 and response.json()["detail"] == NO_FIX


def test_an_edit_the_pack_refuses_is_a_422_and_saves_nothing(
    script: Client, profile: Profile
) -> None:
    case = TestCase.objects.create(
        profile=profile, message="talk about delivery invoice", expected_route="billing"
    )
    job = found_search(case, "set_margin", "", "7", "0.15")  # a margin out of range
    response = script.post(f"{_fixes(case)}/{job.pk}/apply")
    assert response.status_code == 422 and "near-tie margin" in str(response.json())
    profile.refresh_from_db()
    assert profile.near_tie_margin == 0.15


def _every_call(client: Client, case: TestCase, search: int) -> list[int]:
    one = f"{_fixes(case)}/{search}"
    return [
        client.post(_fixes(case)).status_code,
        client.get(one).status_code,
        client.post(f"{one}/cancel").status_code,
        client.post(f"{one}/apply").status_code,
    ]


def test_a_viewers_token_a_pull_token_and_no_token_are_refused(
    failing: TestCase, viewer: Any, owner: Any, settings: Any
) -> None:
    settings.TASKS = DATABASE
    search = _token_client(owner).post(_fixes(failing)).json()["id"]
    viewers = _token_client(viewer)  # a token that can only read: its user is a viewer
    assert _every_call(viewers, failing, search) == [403] * 4
    assert viewers.post(_fixes(failing)).json()["detail"] == "this needs the editor role"
    pull = create_read_token(failing.profile, "agent", user=owner)[1]
    assert _every_call(Client(HTTP_AUTHORIZATION=f"Bearer {pull}"), failing, search) == [401] * 4
    assert _every_call(Client(), failing, search) == [401] * 4
    assert RepairJob.objects.get().status == "queued"  # one search, not cancelled


def test_a_case_or_a_search_of_another_profile_is_404(
    script: Client, failing: TestCase, profile: Profile
) -> None:
    other = Profile.objects.create(slug="other", name="Other")
    theirs = TestCase.objects.create(profile=other, message="hello", expected_route="")
    response = script.post(f"/api/profiles/shop/test-cases/{theirs.pk}/fixes")
    assert response.status_code == 404 and response.json()["detail"] == "not found"
    search = script.post(_fixes(failing)).json()["id"]
    elsewhere = f"/api/profiles/other/test-cases/{failing.pk}/fixes/{search}"
    assert script.get(elsewhere).status_code == 404
    assert script.post(f"{elsewhere}/apply").status_code == 404
    another_case = f"{_fixes(theirs)}/{search}"  # the search, under a case it is not of
    assert script.post(f"{another_case}/cancel").status_code == 404
    assert not RepairJob.objects.filter(test_case=theirs).exists()


def test_the_fix_endpoints_are_in_the_openapi_schema_with_their_answers(db: Any) -> None:
    schema = Client().get("/api/openapi.json").json()
    base = "/api/profiles/{slug}/test-cases/{case_id}/fixes"
    start = schema["paths"][base]["post"]["responses"]
    assert {"200", "202", "401", "403", "404", "409", "422"} <= set(start)
    assert start["202"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/FixSearchOut"
    }
    assert set(schema["paths"][f"{base}/{{search_id}}"]) == {"get"}
    assert set(schema["paths"][f"{base}/{{search_id}}/cancel"]) == {"post"}
    applied = schema["paths"][f"{base}/{{search_id}}/apply"]["post"]["responses"]["200"]
    assert applied["content"]["application/json"]["schema"]["$ref"].endswith("/FixAppliedOut")
    kinds = schema["components"]["schemas"]["FixEditOut"]["properties"]["kind"]["enum"]
    assert "add_keyword" in kinds and "set_margin" in kinds


@pytest.mark.django_db(transaction=True)
def test_a_worker_runs_the_search_a_script_polls_it_and_applies_the_fix(
    profile: Profile, editor: Any, job_worker: Workers
) -> None:
    failing, script = _cases(profile)[-1], _token_client(editor)
    started = script.post(_fixes(failing))
    assert started.status_code == 202
    url = started["Location"]

    def ended() -> dict[str, Any] | None:
        body: dict[str, Any] = script.get(url).json()
        return None if body["status"] in ("queued", "running") else body

    body = wait_for(ended, what="the search")
    assert isinstance(body, dict) and body["status"] == "done", body
    assert body["fix"] == COURIER and body["applicable"] is True
    assert script.post(f"{url}/apply").status_code == 200
    assert profile.routes.get(name="shipping").keywords == ["courier"]
    assert AuditEntry.objects.filter(action="route.accept-repair").count() == 1


def _silent_running(job: RepairJob, attempts: int = 1) -> None:
    """As a worker killed mid-search leaves a job: running, its heartbeat long silent."""
    from datetime import timedelta

    from django.utils import timezone

    long_ago = timezone.now() - timedelta(hours=1)
    RepairJob.objects.filter(pk=job.pk).update(
        status="running", worker="gone:1", attempts=attempts, heartbeat_at=long_ago
    )


def test_polling_a_search_recovers_that_search_only_and_loads_its_case_once(
    script: Client, profile: Profile, settings: Any
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    settings.TASKS = DATABASE
    cases = _cases(profile)
    mine, other = (script.post(_fixes(c)).json()["id"] for c in (cases[-1], cases[0]))
    for pk in (mine, other):
        _silent_running(RepairJob.objects.get(pk=pk))

    with CaptureQueriesContext(connection) as queries:
        body = script.get(f"{_fixes(cases[-1])}/{mine}").json()
    assert body["status"] == "queued"  # its worker died: given to the queue again
    assert RepairJob.objects.get(pk=other).status == "running"  # a poll sweeps nothing else
    one_case = [q for q in queries if '"studio_testcase"."id" =' in q["sql"]]
    assert len(one_case) == 1, [q["sql"] for q in one_case]

    RepairJob.objects.filter(pk=mine).update(status="done", fix=COURIER, worker="w")
    with CaptureQueriesContext(connection) as queries:
        body = script.get(f"{_fixes(cases[-1])}/{mine}").json()
    assert body["applicable"] is True  # judged on the case this request loaded
    assert len([q for q in queries if '"studio_testcase"."id" =' in q["sql"]]) == 1
    assert not [
        q
        for q in queries
        if q["sql"].startswith(("UPDATE", "INSERT"))
        and "studio_" in q["sql"]
        and "apitoken" not in q["sql"]
    ]
