"""Deleting a route in the browser first says which test cases and rules refer to it."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import Page, expect

from studio.models import Route
from tests.e2e.conftest import sign_in

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def test_deleting_a_route_names_its_cases_and_rules_first(live_server, demo, page: Page) -> None:
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/")
    human = Route.objects.get(profile__slug="support", name="human")
    row = page.locator(f"#route-{human.pk}")

    row.get_by_role("link", name="Delete").click()

    references = page.get_by_test_id("delete-references")
    expect(references).to_contain_text("“I want a real person now” expects it")
    expect(references).to_contain_text("keywords → human")
    if os.environ.get("SCREENSHOTS"):
        page.screenshot(path=str(SHOTS / "route-delete-references.png"))
    assert Route.objects.filter(pk=human.pk).exists()  # nothing deleted by looking
