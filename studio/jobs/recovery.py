"""Jobs whose worker died: queued again, or failed with the reason; never "running" forever.

A worker killed with SIGKILL (or the machine under it lost) cannot say anything; its jobs'
heartbeats simply stop. Every worker calls `recover()` every few seconds, and a page that
shows one job calls `recover_job` for that job alone: a running
job silent for `STUDIO_JOB_STALE_AFTER_S` is given to the queue again, until it has been tried
`STUDIO_JOB_MAX_ATTEMPTS` times, then marked failed with what happened.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import TypeVar

from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from studio.jobs.kinds import KINDS, kind_of
from studio.jobs.runner import running_here
from studio.jobs.sqlite import retry_locked
from studio.jobs.tasks import enqueue
from studio.models import Job, JobStatus

log = logging.getLogger(__name__)
J = TypeVar("J", bound=Job)


def recover() -> int:
    """Queue again (or fail) every job whose worker stopped beating; the number recovered."""
    now = timezone.now()
    silent = _silent(now)
    recovered = 0
    for name, kind in KINDS.items():
        running = kind.model._default_manager.filter(silent, status=JobStatus.RUNNING)
        for job in running.only("pk", "worker", "attempts", "task_id"):
            recovered += _recover(name, job, silent, now)
    return recovered


def recover_job(job: J) -> J:
    """`recover` for the one job a page or a poll is about to show, as it is now.

    Only its own row, and a write only when it is running with its heartbeat silent: a poll
    of a live search reads, it does not sweep every job of every kind. Other jobs are the
    workers' (each recovers all of them every few seconds) and the job pages'.
    """
    now = timezone.now()
    last = job.heartbeat_at or job.updated_at
    # `_silent` in Python: a job that is not silent needs no query at all
    if job.status != JobStatus.RUNNING or last is None or last >= _cutoff(now):
        return job
    if _recover(kind_of(job), job, _silent(now), now):
        job.refresh_from_db()
    return job


def _cutoff(now: datetime) -> datetime:
    return now - timedelta(seconds=float(settings.STUDIO_JOB_STALE_AFTER_S))


def _silent(now: datetime) -> Q:
    """Running jobs whose worker has not beaten within STUDIO_JOB_STALE_AFTER_S."""
    cutoff = _cutoff(now)
    return Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, updated_at__lt=cutoff)


def _recover(name: str, job: Job, silent: Q, now: datetime) -> int:
    """Queue `job` again, or fail it after STUDIO_JOB_MAX_ATTEMPTS; 1 if this call did it
    (the update is conditional, so a worker that beats meanwhile, or another recoverer, wins).
    A job this process runs is alive, if slow (starved past the limit): never taken."""
    if (type(job), job.pk) in running_here():
        return 0

    manager = type(job)._default_manager
    same = manager.filter(silent, pk=job.pk, status=JobStatus.RUNNING, worker=job.worker)
    if job.attempts >= int(settings.STUDIO_JOB_MAX_ATTEMPTS):
        error = (
            f"Stopped: the worker running it ({job.worker}) stopped responding "
            f"{job.attempts} times (killed or crashed). Start it again."
        )
        changed = retry_locked(
            lambda: same.update(status=JobStatus.FAILED, error=error, finished_at=now)
        )
    else:
        changed = retry_locked(
            lambda: same.update(
                status=JobStatus.QUEUED, worker="", heartbeat_at=None, updated_at=now
            )
        )
        if changed:
            result = enqueue(name, job.pk)
            manager.filter(pk=job.pk).update(task_id=str(result.id))
    if changed:
        _close_task(job.task_id, now)
        log.warning("%s %s recovered from worker %s", name, job.pk, job.worker)
    return int(changed)


def _close_task(task_id: str, now: object) -> None:
    """Mark the dead worker's task row failed too, so the queue's own table tells the truth."""
    if not task_id:
        return
    try:
        DBTaskResult.objects.filter(id=task_id, status="RUNNING").update(
            status="FAILED", finished_at=now
        )
    except Exception:  # an id the backend does not know (another backend, tests): nothing to do
        log.debug("task %s not closed", task_id)
