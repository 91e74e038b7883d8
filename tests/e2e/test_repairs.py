"""An editor presses 'Find a fix' on a failing case (one click starts the search), watches it on
the job queue, reads the edit, applies it; the case then passes. A real worker process runs it."""

from __future__ import annotations

import re
import time

from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from studio.models import AuditEntry, Profile, RepairJob, Route, TestCase, TestRun
from studio.suites.runs import start_run
from tests.e2e.conftest import sign_in
from tests.job_worker import Workers

MESSAGE = "my subscription renewed without asking"


def _run_suite(profile: Profile) -> None:
    run = start_run(profile, user=User.objects.get(username="demo"))
    deadline = time.monotonic() + 30
    while TestRun.objects.get(pk=run.pk).is_running:
        assert time.monotonic() < deadline, "the suite run did not finish"
        time.sleep(0.1)


def test_find_a_fix_then_apply_it(live_server, demo, page: Page, job_worker: Workers) -> None:
    profile = Profile.objects.get(slug="support")
    TestCase.objects.create(profile=profile, message=MESSAGE, expected_route="billing", order=99)
    _run_suite(profile)
    job_worker.stop_all()  # so that the person sees the search wait for a worker

    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/tests/")
    assert not RepairJob.objects.exists()
    page.get_by_role("row", name=re.compile(MESSAGE)).get_by_test_id("find-fix").click()
    expect(page.get_by_role("heading", name=re.compile(MESSAGE))).to_be_visible()
    expect(page.get_by_test_id("job-state")).to_contain_text("Waiting for a worker")  # one click
    assert re.search(r"/fix/\?job=\d+$", page.url)  # POST, then redirect to the search
    assert RepairJob.objects.get().status == "queued"

    job_worker.start()  # the page follows the search without a reload
    expect(page.get_by_test_id("fix")).to_contain_text("Add the keyword “subscription” to billing.")
    assert "subscription" not in Route.objects.get(profile=profile, name="billing").keywords

    page.get_by_role("button", name="Apply this edit").click()
    page.wait_for_url(re.compile(r".*/profiles/support/tests/$"))
    expect(page.get_by_text("Applied: add the keyword “subscription” to billing.")).to_be_visible()
    assert "subscription" in Route.objects.get(profile=profile, name="billing").keywords
    assert AuditEntry.objects.filter(action="route.accept-repair", username="demo").count() == 1


OUT_OF_SCOPE = "is your company hiring"


def test_find_a_fix_for_a_message_that_belongs_to_no_route(
    live_server, demo, page: Page, job_worker: Workers
) -> None:
    profile = Profile.objects.get(slug="support")
    TestCase.objects.create(profile=profile, message=OUT_OF_SCOPE, expected_route="", order=99)
    _run_suite(profile)

    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/tests/")
    page.get_by_role("row", name=re.compile(OUT_OF_SCOPE)).get_by_test_id("find-fix").click()
    wanted = f"Add “{OUT_OF_SCOPE}” to the out-of-scope examples."
    expect(page.get_by_test_id("fix")).to_contain_text(wanted)
    expect(page.get_by_test_id("attempts")).to_contain_text("keeps every other case passing")
    assert OUT_OF_SCOPE not in Profile.objects.get(pk=profile.pk).out_of_scope

    page.get_by_role("button", name="Apply this edit").click()
    page.wait_for_url(re.compile(r".*/profiles/support/tests/$"))
    expect(page.get_by_text(f"Applied: {wanted[0].lower()}{wanted[1:-1]}.")).to_be_visible()
    assert OUT_OF_SCOPE in Profile.objects.get(pk=profile.pk).out_of_scope
    assert AuditEntry.objects.filter(action="profile.accept-repair", username="demo").count() == 1
