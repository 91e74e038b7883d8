"""Test suites: a profile's cases as routing_core Cases, runs in the background, stored results.

The figures come from `routing_core.evaluate` — the module `routing-core eval` uses — and are
stored as its `EvalReport.to_dict()`, so the studio and the command line agree to the digit.

Conversations: test cases that share a `conversation` label are the turns of one conversation,
run in `turn` order (then list order), placed in the suite where its first turn appears. Only the
first turn's `incumbent` is used; every later turn's incumbent is the route the previous turn
landed on — which is what `routing_core.evaluate` does with a run of equal `conversation` ids.

Runs happen in a thread per request (a studio process can spare one; nothing else to deploy),
writing their progress to the TestRun row, which the results page polls. Inside a database
transaction (a test) the work runs inline instead: a thread could not see the uncommitted row.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict
from datetime import timedelta
from typing import Any, TypeVar

from django.db import OperationalError, connection, connections
from django.db.models import Model
from django.utils import timezone

from routing_core import PackError
from routing_core.cases import Case
from routing_core.evaluate import CaseResult, EvalReport, Progress, evaluate
from routing_core.overlap import overlap_checkup
from studio.models import Job, JobStatus, OverlapCheck, Profile, TestCase, TestRun
from studio.playground import compiled_router

log = logging.getLogger(__name__)

PROGRESS_EVERY_S = 0.2
# A live job writes its progress several times a second; one silent this long has lost its process
# (a restart, a crash) and will never finish.
STALE_AFTER = timedelta(minutes=10)
J = TypeVar("J", bound=Job)
T = TypeVar("T")


# -- cases ------------------------------------------------------------------------------------------


def suite_order(test_cases: Iterable[TestCase]) -> list[TestCase]:
    """The cases in run order: list order, each conversation's turns together where it starts."""
    rows = sorted(test_cases, key=lambda c: (c.order, c.pk or 0))
    turns: dict[str, list[TestCase]] = {}
    for row in rows:
        if row.conversation:
            turns.setdefault(row.conversation, []).append(row)
    ordered: list[TestCase] = []
    for row in rows:
        if not row.conversation:
            ordered.append(row)
        elif row is turns[row.conversation][0]:
            ordered.extend(sorted(turns[row.conversation], key=lambda c: c.turn))
    return ordered  # sorted() is stable: equal turns keep list order


def as_case(test_case: TestCase) -> Case:
    """The routing_core Case a stored test case stands for."""
    tools, dropped = test_case.expected_tools, test_case.dropped_tools
    return Case(
        text=test_case.message,
        expected=test_case.expected_route or None,
        incumbent=test_case.incumbent or None,
        expected_verdict=test_case.expected_verdict or None,
        expected_triage=test_case.expected_triage or None,
        expected_tools=tuple(tools) if tools is not None else None,
        conversation=test_case.conversation or None,
        dropped_tools=tuple(dropped) if dropped else None,
        exact_tools=test_case.exact_tools,
    )


def suite_cases(profile: Profile) -> list[tuple[TestCase, Case]]:
    """Every test case of the profile with its Case, in run order."""
    return [(row, as_case(row)) for row in suite_order(profile.test_cases.all())]


# -- background jobs --------------------------------------------------------------------------------


def launch(work: Callable[[int], None], pk: int) -> None:
    """Run `work(pk)` in a thread; inline when inside a transaction (it could not see the row)."""
    if connection.in_atomic_block:
        work(pk)
        return
    threading.Thread(target=_in_thread, args=(work, pk), daemon=True, name=f"job-{pk}").start()


def _in_thread(work: Callable[[int], None], pk: int) -> None:
    try:
        work(pk)
    finally:
        connections.close_all()  # this thread's connections only


def progress_writer(model: type[Model], pk: int) -> Progress:
    """A progress callback that writes (done, total) to the job row, a few times a second."""
    last = [0.0]

    def write(done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - last[0] >= PROGRESS_EVERY_S:
            last[0] = now
            rows = model._default_manager.filter(pk=pk)
            try:  # a sign of life; informational, so a write that keeps meeting a lock is skipped
                retry_locked(lambda: rows.update(done=done, total=total, updated_at=timezone.now()))
            except OperationalError:
                log.warning("progress of %s %s not written: the database stayed locked", model, pk)

    return write


def retry_locked(write: Callable[[], T], *, attempts: int = 60, pause_s: float = 0.05) -> T:
    """Run a write, waiting out a busy SQLite database (about 3 s at most).

    SQLite lets one writer in at a time, and a job's thread writes while the request threads
    read: a write that meets a lock tries again instead of losing the run's outcome.
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


def finish(job: J, **fields: Any) -> J:
    """Mark a job done (or failed, with `error=`) and save the given fields."""
    job.status = JobStatus.FAILED if fields.get("error") else JobStatus.DONE
    job.finished_at = timezone.now()
    for name, value in fields.items():
        setattr(job, name, value)
    retry_locked(job.save)
    return job


def interrupt_stale(profile: Profile) -> int:
    """Mark the profile's jobs silent for STALE_AFTER as interrupted, so they can be run again.

    Called when a page shows them: there is no supervisor to notice a dead thread.
    """
    now = timezone.now()
    error = (
        f"Interrupted: no progress for {STALE_AFTER.seconds // 60} minutes "
        "(the studio was probably restarted). Run it again."
    )
    return sum(
        model.objects.filter(
            profile=profile, status=JobStatus.RUNNING, updated_at__lt=now - STALE_AFTER
        ).update(status=JobStatus.INTERRUPTED, finished_at=now, error=error)
        for model in (TestRun, OverlapCheck)
    )


# -- runs -------------------------------------------------------------------------------------------


def start_run(profile: Profile, *, user: Any) -> TestRun:
    """Create a run of the profile's suite and start it (viewers may: it changes no draft)."""
    run = TestRun.objects.create(
        profile=profile,
        started_by=_signed_in(user),
        total=profile.test_cases.count(),
        draft_revision=profile.draft_revision,
    )
    launch(execute_run, run.pk)
    run.refresh_from_db()
    return run


def _signed_in(user: Any) -> Any:
    """The user to record as a job's starter: None for an anonymous or missing one."""
    return user if user is not None and user.is_authenticated else None


def execute_run(pk: int) -> None:
    """Route every case of the run's profile on its current draft and store the outcome."""
    run = TestRun.objects.select_related("profile").get(pk=pk)
    try:
        profile = Profile.objects.get(pk=run.profile_id)
        router = compiled_router(profile)
        pairs = suite_cases(profile)
        report = evaluate(router, [c for _, c in pairs], progress=progress_writer(TestRun, run.pk))
    except PackError as exc:
        finish(run, error=f"The draft is not a valid pack: {exc}")
        return
    except Exception as exc:  # a run must end, whatever happened; the log has the trace
        log.exception("test run %s failed", pk)
        finish(run, error=f"The run failed: {exc}")
        return
    store_report(run, report, [row for row, _ in pairs], profile.draft_revision)


def store_report(run: TestRun, report: EvalReport, rows: list[TestCase], revision: int) -> None:
    # One UPDATE of the run's row: atomic by itself.
    finish(
        run,
        done=report.n,
        total=report.n,
        draft_revision=revision,
        passed=sum(1 for r in report.results if r.passed),
        pass_rate=report.pass_rate,
        figures=report.to_dict(),
        results=[result_row(row, r) for row, r in zip(rows, report.results, strict=True)],
    )


def result_row(row: TestCase, result: CaseResult) -> dict[str, Any]:
    """One case's outcome as stored (JSON-safe, what the results page shows and filters on)."""
    d = result.decision
    return {
        "id": row.pk,
        "text": row.message,
        "conversation": row.conversation,
        "turn": row.turn,
        "incumbent": d.from_route,
        "expected": result.expected_label,
        "predicted": result.predicted,
        "verdict": d.verdict,
        "by": d.by,
        "route": d.route,
        "triage": d.triage.label if d.triage else None,
        "tools": list(d.tools.kept),
        "failures": result.failures,
        "passed": result.passed,
        "us": round(result.elapsed_us, 1),
    }


def last_runs(profile: Profile, limit: int = 30) -> list[TestRun]:
    """The profile's latest runs, oldest first, without their (large) result lists."""
    runs = profile.test_runs.defer("results", "figures").order_by("-started_at", "-pk")[:limit]
    return list(reversed(runs))


# -- overlap checkups -------------------------------------------------------------------------------


def start_overlap(profile: Profile, *, user: Any) -> OverlapCheck:
    """Create an overlap checkup of the profile's draft and start it."""
    check = OverlapCheck.objects.create(
        profile=profile,
        started_by=_signed_in(user),
        draft_revision=profile.draft_revision,
    )
    launch(execute_overlap, check.pk)
    check.refresh_from_db()
    return check


def execute_overlap(pk: int) -> None:
    """Hold out every example once (routing_core.overlap) and store what landed elsewhere."""
    check = OverlapCheck.objects.select_related("profile").get(pk=pk)
    try:
        profile = Profile.objects.get(pk=check.profile_id)
        pack = compiled_router(profile).pack
        findings = overlap_checkup(pack, progress=progress_writer(OverlapCheck, pk))
    except PackError as exc:
        finish(check, error=f"The draft is not a valid pack: {exc}")
        return
    except Exception as exc:  # a checkup must end, whatever happened; the log has the trace
        log.exception("overlap check %s failed", pk)
        finish(check, error=f"The checkup failed: {exc}")
        return
    retry_locked(lambda: check.refresh_from_db(fields=["done", "total"]))
    rows = [{k: _finite(v) for k, v in asdict(f).items()} for f in findings]
    finish(check, draft_revision=profile.draft_revision, findings=rows)


def _finite(value: Any) -> Any:
    """JSON columns refuse NaN and infinities; a score that is not a number is stored as None."""
    return None if isinstance(value, float) and not math.isfinite(value) else value
