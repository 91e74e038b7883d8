"""The one task on the queue: run a job of some kind (studio.jobs.kinds) by its row."""

from __future__ import annotations

import logging

from django.tasks import TaskResult, task

from studio.jobs import runner
from studio.jobs.kinds import KINDS

log = logging.getLogger(__name__)


@task
def run_job(kind: str, pk: int) -> None:
    """Run the job; its outcome is stored on its row, not returned (the row is what pages read).

    A worker being stopped mid-job puts the row back in the queue (the runner) and the task
    back on it (here), so that another worker takes the job at once.
    """
    try:
        runner.run(kind, pk)
    except (KeyboardInterrupt, SystemExit):
        _requeue(kind, pk)
        raise


def enqueue(kind_name: str, pk: int) -> TaskResult[[str, int], None]:
    """Put a job's task on the queue at its kind's priority (studio.jobs.kinds)."""
    return run_job.using(priority=KINDS[kind_name].priority).enqueue(kind_name, pk)


def _requeue(kind_name: str, pk: int) -> None:
    try:
        result = enqueue(kind_name, pk)
    except Exception:  # the database went away with the worker: recovery will queue it
        log.exception("%s %s not queued again on shutdown", kind_name, pk)
        return
    KINDS[kind_name].model._default_manager.filter(pk=pk).update(task_id=str(result.id))
