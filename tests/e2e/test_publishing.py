"""A publisher reviews the diff against production, publishes, and rolls production back."""

from __future__ import annotations

import os
import re
from pathlib import Path

from playwright.sync_api import Page, expect

from studio.models import Route
from tests.e2e.conftest import sign_in

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


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


def _shot(page: Page, name: str) -> None:
    """With SCREENSHOTS=1, refresh the picture in docs/screenshots/ (the top of the page)."""
    if os.environ.get("SCREENSHOTS"):
        page.screenshot(path=str(SHOTS / name))


def test_the_review_shows_a_red_gate_and_refuses_it_without_a_reason(
    live_server, demo, page: Page
) -> None:
    from studio.models import AuditEntry, TestCase, Version

    TestCase.objects.create(
        profile=Route.objects.get(profile__slug="support", name="billing").profile,
        message="where is my parcel",
        expected_route="shipping",  # it goes to order_status: this case fails
    )
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/publish/")

    gate = page.get_by_test_id("gate")
    expect(gate.get_by_test_id("gate-suite")).to_contain_text(re.compile(r"\d+ of \d+"))
    expect(gate).to_have_attribute("data-red", "yes")
    expect(gate.get_by_test_id("gate-verdict")).to_contain_text("1 of ")
    expect(gate.get_by_test_id("gate-lint")).to_be_visible()
    expect(page.locator("#diff-body")).to_contain_text("Verdict flips")
    _shot(page, "publish-gate-red.png")

    page.get_by_label("Release note").fill("first release")
    page.get_by_role("button", name="Confirm and publish").click()
    expect(page.get_by_role("alert").first).to_contain_text("say why you publish anyway")
    assert not Version.objects.exists()

    page.get_by_label(re.compile("Why publish although")).fill("the parcel case is ticket 12")
    page.get_by_role("button", name="Confirm and publish").click()
    page.wait_for_url(re.compile(r".*/versions/$"))
    entry = AuditEntry.objects.get(action="version.publish_red")
    assert entry.after["reason"] == "the parcel case is ticket 12"


def test_promoting_asks_for_confirmation_naming_the_version(live_server, demo, page: Page) -> None:
    sign_in(page, live_server.url)
    _publish_to_production(page, live_server.url, "first release")
    Route.objects.filter(profile__slug="support", name="billing").update(
        keywords=["invoice", "charge", "fee"]
    )
    page.goto(f"{live_server.url}/profiles/support/publish/")
    page.get_by_label("Release note").fill("a fee keyword")
    page.get_by_label("Then serve it on").select_option("staging")
    expect(page.get_by_test_id("gate")).to_have_attribute("data-red", "no")
    page.get_by_role("button", name="Confirm and publish").click()

    page.locator("#version-2").get_by_role("button", name="Promote to production").click()

    confirm = page.get_by_test_id("confirm-promotion")
    expect(confirm).to_contain_text("Serve version 2 on production?")
    expect(confirm).to_contain_text("serves version 1 now")
    expect(confirm.locator("#diff-body")).to_contain_text("+ fee")
    _shot(page, "promote-confirm.png")
    expect(page.locator("#env-production")).to_have_count(0)  # nothing changed yet
    confirm.get_by_role("button", name="Serve v2 on production").click()
    expect(page.locator("#env-production")).to_contain_text("version 2")


def test_a_refused_publish_keeps_the_note_and_environment_and_then_publishes_there(
    live_server, demo, page: Page
) -> None:
    from studio.models import Environment, TestCase, Version

    TestCase.objects.create(
        profile=Route.objects.get(profile__slug="support", name="billing").profile,
        message="where is my parcel",
        expected_route="shipping",  # it goes to order_status: the gate is red
    )
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/versions/")
    page.get_by_role("link", name="Publish the draft…").click()
    expect(page.get_by_test_id("gate")).to_have_attribute("data-red", "yes")
    page.get_by_label("Release note").fill("spring fares")
    page.get_by_label("Then serve it on").select_option("production")
    page.get_by_role("button", name="Confirm and publish").click()

    expect(page.get_by_role("alert").first).to_contain_text("say why you publish anyway")
    expect(page.get_by_label("Release note")).to_have_value("spring fares")
    expect(page.get_by_label("Then serve it on")).to_have_value("production")
    assert not Version.objects.exists()

    page.get_by_label(re.compile("Why publish although")).fill("the parcel case is ticket 12")
    page.get_by_role("button", name="Confirm and publish").click()
    page.wait_for_url(re.compile(r".*/versions/$"))
    version = Version.objects.get()
    assert version.note == "spring fares"
    production = Environment.objects.get(profile__slug="support", name="production")
    assert production.version == version
