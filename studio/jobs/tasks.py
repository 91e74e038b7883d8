"""The one task on the queue: run a job of some kind (studio.jobs.kinds) by its row."""

from __future__ import annotations

from django.tasks import task

from studio.jobs import runner


@task
def run_job(kind: str, pk: int) -> None:
    """Run the job; its outcome is stored on its row, not returned (the row is what pages read)."""
    runner.run(kind, pk)
