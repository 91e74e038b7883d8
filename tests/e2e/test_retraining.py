"""After an example edit the playground answers at once from the last model, says so, and shows
the new model's verdict by itself when a real worker process has trained it (no reload)."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from studio.models import Profile, Route, TrainedModel
from studio.shared.edits import save_item
from tests.e2e.conftest import sign_in
from tests.job_worker import Workers, wait_for

MESSAGE = "xqzv"  # no word, and no part of one, that any demo route knows


def test_an_example_edit_is_retrained_while_the_playground_keeps_answering(
    page: Page, live_server, demo, job_worker: Workers
) -> None:  # type: ignore[no-untyped-def]
    profile = Profile.objects.get(slug="support")
    wait_for(
        lambda: TrainedModel.objects.filter(profile=profile, status="done").exists(),
        what="the worker to train the demo's first model",
    )
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/playground/")
    page.get_by_label("Message").fill(MESSAGE)
    verdict, kind = page.get_by_test_id("verdict-route"), page.get_by_test_id("verdict-kind")
    expect(kind).to_have_text("unmatched")  # no route knows these words yet

    job_worker.stop_all()  # the next model waits in the queue while we look
    route = Route.objects.get(profile=profile, name="tech_support")
    route.examples = [*route.examples, "xqzv", "my xqzv is broken", "the xqzv stopped"]
    save_item(route, user=None, expected_revision=route.revision)

    page.get_by_label("Message").fill(MESSAGE + " ")  # the next keystroke
    note = page.get_by_test_id("model-status")
    expect(note).to_contain_text(re.compile(r"Examples changed \d+ s ago"))
    expect(note).to_contain_text("scores from the model of revision")
    expect(note).to_contain_text("waiting for a worker to train it")
    top = page.get_by_test_id("score-row").first
    expect(top).to_have_attribute("data-route", "tech_support")  # answered at once: the older
    stale_score = top.get_attribute("data-score")  # model, carried over to the new examples

    job_worker.start()

    expect(page.get_by_test_id("model-status")).to_be_hidden(timeout=60_000)  # no reload
    expect(top).not_to_have_attribute("data-score", stale_score or "")
    fresh = page.context.new_page()  # what a fresh load shows with the new model
    fresh.goto(f"{live_server.url}/profiles/support/playground/?message={MESSAGE}")
    fresh_top = fresh.get_by_test_id("score-row").first
    expect(fresh.get_by_test_id("model-status")).to_be_hidden()
    expect(top).to_have_attribute("data-score", fresh_top.get_attribute("data-score") or "")
    expect(kind).to_have_text("move")
    expect(verdict).to_have_text("tech_support")


def test_a_turn_sent_while_the_model_learns_keeps_its_verdict_when_the_model_is_ready(
    page: Page, live_server, demo, job_worker: Workers
) -> None:  # type: ignore[no-untyped-def]
    """The new model's arrival asks for the verdict of the message being typed; with the box
    emptied by a sent turn it used to wipe that turn's verdict ("type a message")."""
    profile = Profile.objects.get(slug="support")
    wait_for(
        lambda: TrainedModel.objects.filter(profile=profile, status="done").exists(),
        what="the worker to train the demo's first model",
    )
    sign_in(page, live_server.url)
    job_worker.stop_all()  # the next model waits in the queue while the turn is sent
    route = Route.objects.get(profile=profile, name="shipping")
    route.examples = [*route.examples, "do you ship to the moon"]
    save_item(route, user=None, expected_revision=route.revision)
    page.goto(f"{live_server.url}/profiles/support/playground/")
    expect(page.get_by_test_id("model-status")).to_contain_text("waiting for a worker")

    message = page.get_by_label("Message")
    message.fill("how much is shipping to Canada")
    message.press("Enter")
    expect(message).to_have_value("")
    expect(page.get_by_test_id("verdict-kind")).to_have_text("move")

    job_worker.start()
    expect(page.get_by_test_id("model-status")).to_be_hidden(timeout=60_000)
    expect(page.get_by_test_id("verdict-kind")).to_have_text("move")
    expect(page.get_by_test_id("verdict-route")).to_have_text("shipping")
