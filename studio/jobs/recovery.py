"""Jobs whose worker died: queued again, or failed with the reason; never "running" forever.

A worker killed with SIGKILL (or the machine under it lost) cannot say anything; its jobs'
heartbeats simply stop. Any worker, and any page that shows jobs, calls `recover()`: a running
job silent for `STUDIO_JOB_STALE_AFTER_S` is given to the queue again, until it has been tried
`STUDIO_JOB_MAX_ATTEMPTS` times, then marked failed with what happened.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from studio.jobs.kinds import KINDS
from studio.jobs.sqlite import retry_locked
from studio.models import JobStatus

log = logging.getLogger(__name__)


def recover() -> int:
    """Queue again (or fail) every job whose worker stopped beating; the number recovered."""
    from studio.jobs.tasks import run_job

    now = timezone.now()
    cutoff = now - timedelta(seconds=float(settings.STUDIO_JOB_STALE_AFTER_S))
    max_attempts = int(settings.STUDIO_JOB_MAX_ATTEMPTS)
    silent = Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, updated_at__lt=cutoff)
    recovered = 0
    for name, kind in KINDS.items():
        manager = kind.model._default_manager
        running = manager.filter(silent, status=JobStatus.RUNNING)
        for job in running.only("pk", "worker", "attempts", "task_id"):
            same = manager.filter(pk=job.pk, status=JobStatus.RUNNING, worker=job.worker)
            if job.attempts >= max_attempts:
                error = (
                    f"Stopped: the worker running it ({job.worker}) stopped responding "
                    f"{job.attempts} times (killed or crashed). Start it again."
                )
                changed = retry_locked(
                    lambda s=same, e=error: s.update(  # type: ignore[misc]
                        status=JobStatus.FAILED, error=e, finished_at=now
                    )
                )
            else:
                changed = retry_locked(
                    lambda s=same: s.update(  # type: ignore[misc]
                        status=JobStatus.QUEUED, worker="", heartbeat_at=None, updated_at=now
                    )
                )
                if changed:
                    result = run_job.enqueue(name, job.pk)
                    manager.filter(pk=job.pk).update(task_id=str(result.id))
            if changed:
                _close_task(job.task_id, now)
                log.warning("%s %s recovered from worker %s", name, job.pk, job.worker)
                recovered += changed
    return recovered


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
