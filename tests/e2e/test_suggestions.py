"""An editor asks a (loopback) language model for examples, keeps two and rejects two."""

from __future__ import annotations

import json

from playwright.sync_api import Page, expect

from studio.models import AuditEntry, Route
from tests.e2e.conftest import sign_in
from tests.routing_core.chat_server import ChatServer, answers

PROPOSALS = [
    "my card got charged two times",
    "I need last month's invoice as a PDF",
    "where is my parcel right now",
    "the charge on my statement looks wrong",
]


def test_suggested_examples_are_reviewed_and_only_the_kept_ones_are_saved(
    live_server, demo, page: Page, settings, monkeypatch
) -> None:
    monkeypatch.setenv("STUDIO_TEST_LLM_KEY", "sk-e2e")
    with ChatServer(answers(json.dumps(PROPOSALS))) as server:
        settings.STUDIO_LLM_BASE_URL = server.base_url
        settings.STUDIO_LLM_MODEL = "writer-1"
        settings.STUDIO_LLM_API_KEY_ENV = "STUDIO_TEST_LLM_KEY"

        sign_in(page, live_server.url)
        page.goto(f"{live_server.url}/profiles/support/")
        page.locator('tr[data-route="billing"]').get_by_test_id("suggest-link").click()
        expect(page.get_by_role("heading", name="Suggestions for billing")).to_be_visible()
        page.get_by_role("button", name="Suggest examples").click()

        rows = page.get_by_test_id("suggestion-list").locator("tbody tr")
        expect(rows).to_have_count(4)
        parcel = rows.filter(has_text="where is my parcel right now")
        expect(parcel).to_contain_text("order_status")
        expect(parcel.get_by_test_id("flag")).to_have_text("would not land here")
        expect(parcel.get_by_role("checkbox")).not_to_be_checked()
        # the person also rejects one the router would accept
        page.get_by_label("the charge on my statement looks wrong").uncheck()
        page.get_by_role("button", name="Add the ticked ones").click()
        expect(page.get_by_text("Added 2 examples to billing; 2 rejected.")).to_be_visible()
    assert server.seen[0].headers["Authorization"] == "Bearer sk-e2e"

    examples = Route.objects.get(profile__slug="support", name="billing").examples
    assert examples[-2:] == PROPOSALS[:2]
    assert not set(PROPOSALS[2:]) & set(examples)
    entry = AuditEntry.objects.get(action="route.accept-suggestions")
    assert (entry.username, entry.after["rejected"]) == ("demo", PROPOSALS[2:])
