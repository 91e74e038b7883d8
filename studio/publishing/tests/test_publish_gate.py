"""The publishing gate: the review shows the suite on the draft, lint and the flips; red needs a
reason, which the history keeps; the diff reads as lists, never as JSON."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from django.urls import reverse
from django.utils import timezone

from studio.models import AuditEntry, Profile, Route, TestCase, TestRun, Version
from studio.publishing.versions import promote, publish
from tests.studio.fixtures import htmx


def _publish_url(profile: Profile) -> str:
    return reverse("publish", args=[profile.slug])


def _make_red(profile: Profile) -> None:
    """One example under two routes (a lint error) and a case that fails."""
    Route.objects.filter(profile=profile, name="shipping").update(
        examples=["where is my parcel", "how long does delivery take", "download my invoice"]
    )
    TestCase.objects.create(profile=profile, message="where is my parcel", expected_route="human")
    TestCase.objects.create(profile=profile, message="update my card", expected_route="billing")


def test_the_review_runs_the_suite_on_the_draft_and_shows_lint_and_the_verdict(
    profile, owner, client_for
):
    _make_red(profile)

    html = client_for(owner).get(_publish_url(profile)).content.decode()

    run = TestRun.objects.get(profile=profile)
    assert run.draft_revision == profile.draft_revision and run.status == "done"
    assert re.search(r"<strong>1 of 2</strong> test cases pass", html)
    assert "see the 1 failing" in html
    assert re.search(r"<strong>\d+ errors?</strong>", html) and "download my invoice" in html
    assert 'data-red="yes"' in html and "Publishing anyway needs a reason" in html


def test_opening_the_review_again_reuses_the_run_of_the_same_draft(profile, owner, client_for):
    TestCase.objects.create(profile=profile, message="update my card", expected_route="billing")
    client = client_for(owner)
    client.get(_publish_url(profile))
    client.get(_publish_url(profile))

    assert TestRun.objects.filter(profile=profile).count() == 1


def test_the_gate_partial_polls_itself_only_while_the_suite_runs(profile, owner, client_for):
    TestCase.objects.create(profile=profile, message="update my card", expected_route="billing")
    TestRun.objects.create(profile=profile, draft_revision=profile.draft_revision, total=3)

    running = client_for(owner).get(_publish_url(profile), **htmx()).content.decode()

    assert running.lstrip().startswith('<section id="gate"')
    assert 'hx-trigger="every 500ms"' in running and "running… 0 of 3" in running
    assert "the test suite has not finished on this draft" in running


def test_a_profile_without_test_cases_has_no_suite_to_wait_for(profile, owner, client_for):
    """Nothing to run: the gate says so at once, rather than red until a run of no cases
    comes back from the job queue."""
    html = client_for(owner).get(_publish_url(profile)).content.decode()

    assert not TestRun.objects.filter(profile=profile).exists()
    assert "no test cases yet: nothing checks this draft" in html
    assert f'href="{reverse("tests", args=[profile.slug])}">add some</a>' in html
    assert 'hx-trigger="every 500ms"' not in html
    assert 'data-red="no"' in html and "Green: lint finds no error (no test cases to run)." in html


def test_publishing_red_without_a_reason_is_refused(profile, owner, client_for):
    _make_red(profile)

    response = client_for(owner).post(
        _publish_url(profile), {"note": "v1", "draft_revision": profile.draft_revision}
    )

    assert response.status_code == 422
    assert "say why you publish anyway" in response.content.decode()
    assert not Version.objects.exists()


def _form_values(response: Any) -> dict[str, str]:
    """What the publish form on a page would send: its hidden inputs, textareas and selects."""
    html = response.content.decode()
    form = html[html.index('<form method="post" action="/profiles/') :]
    values = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form))
    values |= dict(re.findall(r'<textarea id="\w+" name="(\w+)"[^>]*>([^<]*)</textarea>', form))
    select = re.search(r'name="environment">.*?<option value="([^"]*)"[^>]* selected', form, re.S)
    values["environment"] = select[1] if select else ""
    return values


def test_a_refused_publish_keeps_the_note_the_reason_box_and_the_environment(
    profile, owner, client_for
):
    _make_red(profile)
    typed = {"note": "spring fares", "reason": "", "environment": "production"}

    response = client_for(owner).post(
        _publish_url(profile), {**typed, "draft_revision": profile.draft_revision}
    )

    html = response.content.decode()
    assert response.status_code == 422
    assert 'placeholder="What changed and why">spring fares</textarea>' in html
    assert '<option value="production" selected>' in html
    assert '<option value="staging" selected>' not in html


def test_a_refused_publish_keeps_neither_chosen(profile, owner, client_for):
    _make_red(profile)

    response = client_for(owner).post(
        _publish_url(profile),
        {"note": "v1", "environment": "", "draft_revision": profile.draft_revision},
    )

    html = response.content.decode()
    assert '<option value="" selected>neither' in html
    assert '<option value="staging" selected>' not in html


def test_the_reason_added_after_a_refusal_publishes_to_the_environment_chosen(
    profile, owner, client_for
):
    _make_red(profile)
    client = client_for(owner)
    typed = {"note": "spring fares", "environment": "production"}
    refused = client.post(
        _publish_url(profile), {**typed, "draft_revision": profile.draft_revision}
    )

    # Press again with what the refused page holds, as a browser does, plus the reason.
    response = client.post(_publish_url(profile), {**_form_values(refused), "reason": "known"})

    assert response.status_code == 302
    version = Version.objects.get()
    assert version.note == "spring fares"
    assert profile.environments.get(name="production").version == version


def test_publishing_red_with_a_reason_records_it_with_what_was_red(profile, owner, client_for):
    _make_red(profile)

    response = client_for(owner).post(
        _publish_url(profile),
        {"note": "v1", "draft_revision": profile.draft_revision, "reason": "known issue #12"},
    )

    assert response.status_code == 302
    entry = AuditEntry.objects.get(action="version.publish_red")
    assert entry.after["reason"] == "known issue #12"
    assert "1 of 2 test cases fail" in entry.after["red"]
    assert any(red.startswith("lint finds") for red in entry.after["red"])


def test_a_green_draft_publishes_without_a_reason(profile, owner, client_for):
    TestCase.objects.create(profile=profile, message="update my card", expected_route="billing")

    response = client_for(owner).post(
        _publish_url(profile), {"note": "v1", "draft_revision": profile.draft_revision}
    )

    assert response.status_code == 302 and Version.objects.count() == 1
    assert not AuditEntry.objects.filter(action="version.publish_red").exists()


def test_a_first_version_counts_the_cases_instead_of_zero_of_zero(profile, owner, client_for):
    for message in ("update my card", "where is my parcel", "let me talk to someone"):
        TestCase.objects.create(profile=profile, message=message, expected_route="billing")

    html = client_for(owner).get(_publish_url(profile)).content.decode()

    assert "(0 of 3 test cases)" in html and "0 of 0" not in html
    assert "no verdict can flip" in html and "with the 3 test cases" in html


def test_the_diff_lists_examples_and_keywords_and_shows_fields_before_and_after(
    profile, owner, client_for
):
    promote(publish(profile, user=owner), "production", user=owner)
    Route.objects.create(
        profile=profile,
        name="returns",
        order=3,
        description="send things back",
        examples=["return my shoes", "how do I send this back"],
        keywords=["return"],
    )
    Route.objects.filter(profile=profile, name="human").update(stuck_message="Hold on.")
    Route.objects.filter(profile=profile, name="billing").update(
        examples=["why was I charged twice", "download my invoice", "a new charge"]
    )

    html = client_for(owner).get(_publish_url(profile)).content.decode()
    diff = html[html.index('id="diff-body"') :]

    assert "+ example: return my shoes" in diff and "+ keyword: return" in diff
    assert "+ a new charge" in diff and "− update my card" in diff
    assert "A colleague will take over." in diff and "Hold on." in diff
    assert "{&quot;" not in diff and '{"' not in diff


def test_a_run_whose_process_died_does_not_keep_the_gate_waiting(profile, owner, client_for):
    TestCase.objects.create(profile=profile, message="update my card", expected_route="billing")
    dead = TestRun.objects.create(
        profile=profile, draft_revision=profile.draft_revision, total=1, status="running"
    )
    TestRun.objects.filter(pk=dead.pk).update(updated_at=timezone.now() - timedelta(hours=1))

    html = client_for(owner).get(_publish_url(profile)).content.decode()

    dead.refresh_from_db()  # recovered: queued again and run (inline in tests) to the end
    assert dead.status == "done" and dead.attempts >= 1
    assert 'data-red="no"' in html and "<strong>1 of 1</strong>" in html


# -- the same gate through the API ------------------------------------------------------------------


def _api_publish(client, profile: Profile, **body):
    url = f"/api/profiles/{profile.slug}/versions"
    return client.post(url, body, content_type="application/json")


def test_the_api_refuses_a_red_gate_without_a_reason_and_names_what_is_red(
    profile, owner, client_for
):
    _make_red(profile)

    response = _api_publish(client_for(owner), profile, note="v1")

    assert response.status_code == 409
    detail = response.json()["detail"]
    assert "1 of 2 test cases fail" in detail and "lint finds" in detail and "reason" in detail
    assert "Retry-After" not in response  # the suite finished: waiting will not turn it green
    assert not Version.objects.exists()


def test_the_api_publishes_red_with_a_reason_and_the_audit_trail_keeps_it(
    profile, owner, client_for
):
    _make_red(profile)

    response = _api_publish(client_for(owner), profile, note="v1", reason="hotfix, see #12")

    assert response.status_code == 201 and Version.objects.count() == 1
    entry = AuditEntry.objects.get(action="version.publish_red")
    assert entry.after["reason"] == "hotfix, see #12"
    assert "1 of 2 test cases fail" in entry.after["red"]


def test_the_api_asks_to_retry_while_the_suite_of_the_draft_still_runs(profile, owner, client_for):
    TestCase.objects.create(profile=profile, message="update my card", expected_route="billing")
    TestRun.objects.create(profile=profile, draft_revision=profile.draft_revision, total=1)

    response = _api_publish(client_for(owner), profile)

    assert response.status_code == 409 and response["Retry-After"] == "2"
    assert "the test suite has not finished on this draft" in response.json()["detail"]


def test_the_api_publishes_a_profile_without_test_cases_on_the_first_call(
    profile, owner, client_for
):
    response = _api_publish(client_for(owner), profile, note="v1")

    assert response.status_code == 201 and response.json()["number"] == 1
    assert not TestRun.objects.filter(profile=profile).exists()


def test_the_api_publishes_a_green_draft_without_a_reason(profile, owner, client_for):
    TestCase.objects.create(profile=profile, message="update my card", expected_route="billing")

    response = _api_publish(client_for(owner), profile, note="v1")

    assert response.status_code == 201 and response.json()["number"] == 1
    assert not AuditEntry.objects.filter(action="version.publish_red").exists()


def test_a_first_publish_folds_the_whole_pack_away_from_the_confirm_button(
    profile, owner, client_for
):
    first = client_for(owner).get(_publish_url(profile)).content.decode()
    promote(publish(profile, user=owner), "production", user=owner)
    Route.objects.filter(profile=profile, name="billing").update(description="bills")
    later = client_for(owner).get(_publish_url(profile)).content.decode()

    folded = re.search(r'<details class="first-diff".*?</details>', first, re.S)
    assert folded is not None and 'id="diff-body"' in folded.group(0)
    assert "Everything in this first version (3 routes)" in first
    assert 'class="first-diff"' not in later and 'id="diff-body"' in later


def test_each_lint_finding_on_the_review_names_its_route_with_a_link(profile, owner, client_for):
    html = client_for(owner).get(_publish_url(profile)).content.decode()

    findings = re.findall(r'<li data-testid="gate-finding">(.*?)</li>', html, re.S)
    human = Route.objects.get(profile=profile, name="human")
    few = [f for f in findings if "1 example: give at least 5" in f]
    assert few and f'href="/profiles/shop/routes/{human.pk}/' in few[0] and ">human</a>:" in few[0]
    assert not any("example(s)" in f for f in findings)
