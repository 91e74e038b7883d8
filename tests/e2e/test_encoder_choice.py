"""The sentence encoder chosen on the policy page, in a real browser: kept, and used."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from routing_core.scorers.embedding import encoder_installed
from tests.e2e.conftest import sign_in


def test_a_hybrid_scorer_on_an_encoder_that_knows_many_languages(
    page: Page, live_server, demo
) -> None:
    sign_in(page, live_server.url)
    policy = f"{live_server.url}/profiles/support/policy/"
    page.goto(policy)
    page.get_by_label("Scorer kind").select_option("hybrid")
    page.get_by_label("Sentence encoder").select_option("multilingual-e5-small")
    page.get_by_role("button", name="Save policy").click()
    expect(page.get_by_test_id("saved")).to_be_visible()

    page.goto(policy)  # as stored, not as the browser kept the form
    expect(page.get_by_label("Scorer kind")).to_have_value("hybrid")
    expect(page.get_by_label("Sentence encoder")).to_have_value("multilingual-e5-small")

    page.goto(f"{live_server.url}/profiles/support/playground/")
    # "I need my money back", in Russian: the routes' examples are all English. The studio's
    # set-up installs the encoder (Makefile); without it the playground says it cannot run
    # the scorer (studio/publishing/tests/test_publishing_pages.py).
    assert encoder_installed("multilingual-e5-small"), (
        "make installs the encoders that read many languages"
    )
    page.get_by_label("Message").press_sequentially("мне нужен возврат денег", delay=20)
    expect(page.get_by_test_id("verdict-route")).to_have_text("refunds")
    expect(page.get_by_test_id("verdict-reading")).to_have_text(
        "Read by the sentence encoder alone: it does not look written in English, the routes'"
        " examples' language."
    )

    page.get_by_label("Message").fill("where is my parcel")
    expect(page.get_by_test_id("verdict-route")).to_have_text("order_status")
    expect(page.get_by_test_id("verdict-reading")).to_have_count(0)
