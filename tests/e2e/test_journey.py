"""The journey of issue 9, as far as its pages exist: sign in, build a profile, see it valid.

Later steps (type in the playground, save a test case, run the suite, publish, download the pack
and route it with `routing-core route`) join this journey when their pages land.
"""

from __future__ import annotations

import re

from playwright.sync_api import ConsoleMessage, Page, expect

from tests.e2e.conftest import sign_in

ROUTES = {
    "billing": ("invoices, charges and payment methods", "why was I charged twice\nsend me my invoice\nupdate my card"),
    "shipping": ("delivery times and costs", "where is my parcel\nhow long does delivery take\nshipping to Spain"),
    "refunds": ("money back for an order", "I want a refund\ngive me my money back\nrefund my order"),
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
    console_errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        # The browser asks for /favicon.ico on its own; the studio has none.
        if message.type == "error" and not message.location["url"].endswith("/favicon.ico"):
            console_errors.append(message.text)

    page.on("console", on_console)
    sign_in(page, live_server.url)

    create = page.locator("form", has=page.get_by_role("button", name="Create profile"))
    create.get_by_label("Slug").fill("returns")
    create.get_by_label("Name").fill("Returns desk")
    create.get_by_label("Description").fill("Refunds, shipping and billing for returns")
    create.get_by_role("button", name="Create profile").click()

    page.wait_for_url(re.compile(r".*/profiles/returns/$"))
    expect(page.get_by_role("heading", name="Returns desk")).to_be_visible()
    badge = page.get_by_test_id("pack-badge")
    expect(badge).to_contain_text("problem")

    for name, (description, examples) in ROUTES.items():
        add_route(page, name, description, examples)

    expect(page.locator("table.routes tbody tr[data-route]")).to_have_count(3)
    expect(badge).to_have_text("valid pack")
    page.reload()  # the server agrees: not just the swapped fragment
    expect(page.get_by_test_id("pack-badge")).to_have_text("valid pack")
    assert console_errors == [], "the pages logged errors (a CSP violation?)"
