"""'Find a fix' with a real worker process: the page's button only queues the search, the page shows it.

The worker is `manage.py jobs_worker` on the test database (tests/job_worker.py), so the data
a test writes must be committed (`transaction=True`).
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from studio.models import AuditEntry, Profile, RepairJob, TestCase
from studio.suites.repairs import _searches_of_now, request_repair
from tests.job_worker import Workers, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _failing(profile: Profile) -> TestCase:
    """The shop's passing cases, and one that fails until "courier" is a shipping keyword."""
    rows = [("why was I charged twice", "billing"), ("where is my parcel", "shipping")]
    rows += [("let me talk to someone", "human"), ("the courier never came", "shipping")]
    made = [
        TestCase.objects.create(profile=profile, message=m, expected_route=r, order=i)
        for i, (m, r) in enumerate(rows)
    ]
    return made[-1]


def _ended(job: RepairJob) -> RepairJob | None:
    job.refresh_from_db()
    return None if job.is_running else job


def test_the_page_answers_at_once_and_the_worker_finds_the_fix_which_is_then_applied(
    profile: Profile, editor: Any, client_for: Any, job_worker: Workers
) -> None:
    failing, client = _failing(profile), client_for(editor)
    url = f"/profiles/{profile.slug}/tests/{failing.pk}/fix/"

    assert client.get(url).status_code == 200 and not RepairJob.objects.exists()
    first = client.post(f"{url}search/", follow=True)  # the "Find a fix" button
    job = RepairJob.objects.get(test_case=failing)
    assert first.status_code == 200 and 'id="fix-job"' in first.content.decode()

    ended = wait_for(lambda: _ended(job), what="the search")
    assert isinstance(ended, RepairJob) and ended.status == "done", ended.error
    page = client.get(f"{url}?job={job.pk}", HTTP_HX_REQUEST="true").content.decode()
    assert "Add the keyword “courier” to shipping." in page and "hx-trigger" not in page

    response = client.post(url, {"job": job.pk})
    assert response.status_code == 302
    assert profile.routes.get(name="shipping").keywords == ["courier"]
    assert AuditEntry.objects.filter(action="route.accept-repair").count() == 1


def test_a_search_whose_worker_died_is_run_again_by_another(
    profile: Profile, editor: Any, job_worker: Workers
) -> None:
    job_worker.stop_all()
    job = request_repair(_failing(profile), user=editor)
    # As a worker killed with SIGKILL mid-search leaves it: running, its heartbeat silent.
    long_ago = timezone.now() - timedelta(minutes=5)
    RepairJob.objects.filter(pk=job.pk).update(
        status="running", worker="gone:1", attempts=1, heartbeat_at=long_ago, done=2, total=9
    )

    job_worker.start()  # its recovery queues the job again

    ended = wait_for(lambda: _ended(job), what="the recovered search")
    assert isinstance(ended, RepairJob) and ended.status == "done", ended.error
    assert ended.attempts == 2 and ended.fix == {
        "kind": "add_keyword",
        "route": "shipping",
        "text": "courier",
        "source": None,
    }


def _slow_suite(profile: Profile, n: int = 1500) -> TestCase:
    """A suite big enough that each candidate takes a worker a while, and a case with many
    candidates none of which fixes it (its twin wants the opposite): time to kill the worker.

    The case is a conversation's turn, so each candidate runs the whole suite (a lone turn's
    candidate that does not fix it is judged on that turn alone)."""
    examples = [(e, r.name) for r in profile.routes.all() for e in r.examples]
    TestCase.objects.bulk_create(
        TestCase(
            profile=profile,
            message=examples[i % len(examples)][0],
            expected_route=examples[i % len(examples)][1],
            order=i,
        )
        for i in range(n)
    )
    text = " ".join(f"word{k}" for k in range(40))
    TestCase.objects.create(
        profile=profile, message=text, expected_route="", order=n, expected_tools=[]
    )
    return TestCase.objects.create(
        profile=profile,
        message=text,
        expected_route="billing",
        order=n + 1,
        expected_triage="action",
        expected_tools=["refund_order"],
        conversation="c1",
        turn=1,
    )


def test_a_search_whose_worker_is_killed_mid_way_is_finished_by_another(
    profile: Profile, editor: Any, job_worker: Workers
) -> None:
    job = request_repair(_slow_suite(profile), user=editor)
    started = wait_for(
        lambda: RepairJob.objects.filter(pk=job.pk, status="running", done__gte=1).first(),
        what="the search to try a candidate",
    )

    job_worker.kill(job_worker.processes[0])  # SIGKILL, mid-search
    job_worker.start()

    ended = wait_for(lambda: _ended(job), timeout=180, what="another worker to finish it")
    assert isinstance(ended, RepairJob) and ended.status == "done", ended.error
    assert ended.attempts == 2 and ended.worker != started.worker  # type: ignore[attr-defined]
    assert ended.fix is None and ended.done == ended.total == len(ended.tried) > 1


def _clashing(test_case: TestCase) -> RepairJob:
    """A search of the case's draft and suite as they are now, made directly (not reused)."""
    _, fingerprint = _searches_of_now(test_case)
    return RepairJob(
        profile=test_case.profile,
        test_case=test_case,
        draft_revision=test_case.profile.draft_revision,
        suite_fingerprint=fingerprint,
    )


def test_the_database_holds_one_queued_search_per_case_draft_and_suite(profile: Profile) -> None:
    failing = _failing(profile)
    first = _clashing(failing)
    first.save()
    with pytest.raises(IntegrityError), transaction.atomic():
        _clashing(failing).save()

    RepairJob.objects.filter(pk=first.pk).update(status="cancelled")
    _clashing(failing).save()  # after the first ended, "Search again" may queue another
    assert RepairJob.objects.filter(test_case=failing).count() == 2


@pytest.mark.postgres_only  # needs a second transaction that waits on the first's row lock
def test_two_presses_at_once_share_one_search(profile: Profile, editor: Any) -> None:
    """The second request's reuse check runs before the first commits; it gets the first's job."""
    failing = _failing(profile)
    inserted, made = threading.Event(), []

    def press_first() -> None:  # the other request: inserted, not yet committed
        try:
            with transaction.atomic():
                made.append(_clashing(failing))
                made[0].save()
                inserted.set()
                time.sleep(1.0)  # the second request reads (nothing) and waits on the index
        finally:
            connection.close()

    other = threading.Thread(target=press_first)
    other.start()
    assert inserted.wait(10)
    job = request_repair(failing, user=editor)
    other.join(10)

    assert job.pk == made[0].pk
    assert RepairJob.objects.filter(test_case=failing).count() == 1
