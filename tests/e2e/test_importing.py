"""An editor brings a Dialogflow CX agent over: a bad file, then the import on a real worker."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from studio.models import AuditEntry, Profile
from tests.e2e.conftest import sign_in
from tests.job_worker import Workers
from tests.routing_core.importers.conftest import EXPORTS, zip_folder


def test_import_from_dialogflow_cx_runs_on_the_queue_and_shows_what_came_over(
    live_server, demo, page: Page, tmp_path, job_worker: Workers
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
    page.get_by_role("button", name="Import").click()
    page.wait_for_url(re.compile(r".*/profiles/import/jobs/\d+/$"))
    # the worker reads it; the page follows the job without a reload
    expect(page.get_by_test_id("import-errors")).to_contain_text("notes.zip: not a zip file")
    page.get_by_test_id("import-again").click()
    expect(page.get_by_label("Slug")).to_have_value("shop-assistant")
    expect(page.get_by_label("The file comes from")).to_have_value("dialogflow-cx")
    expect(page.get_by_test_id("kept-file")).to_contain_text("notes.zip")  # a new one replaces it

    page.get_by_label("Export file").set_input_files(str(agent_zip))
    page.get_by_role("button", name="Import").click()
    page.wait_for_url(re.compile(r".*/profiles/import/jobs/\d+/$"))
    state = page.get_by_test_id("job-state")
    expect(state).to_contain_text(
        "Created shop-assistant with 4 routes and 2 out-of-scope examples from the import."
    )
    expect(page.get_by_test_id("import-report")).to_contain_text("4 routes")
    expect(page.get_by_test_id("import-out-of-scope")).to_contain_text(
        "2 examples of what the agent must not take became the profile's out-of-scope examples"
        ", so that messages like them go to no route (what is the weather in Lisbon; "
        "who won the match yesterday)"
    )
    expect(page.locator("#import-job")).to_contain_text(
        "flow 'Default Start Flow' (its pages and transitions) has no equivalent"
    )
    profile = Profile.objects.get(slug="shop-assistant")
    assert profile.routes.count() == 4
    assert AuditEntry.objects.filter(profile=profile, action="profile.import-from").count() == 1

    page.get_by_test_id("imported-profile").click()
    page.wait_for_url(re.compile(r".*/profiles/shop-assistant/$"))
    expect(page.locator("main")).to_contain_text("store_location")

    # the negative intent's phrases are the profile's out-of-scope examples, and they work
    page.goto(f"{live_server.url}/profiles/shop-assistant/policy/")
    expect(page.get_by_label("Out-of-scope examples")).to_contain_text(
        "who won the match yesterday"
    )
    page.goto(f"{live_server.url}/profiles/shop-assistant/playground/")
    page.get_by_label("Message").press_sequentially("what is the weather in Lisbon", delay=20)
    expect(page.get_by_test_id("verdict-kind")).to_have_text("unmatched")


def test_a_file_refused_for_the_wrong_tool_is_imported_again_without_choosing_it_again(
    live_server, demo, page: Page, tmp_path
) -> None:
    export = tmp_path / "nlu.yml"
    export.write_text(
        "version: '3.1'\nnlu:\n- intent: baggage\n  examples: |\n    - my bag is lost\n"
        "    - how many bags can I take\n- intent: greet\n  examples: |\n    - hello there\n"
    )
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/import/from/")
    page.get_by_label("The file comes from").select_option("dialogflow-es")  # the wrong tool
    page.get_by_label("Export file").set_input_files(str(export))
    page.get_by_label("Slug").fill("airline")
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_test_id("import-errors")).to_be_visible()

    page.get_by_test_id("import-again").click()
    expect(page.get_by_test_id("kept-file")).to_contain_text("nlu.yml")
    page.get_by_label("The file comes from").select_option("rasa")
    page.get_by_role("button", name="Import").click()  # no file chosen: the kept one is used

    expect(page.get_by_test_id("job-state")).to_contain_text("Created airline with 2 routes")
    assert Profile.objects.get(slug="airline").routes.count() == 2
