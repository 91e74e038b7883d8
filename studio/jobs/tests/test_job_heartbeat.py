"""A job's heartbeat: written while a worker runs it, and never a stall for a job run inline.

A job run inline (ImmediateBackend) inside the caller's transaction used to stall ~300 s at
its end on SQLite once it outlasted the heartbeat interval: the heartbeat thread's own
connection waited on the write lock held by the caller's transaction (5 s busy timeout × 60
tries of `retry_locked`), and the job's end joined that thread (docs/reliability.md).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from studio.models import RepairJob, TestCase
from studio.suites.repairs import request_repair
from tests.job_worker import wait_for

BEAT_S = 0.05


@pytest.fixture
def case(profile: Any) -> TestCase:
    return TestCase.objects.create(profile=profile, message="the courier", expected_route="billing")


def _silent_work(seconds: float) -> Any:
    """Work that says nothing for `seconds` (a model being learned, a slow suite)."""

    def work(job: RepairJob, progress: Any) -> dict[str, Any]:
        time.sleep(seconds)
        return {"reason": "slept"}

    return work


@pytest.mark.timeout(60)  # the stall was 300 s: a regression fails here instead of hanging
def test_an_inline_job_that_outlasts_its_heartbeat_ends_at_once_inside_the_callers_transaction(
    case: TestCase, editor: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.STUDIO_JOB_HEARTBEAT_S = BEAT_S
    monkeypatch.setattr("studio.suites.repairs.execute_repair", _silent_work(20 * BEAT_S))
    TestCase.objects.create(profile=case.profile, message="a write: the transaction holds the lock")

    job = request_repair(case, user=editor)  # runs inline, in this test's transaction

    assert job.status == "done" and job.reason == "slept"


@pytest.mark.timeout(60)
@pytest.mark.django_db(transaction=True)
def test_a_job_run_outside_a_transaction_still_beats_while_its_work_is_silent(
    case: TestCase, editor: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.STUDIO_JOB_HEARTBEAT_S = BEAT_S
    beats: list[object] = []

    def work(job: RepairJob, progress: Any) -> dict[str, Any]:
        claimed = job.heartbeat_at  # written by the claim
        row = RepairJob.objects.filter(pk=job.pk)
        wait_for(lambda: row.exclude(heartbeat_at=claimed).exists(), what="a heartbeat")
        beats.append(row.get().heartbeat_at)
        return {}

    monkeypatch.setattr("studio.suites.repairs.execute_repair", work)
    job = request_repair(case, user=editor)  # inline, but in autocommit: as a worker runs it

    assert job.status == "done" and beats and beats[0] > job.started_at


def test_recovery_never_takes_a_job_this_process_is_running_however_silent_it_looks(
    case: TestCase, editor: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker starved of CPU past STALE_AFTER writes no beat; when it wakes, its own
    recovery thread may look before its heartbeat thread writes. It must not take the job
    (it ran twice, or failed "stopped responding" at its last attempt)."""
    from datetime import timedelta

    from django.utils import timezone

    from studio.jobs.recovery import recover, recover_job

    settings.STUDIO_JOB_MAX_ATTEMPTS = 1  # a recovery would fail it: plain to see
    seen: list[object] = []

    def work(job: RepairJob, progress: Any) -> dict[str, Any]:
        long_ago = timezone.now() - timedelta(hours=1)
        RepairJob.objects.filter(pk=job.pk).update(heartbeat_at=long_ago)  # silent as a corpse
        seen.append(recover())
        seen.append(recover_job(RepairJob.objects.get(pk=job.pk)).status)
        return {"reason": "woke up"}

    monkeypatch.setattr("studio.suites.repairs.execute_repair", work)

    job = request_repair(case, user=editor)  # runs inline: this process is its worker

    assert seen == [0, "running"]
    assert job.status == "done" and job.attempts == 1 and job.reason == "woke up"
