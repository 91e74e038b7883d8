"""Test cases (list, add, edit, delete, bulk import, export) and suite runs with their results.

Anyone with a role may *run* the suite (it changes nothing authored); changing cases needs the
editor role. The run page polls its own `run` partial while the run is going.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from studio.jobs import QueueFull
from studio.models import Profile, TestCase, TestRun
from studio.shared.downloads import attachment
from studio.shared.errors import Conflict
from studio.shared.pages import (
    HtmxHttpRequest,
    fragment,
    get_profile,
    not_started,
    profile_context,
    reader_page,
    studio_page,
)
from studio.suites.case_import import export_csv, export_jsonl, import_cases, parse_cases
from studio.suites.cases import delete_case, save_case
from studio.suites.conversation_figures import conversation_figures
from studio.suites.forms import ImportForm, TestCaseForm
from studio.suites.reports import confusion_matrix, filter_results, pass_rate_chart, slowest
from studio.suites.runs import interrupt_stale, last_runs, start_run

CASES_PAGE = "studio/suites/test_cases.html"
RUN_PAGE = "studio/suites/test_run.html"
IMPORT_PAGE = "studio/suites/test_import.html"
PER_PAGE = 100


# -- test cases -------------------------------------------------------------------------------------


def _cases_context(request: HtmxHttpRequest, profile: Profile, **extra: Any) -> dict[str, Any]:
    interrupt_stale(profile)
    runs = last_runs(profile)
    last = runs[-1] if runs else None
    outcome = _last_outcomes(profile)
    page = Paginator(profile.test_cases.all(), PER_PAGE).get_page(request.GET.get("page"))
    extra.setdefault("add_form", TestCaseForm(profile=profile))
    return profile_context(
        request,
        profile,
        page=page,
        cases=[(c, outcome.get(c.pk)) for c in page],
        case_count=page.paginator.count,
        last_run=last,
        talk=conversation_figures(last.figures) if last and last.status == "done" else None,
        chart=pass_rate_chart(runs, lambda r: reverse("test-run", args=[profile.slug, r.pk])),
        **extra,
    )


STALE = "stale"


def _last_outcomes(profile: Profile) -> dict[int, bool | str]:
    """Whether each case passed in the last finished run (absent: not run since it was added).

    A pass of a case whose route has since been deleted is "stale": the run judged a pack that
    no longer exists, so showing PASS would hide the failure the next run will report.
    """
    run = profile.test_runs.filter(status="done").only("results").first()
    if run is None:
        return {}
    routes = set(profile.routes.values_list("name", flat=True))
    gone = {
        pk
        for pk, expected, incumbent in profile.test_cases.values_list(
            "pk", "expected_route", "incumbent"
        )
        if (expected and expected not in routes) or (incumbent and incumbent not in routes)
    }
    return {r["id"]: STALE if r["id"] in gone else r["passed"] for r in run.results}


@require_GET
@studio_page
def test_cases(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    return render(request, CASES_PAGE, _cases_context(request, profile))


def _case(profile: Profile, pk: int) -> TestCase:
    return get_object_or_404(TestCase, profile=profile, pk=pk)


def _case_row(
    request: HtmxHttpRequest, profile: Profile, partial: str, status: int = 200, **ctx: Any
) -> HttpResponse:
    """One row (htmx) or the whole page with that row in the same state (no JS)."""
    if request.htmx:
        context = profile_context(request, profile, **ctx)
        return fragment(request, f"{CASES_PAGE}#{partial}", context, status=status)
    state = {"case-edit": "editing", "case-delete": "deleting"}.get(partial)
    extra = {state: ctx["case"].pk} if state else {}
    rest = {k: v for k, v in ctx.items() if k != "case"}
    return render(
        request, CASES_PAGE, _cases_context(request, profile, **rest, **extra), status=status
    )


@require_POST
@studio_page
def case_add(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    form = TestCaseForm(request.POST, profile=profile, instance=TestCase(profile=profile))
    if form.is_valid():
        save_case(form.instance, user=request.user)
        messages.success(request, "Added the test case.")
        last = -(-profile.test_cases.count() // PER_PAGE)
        return redirect(f"{reverse('tests', args=[slug])}?page={last}#cases")
    return render(request, CASES_PAGE, _cases_context(request, profile, add_form=form), status=422)


@require_GET
@studio_page
def case_row(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    profile = get_profile(slug)
    if not request.htmx:
        return redirect("tests", slug=slug)
    return _case_row(request, profile, "case-row", case=_case(profile, pk))


@require_http_methods(["GET", "POST"])
@studio_page
def case_edit(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    profile = get_profile(slug)
    case = _case(profile, pk)
    form = TestCaseForm(request.POST or None, profile=profile, instance=case)
    if request.method == "GET":
        return _case_row(request, profile, "case-edit", case=case, form=form)
    if not form.is_valid():
        return _case_row(request, profile, "case-edit", 422, case=case, form=form)
    try:
        save_case(form.instance, user=request.user, expected_revision=form.cleaned_data["revision"])
    except Conflict as exc:
        form.add_error(None, str(exc))
        return _case_row(request, profile, "case-edit", 409, case=case, form=form)
    if request.htmx:
        return _case_row(request, profile, "case-row", case=form.instance)
    messages.success(request, "Saved the test case.")
    return redirect("tests", slug=slug)


@require_http_methods(["GET", "POST"])
@studio_page
def case_delete(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    profile = get_profile(slug)
    case = _case(profile, pk)
    if request.method == "GET":
        return _case_row(request, profile, "case-delete", case=case)
    delete_case(case, user=request.user)
    if request.htmx:
        return fragment(request, "studio/shared/_empty.html", profile_context(request, profile))
    messages.success(request, "Deleted the test case.")
    return redirect("tests", slug=slug)


@require_http_methods(["GET", "POST"])
@studio_page
def case_import(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Parse; import at once when every row is good, else preview the bad rows and confirm."""
    profile = get_profile(slug)
    form = ImportForm(request.POST or None, request.FILES or None)
    context = profile_context(request, profile, form=form)
    if request.method == "GET" or not form.is_valid():
        return render(request, IMPORT_PAGE, context, status=422 if form.is_bound else 200)
    parsed = parse_cases(form.cleaned_data["text"], form.cleaned_data["format"] or "auto")
    if parsed.rows and (not parsed.errors or request.POST.get("confirm") == "yes"):
        count = import_cases(profile, parsed.rows, user=request.user)
        skipped = f", skipped {len(parsed.errors)} bad row(s)" if parsed.errors else ""
        messages.success(request, f"Imported {count} test case(s){skipped}.")
        return redirect("tests", slug=slug)
    context.update(parsed=parsed, text=form.cleaned_data["text"], fmt=form.cleaned_data["format"])
    return render(request, IMPORT_PAGE, context, status=422)


@require_GET
@studio_page
def case_export(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    return attachment(export_jsonl(profile), "application/x-ndjson", f"{profile.slug}-cases.jsonl")


@require_GET
@studio_page
def case_export_csv(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    return attachment(export_csv(profile), "text/csv; charset=utf-8", f"{profile.slug}-cases.csv")


# -- runs -------------------------------------------------------------------------------------------


@require_POST
@reader_page
def run_start(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    try:
        run = start_run(get_profile(slug), user=request.user)
    except QueueFull as exc:
        return not_started(request, exc, reverse("tests", args=[slug]))
    return redirect("test-run", slug=slug, pk=run.pk)


@require_GET
@reader_page
def run_detail(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    profile = get_profile(slug)
    interrupt_stale(profile)
    run = get_object_or_404(TestRun, profile=profile, pk=pk)
    context = profile_context(request, profile, run=run, **_results(request, run))
    if request.htmx and request.htmx.target in ("run", "case-list"):
        return render(request, f"{RUN_PAGE}#{request.htmx.target}", context)
    return render(request, RUN_PAGE, context)


SHOW_CHOICES = [("failed", "failed"), ("passed", "passed"), ("all", "all")]


def _results(request: HtmxHttpRequest, run: TestRun) -> dict[str, Any]:
    url = reverse("test-run", args=[run.profile.slug, run.pk])
    if run.is_running or not run.results:
        return {"run_url": url}
    expected, predicted = request.GET.get("expected"), request.GET.get("predicted")
    show = request.GET.get("show", "failed")
    shown = filter_results(run.results, show=show, expected=expected, predicted=predicted)
    page = Paginator(shown, PER_PAGE).get_page(request.GET.get("page"))
    per_route = run.figures.get("per_route", {})
    query = {k: v for k, v in (("expected", expected), ("predicted", predicted)) if v is not None}
    return {
        "run_url": url,
        "show_choices": SHOW_CHOICES,
        "page_query": urlencode(query or {"show": show}) + "&",
        "matrix": confusion_matrix(run.results, list(per_route)),
        "per_route": sorted(per_route.items(), key=lambda kv: (kv[1]["f1"], kv[0])),
        "talk": conversation_figures(run.figures),
        "slowest": slowest(run.results),
        "case_page": page,
        "filters": {"show": show, "expected": expected, "predicted": predicted},
        "failed": len(run.results) - run.passed,
    }
