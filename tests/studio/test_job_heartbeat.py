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
from studio.repairs import request_repair
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
    monkeypatch.setattr("studio.repairs.execute_repair", _silent_work(20 * BEAT_S))
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

    monkeypatch.setattr("studio.repairs.execute_repair", work)
    job = request_repair(case, user=editor)  # inline, but in autocommit: as a worker runs it

    assert job.status == "done" and beats and beats[0] > job.started_at
