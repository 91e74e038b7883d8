"""Imports on the job queue with a real worker process: the request only stores the upload.

The worker is `manage.py jobs_worker` on the test database (tests/job_worker.py), so the data
a test writes must be committed (`transaction=True`).
"""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from studio.importing.imports import PACK, start_import
from studio.jobs import queue
from studio.models import AuditEntry, ImportJob, Profile
from studio.shared.packs import build_pack_dict
from studio.shared.tokens import create_api_token
from tests.job_worker import Workers, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _pack(profile: Profile, slug: str) -> dict[str, Any]:
    document = build_pack_dict(profile)
    return {**document, "profile": {**document["profile"], "slug": slug}}


def _ended(job: ImportJob) -> ImportJob | None:
    job.refresh_from_db()
    return None if job.is_running else job


def test_the_api_answers_202_and_the_worker_creates_the_profile(
    profile: Profile, owner: Any, job_worker: Workers
) -> None:
    _, secret = create_api_token(owner, "ci")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")

    response = api.post(
        "/api/imports", json.dumps(_pack(profile, "copied")), content_type="application/json"
    )

    assert response.status_code == 202, response.content
    job = ImportJob.objects.get()
    assert response.json()["url"] == f"/profiles/import/jobs/{job.pk}/"
    ended = wait_for(lambda: _ended(job), what="the import")
    assert isinstance(ended, ImportJob) and ended.status == "done", ended.error
    copied = Profile.objects.get(slug="copied")
    assert ended.profile_id == copied.pk and bytes(ended.upload) == b""
    assert copied.routes.count() == profile.routes.count()
    assert AuditEntry.objects.filter(profile=copied, action="profile.import").exists()


def test_the_job_page_shows_the_problems_of_a_refused_pack(
    profile: Profile, editor: Any, client_for: Any, job_worker: Workers
) -> None:
    broken = _pack(profile, "broken")
    broken["routes"][0]["name"] = "Not A Name"
    job = start_import(PACK, json.dumps(broken).encode(), user=editor)
    assert job.status == "queued"  # the request did not parse it

    ended = wait_for(lambda: _ended(job), what="the import")

    assert isinstance(ended, ImportJob) and ended.status == "failed"
    assert ended.refusal == "pack" and ended.problems[0][0] == "routes[0].name"
    page = client_for(editor).get(f"/profiles/import/jobs/{job.pk}/").content.decode()
    assert "Nothing was imported" in page
    assert (
        "route 1 → name: an identifier uses only the letters a to z" in page
    )  # as the upload page says it
    assert not Profile.objects.filter(slug="broken").exists()


def test_simultaneous_imports_of_one_slug_create_one_profile_and_refuse_the_rest(
    profile: Profile, owner: Any, job_worker: Workers
) -> None:
    job_worker.start()  # two workers, so that two imports can race
    data = json.dumps(_pack(profile, "twin")).encode()
    jobs: list[ImportJob] = []

    def send() -> None:
        try:
            jobs.append(start_import(PACK, data, user=owner))
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    ended = [wait_for(lambda j=j: _ended(j), what="the imports") for j in jobs]
    statuses = sorted(j.status for j in ended)  # type: ignore[attr-defined]
    assert statuses == ["done", "failed", "failed", "failed"]
    refused = [j for j in ended if j.status == "failed"]  # type: ignore[attr-defined]
    assert {j.refusal for j in refused} == {"conflict"}, [(j.refusal, j.error) for j in refused]
    assert all("a profile 'twin' exists" in j.error for j in refused)
    assert Profile.objects.filter(slug="twin").count() == 1


def test_a_queued_import_refuses_to_replace_a_draft_edited_meanwhile(
    profile: Profile, owner: Any, client_for: Any, job_worker: Workers
) -> None:
    job_worker.stop_all()  # the import waits in the queue while someone edits the draft
    _, secret = create_api_token(owner, "ci")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    queued = api.post(
        "/api/profiles/shop/import",
        json.dumps(_pack(profile, "shop")),
        content_type="application/json",
    )
    assert queued.status_code == 202, queued.content
    billing = profile.routes.get(name="billing")
    edit = {"revision": billing.revision, "description": "edited while the import waited"}
    answer = api.patch(
        f"/api/profiles/shop/routes/{billing.pk}", json.dumps(edit), content_type="application/json"
    )
    assert answer.status_code == 200, answer.content

    job_worker.start()

    ended = wait_for(lambda: _ended(ImportJob.objects.get()), what="the import")
    assert isinstance(ended, ImportJob) and ended.status == "failed"
    assert ended.refusal == "conflict"
    assert "after this import was queued" in ended.error and "owner" in ended.error
    billing.refresh_from_db()
    assert billing.description == "edited while the import waited"  # the edit is kept
    page = client_for(owner).get(f"/profiles/import/jobs/{ended.pk}/").content.decode()
    assert "after this import was queued" in page


def test_a_queued_import_is_cancelled_and_its_upload_let_go(
    profile: Profile, editor: Any, client_for: Any, job_worker: Workers
) -> None:
    job_worker.stop_all()  # nobody takes it meanwhile
    job = start_import(PACK, json.dumps(_pack(profile, "never")).encode(), user=editor)

    response = client_for(editor).post(f"/profiles/import/jobs/{job.pk}/cancel/")

    assert response.status_code == 302
    job.refresh_from_db()
    assert job.status == "cancelled" and bytes(job.upload) == b""
    job_worker.start()
    wait_for(lambda: not ImportJob.objects.filter(pk=job.pk, status="queued").exists())
    assert not Profile.objects.filter(slug="never").exists()


def test_an_import_whose_worker_died_is_run_again_by_another(
    profile: Profile, owner: Any, job_worker: Workers
) -> None:
    job_worker.stop_all()
    job = start_import(PACK, json.dumps(_pack(profile, "rescued")).encode(), user=owner)
    # As a worker killed with SIGKILL mid-import leaves it: running, its heartbeat silent.
    long_ago = timezone.now() - timedelta(minutes=5)
    ImportJob.objects.filter(pk=job.pk).update(
        status="running", worker="gone:1", attempts=1, heartbeat_at=long_ago
    )

    job_worker.start()  # its recovery queues the job again

    ended = wait_for(lambda: _ended(job), what="the recovered import")
    assert isinstance(ended, ImportJob) and ended.status == "done", ended.error
    assert ended.attempts == 2 and Profile.objects.filter(slug="rescued").count() == 1


def test_an_import_that_created_its_profile_before_its_worker_died_is_not_run_twice(
    profile: Profile, owner: Any, job_worker: Workers
) -> None:
    job_worker.stop_all()
    job = start_import(PACK, json.dumps(_pack(profile, "once")).encode(), user=owner)
    made = Profile.objects.create(slug="once", name="made before the worker died")
    long_ago = timezone.now() - timedelta(minutes=5)
    ImportJob.objects.filter(pk=job.pk).update(
        status="running", worker="gone:1", attempts=1, heartbeat_at=long_ago, profile=made
    )

    job_worker.start()

    ended = wait_for(lambda: _ended(job), what="the recovered import")
    assert isinstance(ended, ImportJob) and ended.status == "done"
    assert ended.profile_id == made.pk and Profile.objects.filter(slug="once").count() == 1


def test_cancelling_a_finished_import_changes_nothing(
    profile: Profile, owner: Any, job_worker: Workers
) -> None:
    job = start_import(PACK, json.dumps(_pack(profile, "kept")).encode(), user=owner)
    wait_for(lambda: _ended(job), what="the import")
    assert queue.cancel(job).status == "done"
    assert Profile.objects.filter(slug="kept").exists()


def _large_pack(routes: int = 2000, examples: int = 25) -> bytes:
    """A pack that takes a worker a few seconds to check and store: time to kill it."""
    document = {
        "format": "route-pack",
        "format_version": 1,
        "profile": {"slug": "large", "name": "Large"},
        "routes": [
            {
                "name": f"route_{i}",
                "description": f"things about w{i}a and w{i}b",
                "examples": [f"help with w{i}x{j % 7} number {j}" for j in range(examples)],
            }
            for i in range(routes)
        ],
    }
    return json.dumps(document).encode()


def test_an_import_whose_worker_is_killed_mid_way_is_finished_by_another(
    owner: Any, job_worker: Workers
) -> None:
    job = start_import(PACK, _large_pack(), user=owner)
    started = wait_for(
        lambda: (
            ImportJob.objects.filter(pk=job.pk, status="running", done__gte=1)
            .defer("upload")
            .first()
        ),
        what="the import to start",
    )

    job_worker.kill(job_worker.processes[0])  # SIGKILL, mid-import
    job_worker.start()

    ended = wait_for(lambda: _ended(job), timeout=120, what="another worker to finish it")
    assert isinstance(ended, ImportJob) and ended.status == "done", ended.error
    assert ended.attempts == 2 and ended.worker != started.worker  # type: ignore[attr-defined]
    large = Profile.objects.get(slug="large")
    assert large.routes.count() == 2000  # the first attempt left nothing half made
