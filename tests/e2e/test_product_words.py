"""Browser tests of issue 19 items 8–16, as a product person clicks: the rule builder, people and
roles, the read-only route page, history and lint in words, and no CSP errors on htmx swaps.

With SCREENSHOTS=1 the tests also refresh the pictures in docs/screenshots/.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from playwright.sync_api import ConsoleMessage, Page, expect

from tests.e2e.conftest import sign_in

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def _shot(page: Page, name: str) -> None:
    if os.environ.get("SCREENSHOTS"):
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / name), full_page=True)


def _csp_errors(page: Page) -> list[str]:
    """Collects what Chromium's console says about the Content-Security-Policy from now on."""
    seen: list[str] = []

    def note(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text:
            seen.append(message.text)

    page.on("console", note)
    return seen


def test_a_person_builds_an_all_of_rule_and_sees_its_examples_checked(
    page: Page, live_server, demo
) -> None:
    csp = _csp_errors(page)
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/rules/")
    add = page.locator("form.add-form")

    add.get_by_label("Match").select_option("all")
    expect(add.get_by_label("Any of these keywords")).to_be_hidden()
    add.get_by_label("Condition 1", exact=True).select_option("keywords")
    add.get_by_label("Condition 1 text").fill("invoice, receipt")
    add.get_by_label("Condition 2", exact=True).select_option("regex")
    add.get_by_label("Condition 2 text").fill(r"\bcopy\b")
    add.get_by_label("Examples").fill("a copy of my invoice\nmy invoice please")
    checks = add.get_by_test_id("rule-check")

    expect(checks).to_have_count(2)
    expect(checks.nth(0)).to_have_attribute("data-match", "yes")
    expect(checks.nth(1)).to_have_attribute("data-match", "no")
    add.get_by_label("Try a message").fill("copy of the receipt")
    expect(add.get_by_test_id("rule-tried")).to_contain_text("caught")
    _shot(page, "rule-builder.png")
    add.get_by_role("button", name="Add rule").click()

    expect(page.locator("table.rules")).to_contain_text(
        "all of: any of ‘invoice’, ‘receipt’; the pattern \\bcopy\\b"
    )
    assert csp == []


def test_htmx_swaps_raise_no_content_security_policy_errors(page: Page, live_server, demo) -> None:
    csp = _csp_errors(page)
    sign_in(page, live_server.url)
    base = f"{live_server.url}/profiles/support"

    page.goto(f"{base}/playground/")
    page.get_by_label("Message").fill("why was I charged twice")
    expect(page.get_by_test_id("verdict-words")).to_contain_text("Chose billing")
    page.goto(f"{base}/policy/")
    page.get_by_role("button", name="Save policy").click()
    expect(page.get_by_test_id("saved")).to_contain_text("Saved at")
    page.goto(f"{base}/")
    page.locator("tr[data-route=billing]").get_by_role("link", name="Edit").click()
    expect(page.locator("tr.edit-row")).to_be_visible()

    assert csp == []
    assert page.evaluate("document.querySelectorAll('[style]').length") == 0


def test_an_admin_adds_a_person_who_sets_a_password_through_the_link(
    page: Page, live_server, demo, browser
) -> None:
    sign_in(page, live_server.url)
    page.get_by_role("link", name="People").click()
    add = page.locator("#add-person")
    add.get_by_label("Username").fill("robin")
    add.get_by_label("viewer").check()
    add.get_by_label("editor").check()
    add.get_by_role("button", name="Add person").click()
    flash = page.locator(".flash li").first
    expect(flash).to_contain_text("one-time link")
    link = re.search(r"https?://\S+", flash.inner_text())
    assert link is not None
    row = page.locator("tr[data-username=robin]")
    expect(row.get_by_label("editor")).to_be_checked()
    _shot(page, "people.png")

    other = browser.new_context()
    robin = other.new_page()
    robin.goto(link.group(0))
    robin.get_by_label(re.compile(r"^New password:?$")).fill("robin-Chose-this-9")
    robin.get_by_label("New password confirmation").fill("robin-Chose-this-9")
    robin.get_by_role("button", name="Set password").click()
    expect(robin.locator(".flash")).to_contain_text("Your password is set")
    sign_in(robin, live_server.url, "robin", "robin-Chose-this-9")
    expect(robin.get_by_role("link", name="People")).to_have_count(0)  # not an admin
    other.close()

    page.reload()
    page.locator("tr[data-username=robin]").get_by_role("button", name="Deactivate robin").click()
    expect(page.locator("tr[data-username=robin]")).to_contain_text("deactivated")
    expect(page.locator("#people-history")).to_contain_text("Deactivated person")


def test_a_viewer_reads_a_route_and_the_history_in_words(page: Page, live_server, demo) -> None:
    sign_in(page, live_server.url)
    page.get_by_role("link", name="Customer support").click()
    _shot(page, "routes.png")  # the tabs in their three groups
    page.locator("tr[data-route=billing]").get_by_role("link", name="billing").click()

    view = page.get_by_test_id("route-view")
    expect(view.get_by_test_id("route-examples").locator("li").first).to_be_visible()
    expect(view).to_contain_text("Test cases")
    _shot(page, "route-view.png")

    page.get_by_role("link", name="History").click()
    expect(page.locator("body")).not_to_contain_text("environment.promote")
    expect(page.get_by_test_id("history-entry").first).to_be_visible()
    _shot(page, "history.png")
    page.get_by_role("link", name="Lint").click()
    expect(page.locator("body")).not_to_contain_text("routes[")
    _shot(page, "lint.png")


def test_the_scores_draw_the_floor_on_scores_and_the_margin_on_the_gap(
    page: Page, live_server, demo
) -> None:
    csp = _csp_errors(page)
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/playground/")
    page.get_by_label("Message").fill("where is my refund")  # the demo's deliberate near-tie

    expect(page.get_by_test_id("verdict-words")).to_be_visible()
    expect(page.get_by_test_id("gap-meter")).to_be_visible()
    rows = page.get_by_test_id("score-row")
    expect(rows.first.get_by_test_id("score-bar")).to_be_visible()
    _shot(page, "playground-scores.png")
    page.goto(f"{live_server.url}/profiles/support/policy/")
    page.get_by_text("How it is computed").first.click()
    expect(page.locator("details.formula").first).to_have_attribute("open", "")
    _shot(page, "policy.png")
    assert csp == []


def test_a_person_starts_the_triage_lexicons_from_spanish_and_english(
    page: Page, live_server, demo
) -> None:
    csp = _csp_errors(page)
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/lexicons/")
    languages = page.get_by_test_id("languages")
    expect(languages.get_by_label("English")).to_be_checked()

    languages.get_by_label("Español").check()
    languages.get_by_role("button", name=re.compile("Fill the boxes")).click()

    expect(page.get_by_test_id("started-from")).to_contain_text("English + Español")
    expect(page.get_by_label("Action verbs")).to_have_value(re.compile(r"\bcancela\b"))
    page.get_by_role("button", name="Save lexicons").click()
    expect(page.get_by_test_id("saved").or_(page.locator(".flash"))).to_be_visible()

    page.goto(f"{live_server.url}/profiles/support/playground/")
    page.get_by_label(re.compile("message", re.IGNORECASE)).first.fill("Cancela mi suscripción")
    expect(page.get_by_test_id("triage-label")).to_have_text("action")
    assert csp == []
