"""SQLite lets one writer in at a time: writes from a worker and from requests wait their turn."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from django.db import OperationalError

T = TypeVar("T")


def retry_locked(write: Callable[[], T], *, attempts: int = 60, pause_s: float = 0.05) -> T:
    """Run a write, waiting out a busy SQLite database.

    A worker writes progress while requests read and write: a write that meets a lock tries
    again instead of losing a job's outcome. Each try itself waits up to sqlite3's busy
    timeout (5 s) before SQLite says "locked", so a lock that is never released (a writer's
    open transaction) costs `attempts` × 5 s, five minutes: never call this from a second
    connection while the caller's own transaction holds the lock (studio.jobs.runner.Heartbeat).
    PostgreSQL never reports this error, so there the write simply runs once.
    """
    for attempt in range(attempts):
        try:
            return write()
        except OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(pause_s)
    raise AssertionError("unreachable")
