"""Two people edit one route at once: the second keeps their text, sees what the first changed
beside it, and saves theirs on top."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import sign_in

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def _edit_billing(page: Page, base_url: str) -> None:
    from studio.models import Route

    route = Route.objects.get(profile__slug="support", name="billing")
    page.goto(f"{base_url}/profiles/support/")
    page.locator(f"#route-{route.pk}").get_by_role("link", name="Edit").click()
    expect(page.locator(".edit-row")).to_be_visible()


def test_the_second_editor_keeps_their_text_and_applies_it_on_top(
    browser: Browser, live_server, demo, page: Page
) -> None:
    from django.contrib.auth.models import User

    from studio.models import Route
    from studio.shared.roles import grant

    grant(User.objects.create_user("maria", password="maria-pw"), "editor")
    maria_context = browser.new_context(viewport={"width": 1280, "height": 900})
    maria = maria_context.new_page()
    try:
        sign_in(maria, live_server.url, "maria", "maria-pw")
        sign_in(page, live_server.url)
        _edit_billing(maria, live_server.url)
        _edit_billing(page, live_server.url)

        maria.locator(".edit-row").get_by_label("Description").fill(
            "Money: invoices, refunds of charges"
        )
        maria.locator(".edit-row").get_by_role("button", name="Save").click()
        expect(maria.locator(".edit-row")).to_have_count(0)

        row = page.locator(".edit-row")
        examples = row.get_by_label("Examples")
        mine = examples.input_value() + "\nI was charged twice this month"
        examples.fill(mine)
        row.get_by_role("button", name="Save").click()

        conflict = page.get_by_test_id("edit-conflict")
        expect(conflict).to_contain_text("changed by maria at")
        field = conflict.locator('[data-field="description"]')
        expect(field.get_by_test_id("theirs")).to_have_text("Money: invoices, refunds of charges")
        expect(row.get_by_label("Examples")).to_have_value(mine)  # nothing I typed is lost
        expect(row.get_by_label("Description")).to_have_value("Money: invoices, refunds of charges")
        if os.environ.get("SCREENSHOTS"):
            page.screenshot(path=str(SHOTS / "route-edit-conflict.png"))

        page.get_by_role("button", name="Save mine on top of theirs").click()
        expect(page.locator(".edit-row")).to_have_count(0)
        route = Route.objects.get(profile__slug="support", name="billing")
        assert route.description == "Money: invoices, refunds of charges"
        assert route.examples[-1] == "I was charged twice this month"
    finally:
        maria_context.close()
