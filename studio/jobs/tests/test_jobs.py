"""The job queue with a real worker process (`manage.py jobs_worker`), on SQLite and PostgreSQL.

A job is picked up and reports progress, is cancelled, and is recovered after its worker is
killed with SIGKILL: queued again and finished by another worker, or failed with the reason
once it has been tried `STUDIO_JOB_MAX_ATTEMPTS` times. Nothing here runs a job in-process.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from studio.jobs import queue
from studio.jobs.training import scoring
from studio.models import Profile, Route, TestCase, TestRun, TrainedModel
from studio.shared.edits import save_item
from studio.suites.runs import start_run
from tests.job_worker import Workers, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

# Enough cases that a run lasts a few seconds on a busy machine: time to cancel or kill it.
MANY = 30_000


def _many_cases(profile: Profile, n: int = MANY) -> None:
    messages = ["download my invoice", "where is my parcel", "let me talk to someone"]
    TestCase.objects.bulk_create(
        TestCase(profile=profile, message=messages[i % 3], expected_route="billing", order=i)
        for i in range(n)
    )


def _row(run: TestRun) -> TestRun:
    return TestRun.objects.defer("results").get(pk=run.pk)


def _progressing(run: TestRun) -> TestRun | None:
    row = _row(run)
    return row if row.status == "running" and row.done > 0 else None


def test_a_worker_picks_a_run_up_reports_progress_and_stores_the_outcome(
    profile: Profile, job_worker: Workers
) -> None:
    _many_cases(profile, 3_000)
    run = start_run(profile, user=None)
    assert run.status == "queued" and run.task_id  # the request only queued it

    wait_for(lambda: _row(run).status == "running", what="the worker to pick the run up")
    done = wait_for(lambda: _row(run).status == "done", what="the run to finish")
    finished = _row(run)

    assert done and finished.done == finished.total == 3_000
    assert finished.passed == 1_000  # one message in three is billing's
    assert finished.attempts == 1 and finished.worker.endswith(str(job_worker.processes[0].pid))

    # The queue's own row is marked when the task function has returned, just after ours.
    def task_succeeded() -> bool:
        return DBTaskResult.objects.get(id=finished.task_id).status == "SUCCESSFUL"

    assert wait_for(task_succeeded, what="the queue to mark its task done")


def test_a_running_job_is_cancelled_at_its_next_progress(
    profile: Profile, job_worker: Workers, client_for: Any, viewer: Any
) -> None:
    _many_cases(profile)
    run = start_run(profile, user=None)
    wait_for(lambda: _progressing(run), what="the run to make progress")

    response = client_for(viewer).post(
        reverse("job-cancel", args=[profile.slug, "test_run", run.pk])
    )

    assert response.status_code == 302
    assert response["Location"] == reverse("test-run", args=[profile.slug, run.pk])
    wait_for(lambda: _row(run).status == "cancelled", what="the run to stop")
    stopped = _row(run)
    assert 0 < stopped.done < stopped.total and stopped.finished_at is not None
    assert job_worker.processes[0].poll() is None  # the worker lives on for the next job


def test_a_queued_job_is_cancelled_before_any_worker_runs_it(
    profile: Profile, job_worker: Workers
) -> None:
    job_worker.stop_all()  # nobody takes it meanwhile
    run = queue.cancel(start_run(profile, user=None))
    assert run.status == "cancelled"

    job_worker.start()
    wait_for(lambda: DBTaskResult.objects.get(id=run.task_id).status == "SUCCESSFUL")
    assert _row(run).status == "cancelled" and _row(run).attempts == 0  # never ran


def test_a_job_whose_worker_is_killed_is_finished_by_another_worker(
    profile: Profile, job_worker: Workers
) -> None:
    _many_cases(profile)
    run = start_run(profile, user=None)
    first = _row(wait_for(lambda: _progressing(run), what="progress"))  # type: ignore[arg-type]

    job_worker.kill(job_worker.processes[0])
    job_worker.start()

    wait_for(lambda: _row(run).status == "done", timeout=120, what="another worker to finish it")
    finished = _row(run)
    assert finished.attempts == 2 and finished.worker != first.worker
    assert finished.done == finished.total == MANY
    assert DBTaskResult.objects.get(id=first.task_id).status == "FAILED"  # the dead one's task


def test_a_job_killed_on_every_attempt_is_failed_with_the_reason(
    profile: Profile, job_worker: Workers, settings: Any
) -> None:
    settings.STUDIO_JOB_MAX_ATTEMPTS = 1  # this process decides (its page recovers it)
    _many_cases(profile)
    run = start_run(profile, user=None)
    wait_for(lambda: _progressing(run), what="progress")

    job_worker.kill(job_worker.processes[0])
    from studio.jobs.recovery import recover

    wait_for(lambda: recover() or _row(run).status == "failed", what="recovery")

    failed = _row(run)
    assert failed.status == "failed" and "stopped responding 1 times" in failed.error
    assert failed.finished_at is not None


def test_an_example_edit_is_trained_on_the_worker_while_scores_come_from_the_last_model(
    profile: Profile, job_worker: Workers, editor: Any
) -> None:
    first = scoring(profile).pending
    assert first is not None  # queued, not trained in this request
    wait_for(lambda: TrainedModel.objects.get(pk=first.pk).status == "done", what="training")
    profile.refresh_from_db()
    assert scoring(profile).exact

    route = Route.objects.get(profile=profile, name="shipping")
    route.examples = [*route.examples, "my parcel never arrived"]
    save_item(route, user=editor, expected_revision=route.revision)
    profile.refresh_from_db()

    now = scoring(profile)
    assert not now.exact and now.pack is not None and now.source is not None
    assert now.source.pk == first.pk and now.pending is not None
    wait_for(lambda: TrainedModel.objects.get(pk=now.pending.pk).status == "done")
    assert scoring(profile).exact


def test_training_a_large_profile_reports_progress_and_is_cancelled_mid_way(
    owner: Any, job_worker: Workers
) -> None:
    from studio.importing.packs import import_pack
    from studio.shared.tests.test_large_profile import _big_pack

    profile = import_pack(_big_pack(), user=owner, slug="big")
    row = scoring(profile).pending
    assert row is not None

    def training() -> TrainedModel | None:
        now = TrainedModel.objects.defer("source_json", "pack_json").get(pk=row.pk)
        return now if now.status == "running" and now.done > 0 else None

    wait_for(training, timeout=120, what="training to report progress")
    queue.cancel(TrainedModel.objects.get(pk=row.pk))

    wait_for(lambda: TrainedModel.objects.get(pk=row.pk).status == "cancelled", what="a stop")
    stopped = TrainedModel.objects.get(pk=row.pk)
    assert 0 < stopped.done < stopped.total and not stopped.pack_json
