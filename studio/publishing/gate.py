"""The publishing gate: what a publisher sees before shipping, and why "red" needs a reason.

The gate is the draft's test suite (a TestRun of this very draft revision, run by the suites'
job mechanism) and its lint findings. It is red while lint finds an error, the suite fails a
case, or the suite has not finished on this draft (a profile without test cases has no suite
to wait for); publishing red is allowed, but only with a reason, which the audit trail keeps
next to what was red.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from studio.models import ACTIVE, JobStatus, Profile, Publication, TestRun
from studio.publishing.versions import start_publication
from studio.shared.audit import audit
from studio.shared.errors import Conflict
from studio.suites import LintRow, cached_lint_rows, interrupt_stale, start_run

# Suite runs that still say something about a draft: queued, running or done (a failed,
# cancelled or interrupted one is rerun).
_USABLE = (*ACTIVE, JobStatus.DONE)


class ReasonRequired(Exception):
    """A red gate was about to be published without saying why."""


class RedGate(Conflict):
    """The API's refusal of a red gate (a 409); `waiting` says it may turn green by itself."""

    def __init__(self, message: str, *, waiting: bool) -> None:
        super().__init__(message)
        self.waiting = waiting


@dataclass(frozen=True)
class Gate:
    run: TestRun | None
    errors: list[LintRow]
    warnings: list[LintRow]
    lint_pending: bool = False  # the draft's model is still training
    # The profile has test cases. Without, there is no suite to wait for: the gate says so
    # at once instead of being red until a run of nothing comes back from the queue.
    has_cases: bool = True

    @property
    def is_running(self) -> bool:
        """Something the gate waits for is not done: the page keeps polling."""
        return self.lint_pending or (self.run is not None and self.run.is_running)

    @property
    def failed(self) -> int:
        """Cases of the finished run that failed (0 while it runs)."""
        run = self.run
        return run.total - run.passed if run is not None and run.status == JobStatus.DONE else 0

    @property
    def reds(self) -> list[str]:
        """Why the gate is red, in plain words (empty: green)."""
        reds = []
        if self.lint_pending:
            reds.append("lint waits for the draft's model, still training")
        if self.errors:
            reds.append(f"lint finds {_count(len(self.errors), 'error')}")
        if self.has_cases and (self.run is None or self.run.is_running):
            reds.append("the test suite has not finished on this draft")
        elif self.failed and self.run is not None:
            reds.append(f"{self.failed} of {_count(self.run.total, 'test case')} fail")
        return reds

    @property
    def is_red(self) -> bool:
        return bool(self.reds)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def current_run(profile: Profile) -> TestRun | None:
    """The latest usable suite run of the profile's current draft, if any."""
    runs = profile.test_runs.filter(draft_revision=profile.draft_revision, status__in=_USABLE)
    return runs.order_by("-started_at", "-pk").first()


def review_gate(profile: Profile, *, user: Any) -> Gate:
    """The gate of the current draft, starting its suite run when this draft has none yet."""
    interrupt_stale(profile)  # a run whose process died must not keep the gate waiting
    has_cases = profile.test_cases.exists()
    run = (
        (current_run(profile) or start_run(profile, user=user, limited=False))
        if has_cases
        else None
    )
    rows = cached_lint_rows(profile)  # none for an invalid draft: the page lists its problems
    if rows is None:  # the draft's model is still training: lint cannot judge it yet
        return Gate(run, [], [], lint_pending=True, has_cases=has_cases)
    errors = [r for r in rows if r.finding.severity == "error"]
    warnings = [r for r in rows if r.finding.severity == "warning"]
    return Gate(run, errors, warnings, has_cases=has_cases)


def publish_through_gate(
    profile: Profile, gate: Gate, *, user: Any, reason: str = "", **options: Any
) -> Publication:
    """Start publishing the draft; a red gate needs a reason, kept in the audit trail with the reds.

    The publication runs on the job queue (it waits for the model of exactly this draft), so
    the reason is recorded now, against the draft revision that was reviewed.

    Raises:
        ReasonRequired: the gate is red and no reason was given.
        and whatever `studio.publishing.versions.start_publication` raises.
    """
    reason = reason.strip()
    if gate.is_red and not reason:
        raise ReasonRequired("; ".join(gate.reds))
    with transaction.atomic():
        job = start_publication(profile, user=user, **options)
        if gate.is_red:
            facts = {"draft_revision": job.draft_revision, "red": gate.reds, "reason": reason}
            audit(user, profile, "version.publish_red", profile, None, facts)
    return job
