"""The playground in a real browser: live verdicts, a conversation, evidence, saving a test case."""

from __future__ import annotations

import os
import re
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.e2e.conftest import sign_in

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def _shot(page: Page, name: str) -> None:
    """With SCREENSHOTS=1, refresh the picture in docs/screenshots/."""
    if os.environ.get("SCREENSHOTS"):
        page.screenshot(path=str(SHOTS / name), full_page=True)


def open_playground(page: Page, base_url: str) -> None:
    sign_in(page, base_url)
    page.goto(f"{base_url}/profiles/support/playground/")
    expect(page.get_by_role("heading", name="Customer support")).to_be_visible()


def first_row(page: Page):  # type: ignore[no-untyped-def]
    return page.get_by_test_id("score-row").first


def test_typing_a_message_updates_the_route_and_the_bars(page: Page, live_server, demo) -> None:
    open_playground(page, live_server.url)
    message = page.get_by_label("Message")

    message.press_sequentially("why was I charged twice", delay=20)
    expect(page.get_by_test_id("verdict-route")).to_have_text("billing")
    expect(page.get_by_test_id("verdict-kind")).to_have_text("move")
    expect(page.get_by_test_id("verdict-tier")).to_have_text("scorer")
    expect(page.get_by_test_id("score-row")).to_have_count(8)
    expect(first_row(page)).to_have_attribute("data-route", "billing")
    billing = float(first_row(page).get_attribute("data-relevance") or 0)
    assert billing > 0.5

    message.fill("")
    message.press_sequentially("cancel my order", delay=20)
    expect(page.get_by_test_id("verdict-route")).to_have_text("orders")
    expect(first_row(page)).to_have_attribute("data-route", "orders")
    expect(page.locator('[data-testid="score-row"][data-route="billing"]')).not_to_have_attribute(
        "data-relevance", f"{billing:.3f}"
    )
    expect(page.get_by_test_id("verdict")).to_have_attribute("aria-live", "polite")
    expect(page.get_by_test_id("tool-kept").filter(has_text="cancel_order")).to_be_visible()
    expect(page.get_by_test_id("tool-dropped").first).to_be_visible()
    expect(page.get_by_test_id("tokens-saved")).to_have_text(re.compile(r"^[1-9]\d*$"))
    expect(page.get_by_test_id("triage-label")).to_have_text("action")


def test_a_message_of_stop_words_says_why_it_was_not_scored(page: Page, live_server, demo) -> None:
    open_playground(page, live_server.url)
    message = page.get_by_label("Message")

    message.press_sequentially("what is it", delay=20)
    expect(page.get_by_test_id("verdict-kind")).to_have_text("unmatched")
    expect(page.get_by_test_id("verdict-unscored")).to_contain_text("every word is a stop word")

    message.press_sequentially(" about my refund", delay=20)
    expect(page.get_by_test_id("verdict-route")).to_have_text("refunds")
    expect(page.get_by_test_id("verdict-unscored")).to_have_count(0)


def test_a_conversation_of_three_turns_stays_then_moves(page: Page, live_server, demo) -> None:
    open_playground(page, live_server.url)
    message = page.get_by_label("Message")

    for text in ["how much is shipping to Canada", "do you deliver on saturdays"]:
        message.fill(text)
        message.press("Enter")
        expect(page.get_by_label("Message")).to_have_value("")
    expect(page.get_by_test_id("transcript-turn")).to_have_count(2)
    expect(page.get_by_test_id("verdict-kind")).to_have_text("stay")
    expect(page.get_by_test_id("incumbent")).to_have_text("shipping")

    page.get_by_label("Message").fill("why was I charged twice")
    page.get_by_role("button", name="Send turn").click()

    turns = page.get_by_test_id("transcript-turn")
    expect(turns).to_have_count(3)
    verdicts = [turns.nth(i).get_attribute("data-verdict") for i in range(3)]
    routes = [turns.nth(i).get_attribute("data-route") for i in range(3)]
    assert verdicts == ["move", "stay", "move"]
    assert routes == ["shipping", "shipping", "billing"]
    expect(page.get_by_label("Current route")).to_have_value("billing")
    expect(page.get_by_label("Message")).to_be_focused()

    page.get_by_role("button", name="Reset").click()
    expect(page.get_by_test_id("transcript-turn")).to_have_count(0)
    expect(page.get_by_label("Current route")).to_have_value("")


def test_a_rule_win_highlights_its_evidence_in_the_message(page: Page, live_server, demo) -> None:
    open_playground(page, live_server.url)

    page.get_by_label("Message").fill("<i>I want a real person</i>")

    expect(page.get_by_test_id("verdict-tier")).to_have_text("rule")
    expect(page.get_by_test_id("verdict-route")).to_have_text("human")
    expect(page.get_by_test_id("evidence-match")).to_have_text("real person")
    expect(page.get_by_test_id("evidence-message")).to_have_text("<i>I want a real person</i>")
    expect(page.get_by_test_id("evidence-keyword")).to_have_text("real person")


def test_the_margin_slider_reruns_the_verdict_without_saving(page: Page, live_server, demo) -> None:
    open_playground(page, live_server.url)
    page.get_by_label("Message").fill("my order and my invoice")
    expect(page.get_by_test_id("verdict-kind")).to_have_text("move")

    # Under the demo's floor only billing is alive; with no floor its rivals are too.
    page.get_by_label("Floor").fill("0")
    page.get_by_label("Near-tie margin").fill("0.9")

    expect(page.get_by_test_id("verdict-kind")).to_have_text("menu")
    expect(page.get_by_test_id("margin-value")).to_have_text("0.90")
    expect(page.get_by_test_id("whatif-modified")).to_be_visible()
    expect(page.locator(".score-row.offered").first).to_be_visible()


def test_an_editor_saves_the_turn_as_a_test_case(page: Page, live_server, demo) -> None:
    from studio.models import TestCase

    open_playground(page, live_server.url)
    page.get_by_label("Message").fill("cancel my order")
    expect(page.get_by_test_id("verdict-route")).to_have_text("orders")

    page.get_by_label("Expected route").select_option("orders")
    page.get_by_role("button", name="Save as test case").click()

    expect(page.get_by_test_id("save-notice")).to_contain_text("Saved as test case")
    case = TestCase.objects.get(profile__slug="support", message="cancel my order")
    assert (case.expected_route, case.expected_triage) == ("orders", "action")
    assert case.expected_tools is not None and "cancel_order" in case.expected_tools


def test_the_page_works_without_javascript(browser, live_server, demo) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        sign_in(page, live_server.url)
        page.goto(f"{live_server.url}/profiles/support/playground/")
        page.get_by_label("Message").fill("why was I charged twice")
        page.get_by_role("button", name="Route only").click()
        expect(page.get_by_test_id("verdict-route")).to_have_text("billing")
        page.get_by_label("Message").fill("how much is shipping to Canada")
        page.get_by_role("button", name="Send turn").click()
        expect(page.get_by_test_id("transcript-turn")).to_have_count(1)
        expect(page.get_by_label("Current route")).to_have_value("shipping")
    finally:
        context.close()


def test_a_reload_keeps_the_conversation_and_it_saves_as_one_multi_turn_case(
    page: Page, live_server, demo
) -> None:
    from studio.models import TestCase

    open_playground(page, live_server.url)
    message = page.get_by_label("Message")
    for text in ["how much is shipping to Canada", "do you deliver on saturdays"]:
        message.fill(text)
        message.press("Enter")
        expect(page.get_by_label("Message")).to_have_value("")
    expect(page.get_by_test_id("transcript-turn")).to_have_count(2)

    page.reload()

    expect(page.get_by_test_id("transcript-turn")).to_have_count(2)
    expect(page.get_by_label("Current route")).to_have_value("shipping")
    page.get_by_role("button", name="Save the conversation as a test case").click()
    expect(page.get_by_test_id("conversation-notice")).to_contain_text("2 turns")
    saved = TestCase.objects.filter(profile__slug="support", conversation="conversation 1")
    assert [(c.turn, c.message, c.expected_route, c.expected_verdict) for c in saved] == [
        (1, "how much is shipping to Canada", "shipping", "move"),
        (2, "do you deliver on saturdays", "shipping", "stay"),
    ]
    _shot(page, "playground-conversation-saved.png")


def test_a_win_by_meaning_names_the_example_it_is_close_to(page: Page, live_server, demo) -> None:
    from studio.models import Profile, Route
    from tests.routing_core.test_semantic import _routes

    meaning = Profile.objects.create(slug="meaning", name="Meaning")
    for order, route in enumerate(_routes()):
        Route.objects.create(
            profile=meaning, name=route["name"], order=order, examples=route["examples"]
        )
    lights = next(r["examples"] for r in _routes() if r["name"] == "lights")
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/meaning/playground/")

    page.get_by_label("Message").press_sequentially("a question about the flashlight", delay=10)

    expect(page.get_by_test_id("verdict-route")).to_have_text("lights")
    example = page.get_by_test_id("evidence-example")
    expect(example).to_have_count(1)
    expect(example).to_contain_text("close in meaning to its example")
    assert example.locator("q").inner_text() in lights  # one of the route's own examples


def test_in_a_conversation_a_yes_stays_and_a_new_topic_moves_each_saying_why(
    page: Page, live_server, demo, travel
) -> None:
    # The engine's own conversation fixture (tests/packs/travel_routes.json) as a profile.
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/travel/playground/")
    for text in ["my suitcase did not arrive", "yes please", "now I need a hotel"]:
        page.get_by_label("Message").fill(text)
        page.get_by_role("button", name="Send turn").click()
        expect(page.get_by_label("Message")).to_have_value("")

    turns = page.get_by_test_id("transcript-turn")
    expect(turns).to_have_count(3)
    expect(turns.nth(1)).to_have_attribute("data-verdict", "stay")
    expect(turns.nth(1)).to_have_attribute("data-route", "baggage")
    expect(turns.nth(1).get_by_test_id("transcript-why")).to_contain_text(
        "only acknowledges, confirms or answers"
    )
    expect(turns.nth(2)).to_have_attribute("data-verdict", "move")
    expect(turns.nth(2)).to_have_attribute("data-route", "hotel")
    expect(turns.nth(2).get_by_test_id("transcript-words")).to_contain_text(
        "moved from baggage to hotel"
    )
    expect(turns.nth(2).get_by_test_id("transcript-why")).to_contain_text("hotel")
    expect(page.get_by_test_id("verdict-why")).to_contain_text("hotel")
    _shot(page, "playground-conversation-reasons.png")


def test_the_playground_says_which_language_a_message_is_in(page: Page, live_server, demo) -> None:
    open_playground(page, live_server.url)
    message = page.get_by_label("Message")

    message.fill("¿Por qué me cobraron dos veces este mes en la tarjeta?")
    expect(page.get_by_test_id("verdict-language")).to_have_text("Written in Spanish.")

    message.fill("ok")  # too short to tell: nothing is said rather than a guess
    expect(page.get_by_test_id("verdict-route")).to_be_visible()
    expect(page.get_by_test_id("verdict-language")).to_have_count(0)
