"""A real job worker process (`manage.py jobs_worker`) on the test database, for tests that need one.

Tests that do not ask for it run their jobs inline (Django's ImmediateBackend, see
`immediate_jobs`), so that view tests stay fast and keep working inside a transaction. Tests
that use `job_worker` need committed data (`django_db(transaction=True)`): the worker is another
process and sees only what is committed, on SQLite (a file, see settings) and PostgreSQL alike.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[1]
IMMEDIATE = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}
DATABASE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
# Fast enough for a test to see a killed worker's job recovered within a few seconds.
HEARTBEAT_S = 0.3
STALE_AFTER_S = 2.0


def database_url() -> str:
    """The test database as a DATABASE_URL another process can open."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


class Workers:
    """Starts worker processes on the test database; stops (or kills) them."""

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen[bytes]] = []
        self.logs: list[Path] = []

    def start(self) -> subprocess.Popen[bytes]:
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "SECRET_KEY": settings.SECRET_KEY,
            "DEBUG": "False",
            "SECURE_SSL_REDIRECT": "False",
            "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
            "LOG_LEVEL": "WARNING",
            "STUDIO_JOB_HEARTBEAT_S": str(HEARTBEAT_S),
            "STUDIO_JOB_STALE_AFTER_S": str(STALE_AFTER_S),
        }
        env.pop("TEST_DATABASE_NAME", None)
        command = [sys.executable, "manage.py", "jobs_worker", "--interval", "0.1"]
        command += ["--no-startup-delay", "--no-reload", "--verbosity", "0"]
        with tempfile.NamedTemporaryFile(prefix="jobs-", suffix=".log", delete=False) as log:
            self.logs.append(Path(log.name))  # the child keeps its own descriptor
            process = subprocess.Popen(command, cwd=ROOT, env=env, stderr=log, stdout=log)
        self.processes.append(process)
        return process

    def output(self) -> str:
        """What the workers wrote (tracebacks of jobs that failed unexpectedly)."""
        return "\n".join(path.read_text(errors="replace") for path in self.logs if path.exists())

    def kill(self, process: subprocess.Popen[bytes]) -> None:
        """SIGKILL: the worker gets no chance to say anything."""
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def remove_logs(self) -> None:
        for path in self.logs:
            path.unlink(missing_ok=True)


@pytest.fixture
def job_worker(settings: pytest.FixtureRequest, transactional_db: None) -> Iterator[Workers]:
    """A running worker process (more can be started), with the queue on the database."""
    settings.TASKS = DATABASE  # type: ignore[attr-defined]
    settings.STUDIO_JOB_HEARTBEAT_S = HEARTBEAT_S  # type: ignore[attr-defined]
    settings.STUDIO_JOB_STALE_AFTER_S = STALE_AFTER_S  # type: ignore[attr-defined]
    workers = Workers()
    workers.start()
    try:
        yield workers
    finally:
        workers.stop_all()
        print(workers.output())  # shown by pytest when the test failed
        workers.remove_logs()


def wait_for(
    condition: Callable[[], object], timeout: float = 60, what: str = "it", every: float = 0.05
) -> object:
    """Poll until `condition()` is truthy (a worker is another process: there is no event)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    pytest.fail(f"timed out after {timeout} s waiting for {what}")
