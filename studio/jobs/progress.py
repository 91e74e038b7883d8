"""The progress callback a job's work reports through; a cancel is noticed there.

Every write is conditional on the job still being this worker's and not cancelled, so the
same query that records progress tells the work to stop: `Cancelled` unwinds it.
"""

from __future__ import annotations

import logging
import time

from django.db import OperationalError
from django.utils import timezone

from studio.jobs.sqlite import retry_locked
from studio.models import Job, JobStatus

log = logging.getLogger(__name__)

EVERY_S = 0.2
PER_MILLE = 1000  # a job that reports a fraction stores it as done / 1000


class Cancelled(Exception):
    """The job was cancelled (or taken from this worker) while it ran: stop the work."""


class Reporter:
    """Writes a job's progress a few times a second, and raises `Cancelled` when it is."""

    def __init__(self, model: type[Job], pk: int, worker: str) -> None:
        self.model, self.pk, self.worker = model, pk, worker
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        """routing_core's `Progress` signature (evaluate, overlap_checkup)."""
        now = time.monotonic()
        if done != total and now - self._last < EVERY_S:
            return
        self._last = now
        mine = self.model._default_manager.filter(
            pk=self.pk, status=JobStatus.RUNNING, worker=self.worker, cancel_requested=False
        )
        try:
            written = retry_locked(
                lambda: mine.update(done=done, total=total, heartbeat_at=timezone.now())
            )
        except OperationalError:  # informational: a write that keeps meeting a lock is skipped
            log.warning(
                "progress of %s %s not written: the database stayed locked", self.model, self.pk
            )
            return
        if not written:
            raise Cancelled

    def fraction(self, value: float) -> None:
        """A `progress(fraction)` callback (training), stored as per mille."""
        self(min(PER_MILLE, max(0, int(value * PER_MILLE))), PER_MILLE)
