"""URLs of the test-suite and authoring-help pages (included by studio.urls)."""

from __future__ import annotations

from django.urls import URLPattern, path

from studio.suites import case_views as suites
from studio.suites import checkup_views as authoring

_P = "profiles/<slug:slug>/"

urlpatterns: list[URLPattern] = [
    path(f"{_P}tests/", suites.test_cases, name="tests"),
    path(f"{_P}tests/add/", suites.case_add, name="tests-add"),
    path(f"{_P}tests/import/", suites.case_import, name="tests-import"),
    path(f"{_P}tests/export.jsonl", suites.case_export, name="tests-export"),
    path(f"{_P}tests/export.csv", suites.case_export_csv, name="tests-export-csv"),
    path(f"{_P}tests/<int:pk>/", suites.case_row, name="tests-row"),
    path(f"{_P}tests/<int:pk>/edit/", suites.case_edit, name="tests-edit"),
    path(f"{_P}tests/<int:pk>/delete/", suites.case_delete, name="tests-delete"),
    path(f"{_P}runs/", suites.run_start, name="test-run-start"),
    path(f"{_P}runs/<int:pk>/", suites.run_detail, name="test-run"),
    path(f"{_P}lint/", authoring.lint, name="lint"),
    path(f"{_P}overlap/", authoring.overlap, name="overlap"),
    path(f"{_P}overlap/run/", authoring.overlap_start, name="overlap-start"),
    path(f"{_P}tuning/", authoring.tuning_page, name="tuning"),
    path(f"{_P}tuning/apply/", authoring.tuning_apply, name="tuning-apply"),
]
