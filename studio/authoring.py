"""Authoring help: lint findings with where to fix them, and threshold tuning over the test cases.

Both read the profile's draft through the playground's compiled-router cache and hand the work
to routing_core (`lint_pack`, `sweep` / `suggest`); applying a suggestion goes through
`services.save_profile`, so it is validated, optimistically locked and audited like any edit.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from django.urls import reverse

from routing_core import PackError
from routing_core.lint import Finding, lint_pack
from routing_core.tuning import OBJECTIVES, SweepPoint, objective_for, suggest, sweep
from studio.labels import place
from studio.models import Profile
from studio.playground import compiled_router
from studio.services import save_profile
from studio.suites import suite_cases

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
    return [
        LintRow(f, _href(profile.slug, f, routes, rules), place(f.path, router.pack))
        for f in lint_pack(router.pack, router)
    ]


_LINT: OrderedDict[tuple[int, str, int], list[LintRow]] = OrderedDict()
_LINT_LOCK = threading.Lock()


def cached_lint_rows(profile: Profile) -> list[LintRow]:
    """`lint_rows`, kept per (profile, draft revision) like the compiled router they come from.

    Every profile page's badge counts the errors, and the publish review polls while its suite
    runs: linting once per draft is enough. An invalid draft has no rows (its problems say more).
    """
    key = (profile.pk, profile.created_at.isoformat(), profile.draft_revision)
    with _LINT_LOCK:
        if key in _LINT:
            return _LINT[key]
    try:
        rows = lint_rows(profile)
    except PackError:
        rows = []
    with _LINT_LOCK:
        _LINT[key] = rows
        while len(_LINT) > 64:
            _LINT.popitem(last=False)
    return rows


def lint_error_count(profile: Profile) -> int:
    """How many lint errors the draft has (0 for an invalid draft)."""
    return sum(1 for row in cached_lint_rows(profile) if row.finding.severity == "error")


def _href(slug: str, finding: Finding, routes: dict[str, int], rules: list[int]) -> str:
    rule = _RULE_PATH.match(finding.path)
    if rule and int(rule.group(1)) < len(rules):
        return reverse("rules-edit", args=[slug, rules[int(rule.group(1))]])
    if finding.route in routes:
        return reverse("routes-edit", args=[slug, routes[finding.route]])
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


_cache: OrderedDict[tuple[Any, ...], Tuning] = OrderedDict()
_lock = threading.Lock()


def tuning(profile: Profile) -> Tuning | None:
    """Sweep floor × margin over the profile's test cases (None: no cases to tune on).

    Cached per process by draft revision and the cases' state, so reloading the page is free.

    Raises:
        PackError: the draft is not a valid pack.
    """
    pairs = suite_cases(profile)
    if not pairs:
        return None
    key = (
        profile.pk,
        profile.draft_revision,
        profile.floor,
        profile.near_tie_margin,
        tuple((row.pk, row.revision) for row, _ in pairs),
    )
    with _lock:
        if key in _cache:
            return _cache[key]
    cases = [case for _, case in pairs]
    points = sweep(compiled_router(profile), cases)
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
    with _lock:
        _cache[key] = result
        while len(_cache) > 8:
            _cache.popitem(last=False)
    return result


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
