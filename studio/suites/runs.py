"""Test suites: a profile's cases as routing_core Cases, runs in the background, stored results.

The figures come from `routing_core.evaluate` — the module `routing-core eval` uses — and are
stored as its `EvalReport.to_dict()`, so the studio and the command line agree to the digit.

Conversations: test cases that share a `conversation` label are the turns of one conversation,
run in `turn` order (then list order), placed in the suite where its first turn appears. Only the
first turn's `incumbent` is used; every later turn's incumbent is the route the previous turn
landed on — which is what `routing_core.evaluate` does with a run of equal `conversation` ids.

Runs and checkups are jobs on the queue (studio/jobs): a worker process routes the cases and
writes the progress to the TestRun row, which the results page polls.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from routing_core import Case, CaseResult, EvalReport, Router, evaluate, overlap_checkup
from studio.jobs import Reporter, job_pack, make_room, queued_twin, recover, start_job
from studio.models import OverlapCheck, Profile, TestCase, TestRun
from studio.shared.audit import signed_in

log = logging.getLogger(__name__)


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


def interrupt_stale(profile: Profile) -> int:
    """Recover jobs whose worker died (studio.jobs.recovery), when a page shows them."""
    return recover()


# -- runs -------------------------------------------------------------------------------------------


def start_run(profile: Profile, *, user: Any, limited: bool = True) -> TestRun:
    """Create a run of the profile's suite and start it (viewers may: it changes no draft).

    A run of this draft still waiting in the queue is reused. `limited`: held to the person's
    and the profile's share of the queue (studio.jobs.limits); the publish gate's run is not,
    so that analysis never holds up a publish.

    Raises:
        QueueFull: over the share.
    """
    twin = queued_twin(TestRun, profile=profile, draft_revision=profile.draft_revision)
    if twin is not None:
        return twin
    if limited:
        make_room(profile, user)
    run = TestRun.objects.create(
        profile=profile,
        started_by=signed_in(user),
        total=profile.test_cases.count(),
        draft_revision=profile.draft_revision,
    )
    return start_job(run)


def execute_run(run: TestRun, progress: Reporter) -> dict[str, Any]:
    """The run's work (on a worker): route every case on the current draft, the outcome to store."""
    profile = Profile.objects.get(pk=run.profile_id)
    router = Router(job_pack(profile))
    pairs = suite_cases(profile)
    report = evaluate(router, [c for _, c in pairs], progress=progress)
    return report_fields(report, [row for row, _ in pairs], profile.draft_revision)


def report_fields(report: EvalReport, rows: list[TestCase], revision: int) -> dict[str, Any]:
    """A finished run's fields: the figures and one result per case."""
    return {
        "done": report.n,
        "total": report.n,
        "draft_revision": revision,
        "passed": sum(1 for r in report.results if r.passed),
        "pass_rate": report.pass_rate,
        "figures": report.to_dict(),
        "results": [result_row(row, r) for row, r in zip(rows, report.results, strict=True)],
    }


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
    """Create an overlap checkup of the profile's draft and start it (or reuse a waiting one).

    Raises:
        QueueFull: over the person's or the profile's share of the queue.
    """
    twin = queued_twin(OverlapCheck, profile=profile, draft_revision=profile.draft_revision)
    if twin is not None:
        return twin
    make_room(profile, user)
    check = OverlapCheck.objects.create(
        profile=profile,
        started_by=signed_in(user),
        draft_revision=profile.draft_revision,
    )
    return start_job(check)


def execute_overlap(check: OverlapCheck, progress: Reporter) -> dict[str, Any]:
    """The checkup's work: hold out every example once (routing_core.overlap), what landed elsewhere."""
    profile = Profile.objects.get(pk=check.profile_id)
    pack = job_pack(profile)
    findings = overlap_checkup(pack, progress=progress)
    rows = [{k: _finite(v) for k, v in asdict(f).items()} for f in findings]
    return {"draft_revision": profile.draft_revision, "findings": rows}


def _finite(value: Any) -> Any:
    """JSON columns refuse NaN and infinities; a score that is not a number is stored as None."""
    return None if isinstance(value, float) and not math.isfinite(value) else value
