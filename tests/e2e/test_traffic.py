"""Browser test of the review queue: open it from Traffic, label a turn, find it among the test cases."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from routing_core import Router
from studio.agents.events import EventBatchIn, ingest
from studio.models import Profile
from studio.shared.packs import build_pack
from tests.e2e.conftest import sign_in

MESSAGE = "my thing is broken and nobody answers"


def _unmatched_turn(profile: Profile, message: str = MESSAGE) -> None:
    """A turn logged as unmatched (whatever the draft says of it now)."""
    event = Router(build_pack(profile)).route(message).to_event()
    event.update(verdict="unmatched", route=None, by="none")
    ingest(profile, EventBatchIn.model_validate({"events": [{"message": message, "event": event}]}))


def test_a_person_labels_a_real_turn_and_finds_it_among_the_test_cases(
    page: Page, live_server, demo
) -> None:
    profile = Profile.objects.get(slug="support")
    _unmatched_turn(profile)
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/traffic/")
    expect(page.get_by_test_id("turns-total")).to_have_text("1")
    page.get_by_test_id("open-review").click()
    item = page.get_by_test_id("review-item").filter(has_text=MESSAGE)
    expect(item).to_contain_text("nothing matched")
    item.get_by_label("The right route").select_option("human")
    item.get_by_role("button", name="Save as test case").click()
    expect(page.locator(".flash")).to_contain_text("as a test case")
    expect(page.get_by_test_id("review-item").filter(has_text=MESSAGE)).to_have_count(0)
    page.goto(f"{live_server.url}/profiles/support/tests/")
    row = page.locator("tr", has_text=MESSAGE)
    expect(row).to_contain_text("human")


def test_a_person_replays_real_turns_on_the_draft_and_reads_what_would_flip(
    page: Page, live_server, demo
) -> None:
    profile = Profile.objects.get(slug="support")
    _unmatched_turn(profile, "I want a refund for my order")  # the draft routes it now
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/traffic/")
    page.get_by_label("Against").select_option("draft")
    page.get_by_test_id("start-replay").click()
    expect(page.get_by_test_id("replay-summary")).to_contain_text("1 of 1 turns would change")
    group = page.get_by_test_id("flip-group").first
    expect(group).to_contain_text("(unmatched) →")
    expect(page.get_by_test_id("changed-turns")).to_contain_text("I want a refund for my order")
