"""A publisher reviews the diff against production, publishes, and rolls production back."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from studio.models import Route
from tests.e2e.conftest import sign_in


def _publish_to_production(page: Page, base_url: str, note: str) -> None:
    page.goto(f"{base_url}/profiles/support/versions/")
    page.get_by_role("link", name="Publish the draft…").click()
    expect(
        page.get_by_role("heading", name=re.compile("What changes against production"))
    ).to_be_visible()
    page.get_by_label("Release note").fill(note)
    page.get_by_label("Then serve it on").select_option("production")
    expect(page.get_by_test_id("gate")).to_have_attribute("data-red", "no")  # the suite ran
    page.get_by_role("button", name="Confirm and publish").click()
    page.wait_for_url(re.compile(r".*/versions/$"))


def test_publish_with_the_diff_shown_then_roll_back(live_server, demo, page: Page) -> None:
    sign_in(page, live_server.url)
    _publish_to_production(page, live_server.url, "first release")
    expect(page.locator("#env-production")).to_contain_text("version 1")

    Route.objects.filter(profile__slug="support", name="billing").update(
        description="Money matters: invoices and charges"
    )
    page.goto(f"{live_server.url}/profiles/support/publish/")
    diff = page.locator("#diff-body")
    expect(diff).to_contain_text("billing")
    expect(diff).to_contain_text("Money matters: invoices and charges")
    page.get_by_label("Release note").fill("clearer billing")
    page.get_by_label("Then serve it on").select_option("production")
    page.get_by_role("button", name="Confirm and publish").click()
    expect(page.locator("#env-production")).to_contain_text("version 2")

    page.locator("#version-1").get_by_role("button", name="Roll back production to v1").click()
    confirm = page.get_by_test_id("confirm-promotion")
    expect(confirm).to_contain_text("Roll back production to version 1?")
    expect(confirm).to_contain_text("Money matters: invoices and charges")  # what it undoes
    confirm.get_by_role("button", name="Roll back production to v1").click()
    expect(page.locator("#env-production")).to_contain_text("version 1")
    expect(page.get_by_role("status")).to_contain_text("production now serves version 1")
