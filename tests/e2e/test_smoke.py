"""The browser starts and a person can sign in and see the demo profile."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import sign_in


def test_a_person_signs_in_and_sees_the_demo_profile(page: Page, live_server, demo) -> None:
    sign_in(page, live_server.url)
    page.get_by_role("link", name="Customer support").click()
    expect(page.get_by_role("heading", name="Customer support")).to_be_visible()
    expect(page.locator("table")).to_contain_text("billing")
    expect(page.locator("table")).to_contain_text("refunds")


def test_signing_in_with_a_wrong_password_is_refused(page: Page, live_server, demo) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("demo")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("body")).to_contain_text("Please enter a correct username and password")
