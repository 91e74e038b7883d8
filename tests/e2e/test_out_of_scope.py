"""Out-of-scope examples in a real browser: added on the policy page, felt in the playground."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import sign_in


def test_an_out_of_scope_example_added_on_the_policy_page_unmatches_messages_like_it(
    page: Page, live_server, demo
) -> None:
    sign_in(page, live_server.url)
    playground = f"{live_server.url}/profiles/support/playground/"
    page.goto(playground)
    page.get_by_label("Message").press_sequentially("which pizza is best", delay=20)
    expect(page.get_by_test_id("verdict-route")).to_have_text("shipping")

    page.goto(f"{live_server.url}/profiles/support/policy/")
    examples = page.get_by_label("Out-of-scope examples")
    expect(examples).to_contain_text("tell me a joke")  # the demo ships some
    examples.press("Control+End")
    examples.press_sequentially("\nwhich pizza toppings do you like best", delay=5)
    page.get_by_role("button", name="Save policy").click()
    expect(page.get_by_label("Out-of-scope examples")).to_contain_text("pizza toppings")

    page.goto(playground)
    page.get_by_label("Message").press_sequentially("which pizza is best", delay=20)
    expect(page.get_by_test_id("verdict-kind")).to_have_text("unmatched")
    expect(page.get_by_test_id("verdict-unscored")).to_contain_text(
        "it reads like this profile's out-of-scope examples"
    )
    # Where it went before is still named, as the route its words lean to.
    expect(page.get_by_test_id("verdict-nearest")).to_contain_text(
        "Of your routes, shipping came nearest"
    )
