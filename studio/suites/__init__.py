"""Test suites: test cases (saved, imported, exported), runs and their reports, lint, the
overlap checkup, threshold tuning, and the smallest fix for a failing case.

Other areas use what this package re-exports below, and nothing else of it.
"""

from __future__ import annotations

from studio.suites.cases import Turn, add_test_case, delete_case, save_case, save_conversation
from studio.suites.checkups import LintRow, cached_lint_rows
from studio.suites.reports import Chart, Dot, Series, Tick
from studio.suites.runs import interrupt_stale, start_run, suite_cases

__all__ = [
    "Chart",
    "Dot",
    "LintRow",
    "Series",
    "Tick",
    "Turn",
    "add_test_case",
    "cached_lint_rows",
    "delete_case",
    "interrupt_stale",
    "save_case",
    "save_conversation",
    "start_run",
    "suite_cases",
]
