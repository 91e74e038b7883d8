"""Browser tests of the test suite: import with a bad row, run, open a confusion cell, tune, lint.

With SCREENSHOTS=1 the tests also refresh the pictures in docs/screenshots/.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from playwright.sync_api import Page, expect

from studio.models import Profile
from tests.e2e.conftest import sign_in

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
CASES = """text,expected,expected_verdict
where is my parcel,billing,
refund me,refunds,jump
how much is shipping to Spain,shipping,
hello there,,
"""


def _shot(page: Page, name: str) -> None:
    if os.environ.get("SCREENSHOTS"):
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / name), full_page=True)


def test_a_person_imports_cases_runs_the_suite_and_opens_a_confusion_cell(
    page: Page, live_server, demo
) -> None:
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/tests/import/")
    page.get_by_label("Paste cases").fill(CASES)
    page.get_by_role("button", name="Check and import").click()
    expect(page.get_by_test_id("import-preview")).to_contain_text("line 3")
    page.get_by_test_id("confirm-import").click()
    expect(page.locator(".flash")).to_contain_text("Imported 3 test case(s), skipped 1 bad row(s)")

    page.get_by_test_id("run-suite").click()
    expect(page.get_by_test_id("figures")).to_be_visible()
    expect(page.locator("#run")).to_have_attribute("data-status", "done")

    cell = page.locator(
        '[data-testid="confusion-cell"][data-expected="billing"][data-predicted="order_status"]'
    )
    cell.click()
    expect(page.get_by_test_id("case-list")).to_contain_text("Expected billing, got order_status")
    rows = page.get_by_test_id("case-list").get_by_test_id("result-row")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("where is my parcel")
    expect(page).to_have_url(re.compile(r"expected=billing&predicted=order_status"))
    page.get_by_role("link", name="all", exact=True).click()
    expect(page.get_by_test_id("case-list")).to_contain_text("All cases")
    _shot(page, "suite-results.png")

    page.goto(f"{live_server.url}/profiles/support/tests/")
    expect(page.get_by_test_id("last-run")).to_contain_text("passed")
    _shot(page, "test-cases.png")


def test_a_person_tunes_the_thresholds_and_applies_the_suggestion(
    page: Page, live_server, demo
) -> None:
    # The demo's own thresholds are already the best on its cases (its out-of-scope examples
    # keep the out-of-scope case unmatched): start from a margin that makes menus of most turns.
    support = Profile.objects.get(slug="support")
    support.near_tie_margin = 0.9
    support.save()
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/tuning/")
    expect(page.get_by_test_id("suggestion")).to_contain_text("It maximises")
    expect(page.get_by_test_id("sweep-chart").locator("svg")).to_be_visible()
    expect(page.get_by_test_id("sweep-chart").locator("polyline")).to_have_count(3)
    _shot(page, "tuning.png")

    page.get_by_test_id("apply-suggestion").click()
    expect(page.locator(".flash")).to_contain_text("Applied floor")
    expect(page.get_by_test_id("suggestion")).to_contain_text("already applied")


def test_a_person_reads_lint_findings_and_follows_one_to_its_route(
    page: Page, live_server, demo
) -> None:
    support = Profile.objects.get(slug="support")
    billing = support.routes.get(name="billing")
    billing.examples = [*billing.examples, "track my package"]  # also an order_status example
    billing.save()
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/lint/")
    finding = page.locator('[data-testid="lint-finding"][data-kind="duplicate-example"]').first
    expect(finding).to_contain_text("the same example is under")
    _shot(page, "lint.png")
    route = finding.locator("a.mono").inner_text()
    finding.locator("a.mono").click()
    expect(page.locator("tr.edit-row input[name=name]")).to_have_value(route)


def test_the_overlap_checkup_shows_progress_then_its_findings(
    page: Page, live_server, demo
) -> None:
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/overlap/")
    page.get_by_test_id("run-overlap").click()
    expect(page.get_by_test_id("overlap-results")).to_be_visible()
    _shot(page, "overlap.png")
