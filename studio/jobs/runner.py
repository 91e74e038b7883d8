"""What a worker does with one job: claim its row, keep its heartbeat, store how it ended.

The claim is a conditional UPDATE (queued → running, this worker's name), so a job queued twice,
or cancelled before a worker got to it, runs at most once. While the work runs a thread writes
the row's heartbeat every `STUDIO_JOB_HEARTBEAT_S`; recovery treats a silent row as orphaned.
A job run inline inside its caller's transaction (the tests' ImmediateBackend) has no heartbeat
thread: see `Heartbeat`.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from types import TracebackType
from typing import Any

from django.conf import settings
from django.db import connections, router
from django.db.models import F
from django.utils import timezone

from studio.jobs.kinds import KINDS, JobFailed
from studio.jobs.progress import Cancelled, Reporter
from studio.jobs.sqlite import retry_locked
from studio.models import Job, JobStatus

log = logging.getLogger(__name__)

# The jobs this process is running now, as (model, pk): alive whatever their heartbeat says.
# A worker process starved of CPU for STALE_AFTER (or stuck in a C call that holds the GIL)
# writes no beat, and neither does its recovery thread run meanwhile; when both wake, the
# recovery may look first and take the worker's own live job from it, which then ran twice
# (or failed "stopped responding" at its last attempt). Recovery skips these.
_RUNNING_HERE: set[tuple[type[Job], int]] = set()
_RUNNING_LOCK = threading.Lock()


def running_here() -> frozenset[tuple[type[Job], int]]:
    """The jobs this process is running now (recovery never takes one of them)."""
    with _RUNNING_LOCK:
        return frozenset(_RUNNING_HERE)


def worker_name() -> str:
    """host:pid, unique across the worker pool (and a clue in the admin for who ran what)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def run(kind_name: str, pk: int) -> None:
    """Run one job to its end: done, failed with a reason, cancelled, or queued again on shutdown."""
    kind = KINDS[kind_name]
    manager = kind.model._default_manager
    me = worker_name()
    claimed = retry_locked(
        lambda: manager.filter(pk=pk, status=JobStatus.QUEUED).update(
            status=JobStatus.RUNNING,
            worker=me,
            attempts=F("attempts") + 1,
            heartbeat_at=timezone.now(),
            error="",
        )
    )
    if not claimed:  # cancelled, already run, or taken by another worker
        log.info("%s %s not run: no longer queued", kind_name, pk)
        return
    job = manager.get(pk=pk)
    fields: dict[str, Any]
    with Heartbeat(kind.model, pk, me):
        try:
            fields = {"status": JobStatus.DONE, **kind.work(job, Reporter(kind.model, pk, me))}
        except Cancelled:
            fields = {"status": JobStatus.CANCELLED}
        except JobFailed as exc:
            fields = {"status": JobStatus.FAILED, "error": str(exc)}
        except (KeyboardInterrupt, SystemExit):  # the worker is being stopped: another takes it
            _store(kind.model, pk, me, status=JobStatus.QUEUED, worker="", heartbeat_at=None)
            raise  # the task queues the job again (studio.jobs.tasks)
        except Exception as exc:  # a job must end, whatever happened; the log has the trace
            log.exception("%s %s failed", kind_name, pk)
            fields = {"status": JobStatus.FAILED, "error": f"{kind.failed}: {exc}"}
    if fields["status"] == JobStatus.CANCELLED and not _cancel_requested(kind.model, pk):
        return  # not cancelled: recovery gave the job to another worker meanwhile
    _store(kind.model, pk, me, finished_at=timezone.now(), **fields)


def _store(model: type[Job], pk: int, me: str, **fields: Any) -> None:
    """Write the outcome, only while the row is still this worker's."""
    mine = model._default_manager.filter(pk=pk, status=JobStatus.RUNNING, worker=me)
    retry_locked(lambda: mine.update(updated_at=timezone.now(), **fields))


def _cancel_requested(model: type[Job], pk: int) -> bool:
    return model._default_manager.filter(pk=pk, cancel_requested=True).exists()


class Heartbeat:
    """A thread that writes the job's heartbeat while its work runs (even work that is silent).

    The thread writes through its own connection (Django's are per thread). When the job runs
    inside a transaction of the caller's (an inline job: ImmediateBackend in a test, or any
    caller under `transaction.atomic`), that is wrong twice over: the claim and every write of
    the job are uncommitted, so no other connection (recovery included) can see the job
    running, and on SQLite the transaction holds the database's write lock, which the beat's
    UPDATE waits for (sqlite3's 5 s busy timeout per try) until the job's end joins the
    thread. With `retry_locked`'s 60 tries that stalled every such job ~300 s at its end. So
    no thread is started then; a worker (`jobs_worker`) runs each job in autocommit, and beats.
    Each beat is one try: the next beat is the retry, and the end of the job never waits for
    more than one write.
    """

    def __init__(self, model: type[Job], pk: int, me: str) -> None:
        self.model, self.pk, self.me = model, pk, me
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True, name=f"heartbeat-{pk}")

    @property
    def is_needed(self) -> bool:
        """False inside the caller's transaction: nobody else could see a beat (see above)."""
        return not connections[router.db_for_write(self.model)].in_atomic_block

    def __enter__(self) -> Heartbeat:
        with _RUNNING_LOCK:
            _RUNNING_HERE.add((self.model, self.pk))
        if self.is_needed:
            self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        with _RUNNING_LOCK:
            _RUNNING_HERE.discard((self.model, self.pk))

    def _beat(self) -> None:
        every = float(settings.STUDIO_JOB_HEARTBEAT_S)
        mine = self.model._default_manager.filter(
            pk=self.pk, status=JobStatus.RUNNING, worker=self.me
        )
        try:
            while not self._stop.wait(every):
                try:
                    mine.update(heartbeat_at=timezone.now())
                except Exception:  # a missed beat is survivable; the next one may pass
                    log.warning("heartbeat of %s %s not written", self.model, self.pk)
        finally:
            connections.close_all()  # this thread's connections only
