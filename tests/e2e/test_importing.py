"""An editor brings a Dialogflow CX agent over: a bad file, a preview, the profile, its out of scope."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from studio.models import AuditEntry, Profile
from tests.e2e.conftest import sign_in
from tests.routing_core.importers.conftest import EXPORTS, zip_folder


def test_import_from_dialogflow_cx_with_a_preview_before_anything_is_saved(
    live_server, demo, page: Page, tmp_path
) -> None:
    agent_zip = zip_folder(EXPORTS / "dialogflow_cx", tmp_path / "exported_agent_Shop.zip")
    not_an_agent = tmp_path / "notes.zip"
    not_an_agent.write_bytes(b"this is not a zip")

    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/")
    page.get_by_role(
        "link", name="Import from Rasa, Dialogflow, semantic-router, Lex or CLU"
    ).click()
    expect(page.get_by_role("heading", name="Import from another tool")).to_be_visible()

    page.get_by_label("The file comes from").select_option("dialogflow-cx")
    page.get_by_label("Export file").set_input_files(str(not_an_agent))
    page.get_by_label("Slug").fill("shop-assistant")
    page.get_by_role("button", name="Preview").click()
    expect(page.get_by_test_id("import-errors")).to_contain_text("notes.zip: not a zip file")
    expect(page.get_by_label("Slug")).to_have_value("shop-assistant")
    expect(page.get_by_label("The file comes from")).to_have_value("dialogflow-cx")

    page.get_by_label("Export file").set_input_files(str(agent_zip))
    page.get_by_role("button", name="Preview").click()
    preview = page.get_by_test_id("import-preview")
    expect(preview).to_contain_text("A new profile Shop Assistant (shop-assistant) with 4 routes")
    expect(
        preview.get_by_role("row", name=re.compile("store_location store.location 3 4"))
    ).to_be_visible()
    expect(preview).to_contain_text("2 out-of-scope examples and 0 rules")
    expect(preview.get_by_test_id("import-out-of-scope")).to_contain_text(
        "2 examples of what the agent must not take become the profile's out-of-scope examples"
        ", so that messages like them go to no route (what is the weather in Lisbon; "
        "who won the match yesterday)"
    )
    expect(preview).to_contain_text(
        "flow 'Default Start Flow' (its pages and transitions) has no equivalent"
    )
    assert not Profile.objects.filter(slug="shop-assistant").exists()

    preview.get_by_role("button", name="Create profile shop-assistant").click()
    page.wait_for_url(re.compile(r".*/profiles/shop-assistant/$"))
    expect(
        page.get_by_text(
            "Created shop-assistant with 4 routes and 2 out-of-scope examples from the import."
        )
    ).to_be_visible()
    expect(page.locator("main")).to_contain_text("store_location")
    profile = Profile.objects.get(slug="shop-assistant")
    assert profile.routes.count() == 4
    assert AuditEntry.objects.filter(profile=profile, action="profile.import-from").count() == 1

    # the negative intent's phrases are the profile's out-of-scope examples, and they work
    page.goto(f"{live_server.url}/profiles/shop-assistant/policy/")
    expect(page.get_by_label("Out-of-scope examples")).to_contain_text(
        "who won the match yesterday"
    )
    page.goto(f"{live_server.url}/profiles/shop-assistant/playground/")
    page.get_by_label("Message").press_sequentially("what is the weather in Lisbon", delay=20)
    expect(page.get_by_test_id("verdict-kind")).to_have_text("unmatched")
