"""Starting and cancelling jobs: what a request does, in a few milliseconds."""

from __future__ import annotations

from typing import TypeVar

from django.utils import timezone

from studio.jobs.kinds import kind_of
from studio.jobs.sqlite import retry_locked
from studio.jobs.tasks import enqueue
from studio.models import Job, JobStatus

J = TypeVar("J", bound=Job)


def start(job: J) -> J:
    """Queue a saved job row for a worker, and return it as it now stands.

    In the tests' ImmediateBackend the job runs right here, so the row comes back finished.
    """
    result = enqueue(kind_of(job), job.pk)
    manager = type(job)._default_manager
    retry_locked(lambda: manager.filter(pk=job.pk, task_id="").update(task_id=str(result.id)))
    job.refresh_from_db()
    return job


def cancel(job: J) -> J:
    """Ask a job to stop: a queued one is cancelled at once, a running one at its next progress."""
    manager = type(job)._default_manager
    now = timezone.now()
    retry_locked(
        lambda: manager.filter(pk=job.pk, status=JobStatus.QUEUED).update(
            status=JobStatus.CANCELLED, cancel_requested=True, finished_at=now
        )
    )
    retry_locked(
        lambda: manager.filter(pk=job.pk, status=JobStatus.RUNNING).update(cancel_requested=True)
    )
    job.refresh_from_db()
    return job
