"""`manage.py jobs_worker`: django-tasks-db's `db_worker`, plus recovery of orphaned jobs.

Run one per core on any number of machines sharing the database. Besides taking tasks, each
worker looks for jobs whose worker died (studio.jobs.recovery) every few seconds, so a job
left by a SIGKILLed worker is queued again even when nobody opens its page, and deletes
decision events past their profile's retention period once every STUDIO_EVENT_EXPIRY_S, so
personal data expires without a cron entry (`manage.py expire_events` does the same by hand).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Any

from django.conf import settings
from django.db import connections
from django_tasks_db.management.commands.db_worker import Command as DbWorker

from studio.agents import expire_events
from studio.jobs import recover

log = logging.getLogger(__name__)


class Command(DbWorker):
    help = "Run the studio's background jobs (training, test runs, checkups, publishing)."

    def handle(self, *args: Any, **options: Any) -> None:
        threading.Thread(target=_recover_forever, daemon=True, name="job-recovery").start()
        while True:
            try:
                super().handle(*args, **options)
                return  # --batch or --max-tasks: done
            except Exception:  # e.g. a task row deleted under it: keep serving the queue
                log.exception("the worker loop failed; starting it again in a second")
                connections.close_all()
                time.sleep(1)


def _recover_forever() -> None:
    every = max(0.5, float(settings.STUDIO_JOB_STALE_AFTER_S) / 3)
    stop = threading.Event()
    expired_at = -math.inf
    while True:
        try:
            recover()
            expired_at = expire_if_due(expired_at, time.monotonic())
        except Exception:  # the database may be briefly away; try again at the next round
            log.exception("job recovery failed")
        finally:
            connections.close_all()
        stop.wait(every)


def expire_if_due(last: float, now: float) -> float:
    """Delete expired decision events when STUDIO_EVENT_EXPIRY_S has passed since `last`.

    Returns when expiry last ran. Several workers may each run it: deleting what is already
    gone is harmless, and an hour's delay is well inside any retention period.
    """
    if now - last < settings.STUDIO_EVENT_EXPIRY_S:
        return last
    deleted = expire_events()
    if deleted:
        log.info("deleted %d decision events past their retention period", deleted)
    return now
