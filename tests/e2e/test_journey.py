"""The journey of issue 9: from a new profile to a downloaded pack that routes like the playground.

Sign in, create a profile, add three routes, see the pack become valid, type in the playground,
save the turn as a test case, run the suite, publish, download the pack and route the same
message with `routing-core route`: the verdict must be the one the playground showed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from playwright.sync_api import ConsoleMessage, Page, expect

from tests.e2e.conftest import sign_in

ROUTES = {
    "billing": ("invoices, charges and payment methods", "why was I charged twice\nsend me my invoice\nupdate my card\nmy bill is wrong\nwhich payment methods do you take"),
    "shipping": ("delivery times and costs", "where is my parcel\nhow long does delivery take\nshipping to Spain\nmy package is late\nhow much is delivery"),
    "refunds": ("money back for an order", "I want a refund\ngive me my money back\nrefund my order\nwhen will my refund arrive\ncan I return this for a refund"),
}  # fmt: skip


def add_route(page: Page, name: str, description: str, examples: str) -> None:
    form = page.locator("form.add-form")
    form.get_by_label("Name").fill(name)
    form.get_by_label("Description").fill(description)
    form.get_by_label("Examples").fill(examples)
    form.get_by_role("button", name="Add route").click()
    expect(page.locator(f'tr[data-route="{name}"]')).to_be_visible()


def test_a_person_builds_a_new_profile_from_nothing_to_a_valid_pack(
    page: Page, live_server, demo
) -> None:
    build_returns_desk(page, live_server.url)


def build_returns_desk(page: Page, base_url: str) -> None:
    """Sign in, create the `returns` profile and add three routes until the pack is valid."""
    console_errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            console_errors.append(f"{message.text} ({message.location['url']})")

    page.on("console", on_console)
    sign_in(page, base_url)

    create = page.locator("form", has=page.get_by_role("button", name="Create profile"))
    create.get_by_label("Slug").fill("returns")
    create.get_by_label("Name").fill("Returns desk")
    create.get_by_label("Description").fill("Refunds, shipping and billing for returns")
    create.get_by_role("button", name="Create profile").click()

    page.wait_for_url(re.compile(r".*/profiles/returns/$"))
    expect(page.get_by_role("heading", name="Returns desk")).to_be_visible()
    badge = page.get_by_test_id("pack-badge")
    expect(badge).to_contain_text("problem")
    notice = page.get_by_test_id("few-out-of-scope")
    expect(notice).to_contain_text("does not yet learn the built-in set")

    for name, (description, examples) in ROUTES.items():
        add_route(page, name, description, examples)

    expect(page.locator("table.routes tbody tr[data-route]")).to_have_count(3)
    expect(badge).to_have_text("valid pack")
    # Five examples a route: the notice on the same page says so without a reload.
    expect(notice).to_contain_text("routing also learns a built-in set")
    page.reload()  # the server agrees: not just the swapped fragment
    expect(page.get_by_test_id("pack-badge")).to_have_text("valid pack")
    assert console_errors == [], "the pages logged errors (a CSP violation?)"


MESSAGE = "I want my money back for this order"


def test_the_playground_verdict_is_what_the_downloaded_pack_gives_routing_core(
    page: Page, live_server, demo, tmp_path: Path
) -> None:
    build_returns_desk(page, live_server.url)
    base = f"{live_server.url}/profiles/returns"

    page.goto(f"{base}/playground/")
    page.get_by_label("Message").fill(MESSAGE)
    expect(page.get_by_test_id("verdict-route")).to_have_text("refunds")
    shown = {
        "route": (page.get_by_test_id("verdict-route").text_content() or "").strip(),
        "verdict": (page.get_by_test_id("verdict-kind").text_content() or "").strip(),
        "by": (page.get_by_test_id("verdict-tier").text_content() or "").strip(),
    }
    page.get_by_label("Expected route").select_option("refunds")
    page.get_by_role("button", name="Save as test case").click()
    expect(page.get_by_test_id("save-notice")).to_contain_text("Saved as test case")

    page.goto(f"{base}/tests/")
    expect(page.locator("body")).to_contain_text(MESSAGE)
    page.get_by_test_id("run-suite").click()
    expect(page.locator("#run")).to_have_attribute("data-status", "done")
    expect(page.get_by_test_id("figures")).to_be_visible()

    page.goto(f"{base}/versions/")
    page.get_by_role("link", name="Publish the draft…").click()
    page.get_by_label("Release note").fill("first release of the returns desk")
    page.get_by_label("Then serve it on").select_option("production")
    page.get_by_role("button", name="Confirm and publish").click()
    expect(page.locator("#env-production")).to_contain_text("version 1")

    with page.expect_download() as download:
        page.locator("#version-1").get_by_role("link", name="Download").click()
    assert download.value.suggested_filename == "returns-v1.json"
    pack = tmp_path / download.value.suggested_filename
    download.value.save_as(pack)

    routed = subprocess.run(
        [sys.executable, "-m", "routing_core.cli", "route", str(pack), MESSAGE, "--json"],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    event = json.loads(routed.stdout)
    assert {"route": event["route"], "verdict": event["verdict"], "by": event["by"]} == shown
