"""Authoring help: lint findings with where to fix them, and threshold tuning over the test cases.

Lint reads the profile's draft through the playground's compiled-router cache; the tuning sweep
runs on the job queue (`TuningRun`), its result stored per state of the draft and the cases.
Both hand the work to routing_core (`lint_pack`, `sweep` / `suggest`); applying a suggestion
goes through `services.save_profile`, so it is validated, optimistically locked and audited.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass
from typing import Any

from django.urls import reverse
from django.utils import timezone

from routing_core import Finding, PackError, Router, lint_pack
from routing_core.tuning import OBJECTIVES, SweepPoint, objective_for, suggest, sweep
from studio.jobs import JobFailed, Reporter, job_pack, start_job
from studio.models import ACTIVE, JobStatus, Profile, TuningRun
from studio.shared.drafts import ModelPending, compiled_router
from studio.shared.edits import save_profile
from studio.shared.labels import place
from studio.shared.languages import recent_languages
from studio.suites.runs import suite_cases

_RULE_PATH = re.compile(r"^rules\[(\d+)\]")


@dataclass(frozen=True)
class LintRow:
    finding: Finding
    href: str  # the page where the offending route (or rule) is edited
    where: str  # the finding's place in words: "billing → example 2 ‘…’"


def lint_rows(profile: Profile) -> list[LintRow]:
    """routing_core's lint findings for the draft, each with a link to fix it.

    Raises:
        PackError: the draft is not a valid pack.
    """
    router = compiled_router(profile)
    routes = dict(profile.routes.values_list("name", "pk"))
    rules = list(profile.rules.values_list("pk", flat=True))
    traffic = recent_languages(profile)
    return [
        LintRow(f, _href(profile.slug, f, routes, rules), place(f.path, router.pack))
        for f in lint_pack(router.pack, router, traffic_languages=traffic)
    ]


_LINT: OrderedDict[tuple[int, str, int], list[LintRow]] = OrderedDict()
_LINT_LOCK = threading.Lock()


def cached_lint_rows(profile: Profile) -> list[LintRow] | None:
    """`lint_rows`, kept per (profile, draft revision) like the compiled router they come from.

    Every profile page's badge counts the errors, and the publish review polls while its suite
    runs: linting once per draft is enough. The traffic's languages (what the language findings
    read) change slowly: they are read again each day. An invalid draft has no rows (its problems say more);
    None while the draft's model is still training (lint scores the examples with it).
    """
    day = timezone.now().date().isoformat()
    key = (profile.pk, f"{profile.created_at.isoformat()} {day}", profile.draft_revision)
    with _LINT_LOCK:
        if key in _LINT:
            return _LINT[key]
    try:
        rows = lint_rows(profile)
    except ModelPending:
        return None  # not cached: the next look, once the model is there, lints
    except PackError:
        rows = []
    with _LINT_LOCK:
        _LINT[key] = rows
        while len(_LINT) > 64:
            _LINT.popitem(last=False)
    return rows


def lint_error_count(profile: Profile) -> int:
    """How many lint errors the draft has (0 for an invalid draft, or while its model trains)."""
    rows = cached_lint_rows(profile) or []
    return sum(1 for row in rows if row.finding.severity == "error")


def _href(slug: str, finding: Finding, routes: dict[str, int], rules: list[int]) -> str:
    rule = _RULE_PATH.match(finding.path)
    if rule and int(rule.group(1)) < len(rules):
        return reverse("rules-edit", args=[slug, rules[int(rule.group(1))]])
    if finding.route in routes:
        return reverse("routes-edit", args=[slug, routes[finding.route]])
    if finding.path == "out_of_scope":  # edited, and started, on the policy page
        return reverse("policy", args=[slug])
    return reverse("profile-detail", args=[slug])


def route_links(profile: Profile) -> dict[str, str]:
    """Each route's name → the page where it is edited (overlap findings link to their routes)."""
    routes = profile.routes.values_list("name", "pk")
    return {name: reverse("routes-edit", args=[profile.slug, pk]) for name, pk in routes}


@dataclass(frozen=True)
class Tuning:
    points: list[SweepPoint]
    best: SweepPoint
    current: SweepPoint | None  # the profile's own thresholds, when they are on the grid
    objective: str
    objective_text: str
    cases: int
    out_of_scope: int


class TuningPending(Exception):
    """The sweep runs on a worker; its row has the progress."""

    def __init__(self, job: TuningRun) -> None:
        super().__init__("the thresholds are being tuned")
        self.job = job


def tuning(profile: Profile) -> Tuning | None:
    """The floor × margin sweep over the profile's test cases (None: no cases to tune on).

    Stored per state of the draft and the cases, so reloading the page is free; a new state
    queues a sweep and raises TuningPending until a worker has run it.

    Raises:
        PackError: the draft is not a valid pack.
        ModelPending: the draft's model is still training (the sweep needs the exact one).
        TuningPending: the sweep is queued or running.
    """
    pairs = suite_cases(profile)
    if not pairs:
        return None
    compiled_router(profile)  # the exact model, or ModelPending, before any sweep is queued
    key = _tuning_key(profile, [row for row, _ in pairs])
    done = profile.tuning_runs.filter(key=key, status=JobStatus.DONE).first()
    if done is not None and done.result:
        return _from_json(done.result)
    job = profile.tuning_runs.filter(key=key, status__in=ACTIVE).first()
    if job is None:
        job = start_job(
            TuningRun.objects.create(
                profile=profile, key=key, draft_revision=profile.draft_revision, total=len(pairs)
            )
        )
        profile.tuning_runs.exclude(pk=job.pk).exclude(status__in=ACTIVE).exclude(
            pk__in=profile.tuning_runs.filter(status=JobStatus.DONE).values("pk")[:3]
        ).delete()
    if job.status == JobStatus.DONE and job.result:
        return _from_json(job.result)
    if job.status in ACTIVE:
        raise TuningPending(job)
    raise PackError([("tuning", job.error or "the sweep did not finish")])


def execute_tuning(job: TuningRun, progress: Reporter) -> dict[str, Any]:
    """The sweep's work, on a worker: route every case once with the exact model, then decide."""
    profile = Profile.objects.get(pk=job.profile_id)
    router = Router(job_pack(profile))
    pairs = suite_cases(profile)
    if _tuning_key(profile, [row for row, _ in pairs]) != job.key:
        raise JobFailed("The draft or its test cases changed meanwhile: open the page again.")
    cases = [case for _, case in pairs]
    points = sweep(router, cases)
    objective = objective_for(cases)
    current = next(
        (p for p in points if p.floor == profile.floor and p.margin == profile.near_tie_margin),
        None,
    )
    result = Tuning(
        points,
        _keep_margin(points, suggest(points), profile.near_tie_margin),
        current,
        objective,
        OBJECTIVES[objective],
        len(cases),
        sum(1 for c in cases if c.expected is None),
    )
    return {"result": _to_json(result), "done": len(cases), "total": len(cases)}


def _tuning_key(profile: Profile, rows: list[Any]) -> str:
    state = [
        profile.pk,
        profile.draft_revision,
        profile.floor,
        profile.near_tie_margin,
        [(row.pk, row.revision) for row in rows],
    ]
    return hashlib.sha256(json.dumps(state).encode()).hexdigest()


def _to_json(t: Tuning) -> dict[str, Any]:
    return {
        "points": [asdict(p) for p in t.points],
        "best": asdict(t.best),
        "current": asdict(t.current) if t.current else None,
        "objective": t.objective,
        "objective_text": t.objective_text,
        "cases": t.cases,
        "out_of_scope": t.out_of_scope,
    }


def _from_json(d: dict[str, Any]) -> Tuning:
    return Tuning(
        [SweepPoint(**p) for p in d["points"]],
        SweepPoint(**d["best"]),
        SweepPoint(**d["current"]) if d["current"] else None,
        d["objective"],
        d["objective_text"],
        d["cases"],
        d["out_of_scope"],
    )


def _keep_margin(points: list[SweepPoint], best: SweepPoint, margin: float) -> SweepPoint:
    """Among points the objective cannot tell apart from the best, keep the profile's margin.

    `suggest` breaks ties by grid order, which would move the margin to 0 (no menus at all)
    whenever the cases never near-tie; a suggestion should only change what the data argues for.
    """
    same = [
        p
        for p in points
        if p.floor == best.floor
        and p.margin == margin
        and round(p.score, 9) == round(best.score, 9)
        and p.menu_rate == best.menu_rate
    ]
    return same[0] if same else best


def apply_thresholds(
    profile: Profile, floor: float | None, margin: float, *, user: Any, expected_revision: int
) -> None:
    """Save a floor and near-tie margin on the profile (validated, locked, audited).

    Raises:
        Conflict: the profile changed since the page was loaded.
        Refused: routing_core refuses the values.
    """
    profile.floor = floor
    profile.near_tie_margin = margin
    save_profile(profile, user=user, expected_revision=expected_revision)
