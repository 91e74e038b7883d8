"""A failing test case's smallest fix: searched on the job queue, applied when a person says so.

`routing_core.repair` finds the edit by running the whole suite on each candidate, seconds
each on a big suite, so a request only starts (or reuses) a `RepairJob` (`request_repair`,
on a POST of the page or the API; a GET only reads `current_search`) and a worker does the
search (`execute_repair`); a configured language model may only propose extra keywords for
it to try. The job records the draft revision and the suite it searched; applying
(`apply_found`) is refused in words (a `Conflict`) if either changed since, so the suite
need not run again in the request. The edit is saved through `save_item` (a route, a
tool) or `save_profile` (out-of-scope examples, lexicons, margin) with one
`route.accept-repair` / `tool.accept-repair` / `profile.accept-repair` audit entry.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from routing_core import Case, Pack, PackError
from routing_core.repair import (
    EDIT_KINDS,
    ROUTE_KINDS,
    Edit,
    apply_edit,
    copy_warning,
    find_repair,
    lexicon,
)
from routing_core.scorers import ScorerFailure
from routing_core.scorers.llm import ChatClient
from routing_core.suggest import parse_suggestions
from studio.jobs import EVERY_S, JobFailed, Reporter, exact_pack, start_job
from studio.models import ACTIVE, JobStatus, Profile, RepairJob, Route, TestCase, Tool
from studio.shared.audit import audit
from studio.shared.edits import save_item, save_profile
from studio.shared.errors import Conflict, Refused
from studio.shared.labels import plain_problem
from studio.shared.llm import llm_client
from studio.shared.packs import build_pack
from studio.suites.runs import as_case, suite_cases

KEEP_SEARCHES = 5  # per case: older ended searches are of drafts or suites that are gone
CHANGED = "the draft changed since the search: find a fix again"
CASES_CHANGED = "the test cases changed since the search: find a fix again"
NO_FIX = "there is no fix to apply: find a fix first"


def _suite(test_case: TestCase) -> tuple[list[Case], int]:
    rows = suite_cases(test_case.profile)
    index = next(i for i, (row, _) in enumerate(rows) if row.pk == test_case.pk)
    return [case for _, case in rows], index


def suite_fingerprint(cases: list[Case]) -> str:
    """A hash of the suite as the search sees it: a changed case means a new search."""
    text = json.dumps([asdict(case) for case in cases], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _searches_of_now(test_case: TestCase) -> tuple[QuerySet[RepairJob], str]:
    """The case's searches of the draft and suite as they are now (newest first), and the
    suite's fingerprint. A few milliseconds: reading the suite, not running it."""
    fingerprint = suite_fingerprint(_suite(test_case)[0])
    same = RepairJob.objects.filter(
        test_case=test_case,
        draft_revision=test_case.profile.draft_revision,
        suite_fingerprint=fingerprint,
    )
    return same, fingerprint


def current_search(test_case: TestCase) -> RepairJob | None:
    """The newest search of this case on the draft and suite as they are now, if any.

    Only reads: what a GET shows (a crawler, a prefetch or a reload must start nothing).
    """
    return _searches_of_now(test_case)[0].first()


def request_repair(test_case: TestCase, *, user: Any, again: bool = False) -> RepairJob:
    """The search for this case on the draft and suite as they are now: reused, or queued now.

    `again` queues a fresh one even if a search of the same draft and suite ended (after a
    cancel or a failure). For a POST: it may queue work.
    """
    profile: Profile = test_case.profile
    same, fingerprint = _searches_of_now(test_case)
    job = same.first()  # the newest (Job.Meta ordering)
    if job is not None and (job.is_running or not again):
        return job
    try:
        with transaction.atomic():  # a savepoint: the caller's transaction survives a clash
            job = RepairJob.objects.create(
                profile=profile,
                test_case=test_case,
                draft_revision=profile.draft_revision,
                suite_fingerprint=fingerprint,
                started_by=user if getattr(user, "is_authenticated", False) else None,
            )
    except IntegrityError:  # another request queued the same search a moment ago
        return same.filter(status__in=ACTIVE).get()
    _prune(test_case)
    return start_job(job)


def _prune(test_case: TestCase) -> None:
    """Forget all but the case's newest searches (a running one is never deleted)."""
    keep = list(
        RepairJob.objects.filter(test_case=test_case).values_list("pk", flat=True)[:KEEP_SEARCHES]
    )
    ended = RepairJob.objects.filter(test_case=test_case).exclude(pk__in=keep)
    ended.exclude(status__in=ACTIVE).delete()


def execute_repair(job: RepairJob, progress: Reporter) -> dict[str, Any]:
    """The job's work: learn the draft's model if need be, then try the candidates one by one."""
    test_case = TestCase.objects.select_related("profile").get(pk=job.test_case_id)
    profile: Profile = test_case.profile
    cases, index = _suite(test_case)
    if profile.draft_revision != job.draft_revision:
        raise JobFailed("The draft changed before the search began: find a fix again.")
    if suite_fingerprint(cases) != job.suite_fingerprint:
        raise JobFailed("The test cases changed before the search began: find a fix again.")
    try:
        pack = exact_pack(profile, _Learning(progress) if isinstance(progress, Reporter) else None)
    except PackError as exc:
        raise JobFailed("The draft has problems to fix first (see the routes page).") from exc
    wording, note = _wording(llm_client(), cases[index])
    report = find_repair(pack, cases, index, wording=wording, progress=progress)
    fix = report.fix
    return {
        "fix": asdict(fix) if fix is not None else None,
        "tried": report.explanations,
        "misses": list(report.misses),
        "reason": report.reason,
        "note": note,
        "done": len(report.attempts),
    }


class _Learning(Reporter):
    """Training's progress said as "still learning" (0 of 0 candidates), a few times a second,
    so that a cancel lands while the draft's model is learned (minutes on a big profile)."""

    def __init__(self, reporter: Reporter) -> None:
        super().__init__(reporter.model, reporter.pk, reporter.worker)
        self._told = 0.0

    def fraction(self, value: float) -> None:
        now = time.monotonic()
        if now - self._told >= EVERY_S:
            self._told = now
            self(0, 0)


def _wording(client: ChatClient | None, case: Case) -> tuple[list[str], str]:
    """The model's wording to try first, or a note saying why there is none."""
    if client is None or not case.expected:
        return [], ""
    try:
        return _model_wording(client, case), ""
    except ScorerFailure as exc:
        return [], (
            f"The language model did not answer ({exc}); only the message's own words were tried."
        )


def _model_wording(client: ChatClient, case: Case) -> list[str]:
    """Short phrases of the message that say it belongs to the expected route (the model's guess)."""
    prompt = (
        f"Message: {case.text}\nIt belongs to the route: {case.expected}\n"
        "List up to 5 short phrases (1 to 3 words) copied exactly from the message that "
        "show it belongs there."
    )
    messages = [
        {"role": "system", "content": "Answer with a JSON array of strings and nothing else."},
        {"role": "user", "content": prompt},
    ]
    answer, _usage = client.complete(messages)
    return (parse_suggestions(answer) or [])[:5]


def found_edit(job: RepairJob) -> Edit | None:
    """The edit the job found, as routing_core's `Edit` (None until it is done, or when it
    found none)."""
    fix = job.fix
    if (
        job.status != JobStatus.DONE
        or not isinstance(fix, dict)
        or fix.get("kind") not in EDIT_KINDS
    ):
        return None
    return Edit(fix["kind"], str(fix["route"]), str(fix["text"]), fix.get("source"))


def fix_warning(job: RepairJob, test_case: TestCase) -> str:
    """The plain warning for a found fix that makes the case's own message a training (or
    out-of-scope) example, so that the case would test nothing; "" for any other fix."""
    edit = found_edit(job)
    return copy_warning(edit, as_case(test_case)) if edit is not None else ""


def search_state(job: RepairJob) -> str:
    """Where the search stands, in words: the one source of the fix page's status line and
    the API's `detail`, so the two cannot drift apart."""
    cancelling = " (cancelling)" if job.cancel_requested and job.is_running else ""
    if job.is_queued:
        return f"Waiting for a worker to start the search{cancelling}."
    if job.is_running and job.total:
        return f"Candidate {job.done} of {job.total} tried (each one runs every test case){cancelling}."
    if job.is_running:
        return (
            "Learning the routes and running the test cases once, to see what passes now"
            f"{cancelling}."
        )
    if job.status == JobStatus.DONE:
        edit = found_edit(job)
        return f"Found: {edit.describe()}." if edit else f"No small edit found: {job.reason}."
    if job.status == JobStatus.CANCELLED:
        return "Cancelled: the search stopped and nothing changed."
    return job.error or "The search stopped."


def _outdated(job: RepairJob, test_case: TestCase | None = None) -> str:
    """Why the search's fix may no longer be applied, or "": the draft or the cases changed.

    `test_case` is the job's case as this request loaded it (with its profile); without it,
    it is read now (what applying does, just before it writes)."""
    if test_case is None:
        test_case = TestCase.objects.select_related("profile").get(pk=job.test_case_id)
    if test_case.profile.draft_revision != job.draft_revision:
        return CHANGED
    if suite_fingerprint(_suite(test_case)[0]) != job.suite_fingerprint:
        return CASES_CHANGED
    return ""


def is_applicable(job: RepairJob, test_case: TestCase | None = None) -> bool:
    """The search found a fix, and the draft and the cases are still the ones it searched
    (`test_case`: the job's case as the caller loaded it, see `_outdated`)."""
    return found_edit(job) is not None and not _outdated(job, test_case)


def apply_found(job: RepairJob, *, user: Any) -> Edit:
    """Apply the fix the job found, if the draft and the suite are still what it searched.

    No suite runs here: the search ran it on exactly this draft revision and these cases.
    The change goes through the normal save path of what it edits (`save_item` for a route
    or a tool, `save_profile` for the out-of-scope examples, lexicons and margin: revision
    check, pack validation, their own audit entry), then one `<kind>.accept-repair` entry
    says which case it fixed.

    Raises:
        Conflict: the search has not found a fix, the draft or the cases changed since, or
            someone saved the same item meanwhile (the API's 409).
        Refused: the pack refuses the edit (the API's 422).
    """
    edit = found_edit(job)
    if edit is None:
        raise Conflict(NO_FIX)
    outdated = _outdated(job)
    if outdated:
        raise Conflict(outdated)
    test_case: TestCase = job.test_case
    profile = Profile.objects.get(pk=test_case.profile_id)
    try:
        edited = apply_edit(build_pack(profile), edit)
    except PackError as exc:
        raise Refused([("edit", plain_problem(p, m)) for p, m in exc.errors]) from exc
    with transaction.atomic():
        changed = _save(profile, edit, edited, user)
        after = {"case": test_case.message, "edit": edit.describe(), "kind": edit.kind}
        audit(
            user, profile, f"{type(changed).__name__.lower()}.accept-repair", changed, None, after
        )
    return edit


def _save(profile: Profile, edit: Edit, edited: Pack, user: Any) -> Route | Tool | Profile:
    """Make the edit in the database through the usual save of the item it changes
    (`edited` is the pack with the edit made: the profile's settings are copied from it)."""
    if edit.kind in ROUTE_KINDS:
        route = Route.objects.get(profile=profile, name=edit.route)
        if edit.kind == "add_keyword":
            route.keywords = [*route.keywords, edit.text]
        elif edit.kind == "remove_keyword":
            route.keywords = [k for k in route.keywords if k != edit.text]
        else:
            route.examples = [*route.examples, edit.text]
        save_item(route, user=user)
        if edit.kind == "move_example" and edit.source:
            source = Route.objects.get(profile=profile, name=edit.source)
            source.examples = [e for e in source.examples if e != edit.text]
            save_item(source, user=user)
        return route
    if edit.kind in ("add_trigger", "remove_trigger"):
        tool = Tool.objects.get(profile=profile, name=edit.route)
        triggers = [k for k in tool.trigger_keywords if k != edit.text]
        tool.trigger_keywords = [*triggers, edit.text] if edit.kind == "add_trigger" else triggers
        save_item(tool, user=user)
        return tool
    fresh = Profile.objects.get(pk=profile.pk)
    if edit.kind == "add_out_of_scope":
        fresh.out_of_scope = [*(fresh.out_of_scope or []), edit.text]
    elif edit.kind == "set_margin":
        fresh.near_tie_margin = edited.policy.near_tie_margin
    else:
        setattr(fresh, f"{edit.route}_verbs", sorted(lexicon(edited, edit.route)))
    save_profile(fresh, user=user, expected_revision=fresh.revision)
    return fresh
