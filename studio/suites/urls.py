"""URLs of the test-suite pages: cases, runs, lint, the overlap checkup, tuning, a case's fix."""

from __future__ import annotations

from django.urls import URLPattern, path

from studio.suites import case_views, checkup_views, repair_views

_P = "profiles/<slug:slug>/"

urlpatterns: list[URLPattern] = [
    path(f"{_P}tests/", case_views.test_cases, name="tests"),
    path(f"{_P}tests/add/", case_views.case_add, name="tests-add"),
    path(f"{_P}tests/import/", case_views.case_import, name="tests-import"),
    path(f"{_P}tests/export.jsonl", case_views.case_export, name="tests-export"),
    path(f"{_P}tests/export.csv", case_views.case_export_csv, name="tests-export-csv"),
    path(f"{_P}tests/<int:pk>/", case_views.case_row, name="tests-row"),
    path(f"{_P}tests/<int:pk>/edit/", case_views.case_edit, name="tests-edit"),
    path(f"{_P}tests/<int:pk>/delete/", case_views.case_delete, name="tests-delete"),
    path(f"{_P}runs/", case_views.run_start, name="test-run-start"),
    path(f"{_P}runs/<int:pk>/", case_views.run_detail, name="test-run"),
    path(f"{_P}lint/", checkup_views.lint, name="lint"),
    path(f"{_P}overlap/", checkup_views.overlap, name="overlap"),
    path(f"{_P}overlap/run/", checkup_views.overlap_start, name="overlap-start"),
    path(f"{_P}tuning/", checkup_views.tuning_page, name="tuning"),
    path(f"{_P}tuning/apply/", checkup_views.tuning_apply, name="tuning-apply"),
    path(f"{_P}tests/<int:pk>/fix/", repair_views.case_fix, name="tests-fix"),
    path(f"{_P}tests/<int:pk>/fix/search/", repair_views.case_fix_search, name="tests-fix-search"),
    path(f"{_P}tests/<int:pk>/fix/cancel/", repair_views.case_fix_cancel, name="tests-fix-cancel"),
    path(f"{_P}tests/<int:pk>/fix/again/", repair_views.case_fix_again, name="tests-fix-again"),
]
