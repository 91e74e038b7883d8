"""Background jobs: everything slow the studio does, off the request path.

Training a profile's model, test-suite runs, overlap checkups and publishing's build run on
Django's Tasks framework with the `django-tasks-db` backend: the queue is a table in the
studio's own database, and `manage.py jobs_worker` processes (one with `make run`, any number
on any machines sharing the database in production) take tasks from it.

Each job also has a row of its own (`studio.models.Job` subclasses), which is what people see:
its status, its progress, its error in words. The modules here:

- `kinds`: the kinds of job and the work each one does (one task runs them all);
- `queue`: start a job, cancel it;
- `limits`: how much analysis one person or profile may queue, and reuse of a waiting twin;
- `runner`: what a worker does with a job: claim it, keep its heartbeat, store the outcome;
- `progress`: the callback work reports through, which is also where a cancel lands;
- `recovery`: a job whose worker died (SIGKILL, a crash, a lost machine) is queued again,
  or failed with the reason after `STUDIO_JOB_MAX_ATTEMPTS` tries; never "running" forever;
- `training`: the model per profile: trained on the queue, used by the playground at once;
- `views`, `urls`: a job's page, its cancel, the playground's model status.

Other areas use what this package re-exports below, and nothing else of it.
"""

from __future__ import annotations

from studio.jobs.kinds import JobFailed
from studio.jobs.limits import QueueFull, make_room, queued_twin
from studio.jobs.notes import training_note
from studio.jobs.progress import EVERY_S, PER_MILLE, Cancelled, Reporter
from studio.jobs.queue import cancel as cancel_job
from studio.jobs.queue import start as start_job
from studio.jobs.recovery import recover, recover_job
from studio.jobs.sqlite import retry_locked
from studio.jobs.training import (
    Scoring,
    exact_pack,
    job_pack,
    model_for,
    request_model_safely,
    scoring,
)

__all__ = [
    "Cancelled",
    "EVERY_S",
    "JobFailed",
    "PER_MILLE",
    "QueueFull",
    "Reporter",
    "Scoring",
    "cancel_job",
    "exact_pack",
    "job_pack",
    "make_room",
    "model_for",
    "queued_twin",
    "recover",
    "recover_job",
    "request_model_safely",
    "retry_locked",
    "scoring",
    "start_job",
    "training_note",
]
