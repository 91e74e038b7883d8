"""'Find a fix' for a failing test case: searched on the job queue, applied only when asked.

Jobs run inline here (ImmediateBackend) unless a test queues them for a worker that never
comes (`settings.TASKS = DATABASE`); studio/suites/tests/test_repair_jobs.py uses a real worker.
"""

from __future__ import annotations

import json
from html import unescape

import pytest

from studio.jobs import runner
from studio.models import AuditEntry, RepairJob, TestCase
from studio.suites.repairs import execute_repair, search_state
from tests.job_worker import DATABASE
from tests.routing_core.chat_server import ChatServer, Reply, answers
from tests.studio.fixtures import found_search


@pytest.fixture
def cases(profile):
    """Passing cases from the routes' own examples, and one failing case."""
    rows = [("why was I charged twice", "billing"), ("where is my parcel", "shipping")]
    rows += [
        ("let me talk to someone", "human"),
        ("the courier never came", "shipping"),
    ]
    made = [
        TestCase.objects.create(profile=profile, message=m, expected_route=r, order=i)
        for i, (m, r) in enumerate(rows)
    ]
    return made


def _url(case):
    return f"/profiles/{case.profile.slug}/tests/{case.pk}/fix/"


def _open(client, case):
    """Press "Find a fix" (a POST: it starts or reuses the search) and follow the redirect to
    the search's page; that page and the case's newest job."""
    response = client.post(f"{_url(case)}search/", follow=True)
    return response, RepairJob.objects.filter(test_case=case).first()


def _apply(client, case, **extra):
    """Open the page, then apply the fix the search found."""
    _response, job = _open(client, case)
    return client.post(_url(case), {"job": job.pk}, **extra)


def test_the_fix_is_shown_and_nothing_changes_until_it_is_applied(cases, editor, client_for):
    failing = cases[-1]
    response, job = _open(client_for(editor), failing)
    html = response.content.decode()
    assert response.status_code == 200 and job.status == "done"
    assert "Add the keyword “courier” to shipping." in html
    assert failing.profile.routes.get(name="shipping").keywords == []


def test_applying_the_fix_saves_it_audits_it_and_the_case_then_passes(cases, editor, client_for):
    failing = cases[-1]
    client = client_for(editor)
    response = _apply(client, failing)
    assert response.status_code == 302 and response["Location"] == "/profiles/shop/tests/"
    assert failing.profile.routes.get(name="shipping").keywords == ["courier"]
    entry = AuditEntry.objects.get(action="route.accept-repair")
    assert entry.after["edit"] == "add the keyword “courier” to shipping"
    # the draft changed: the page shows no search of it until "Find a fix" is pressed again
    assert 'data-testid="start-search"' in client.get(_url(failing)).content.decode()
    assert RepairJob.objects.filter(test_case=failing).count() == 1
    assert "the case already passes" in _open(client, failing)[0].content.decode()
    assert RepairJob.objects.filter(test_case=failing).count() == 2


def test_opening_the_page_queues_nothing_and_offers_a_find_a_fix_button(
    cases, editor, client_for, settings
):
    settings.TASKS = DATABASE  # a queued search would stay: none is
    failing, client = cases[-1], client_for(editor)
    page = client.get(_url(failing))
    html = page.content.decode()
    assert page.status_code == 200 and "the courier never came" in html
    assert f'<form method="post" action="{_url(failing)}search/">' in html
    assert 'name="csrfmiddlewaretoken"' in html and 'data-testid="start-search"' in html
    assert client.get(_url(failing), HTTP_HX_REQUEST="true").status_code == 200
    assert not RepairJob.objects.exists()


def test_find_a_fix_is_a_post_that_redirects_to_the_search_which_a_get_then_shows(
    cases, editor, client_for, settings, profile
):
    settings.TASKS = DATABASE
    failing, client = cases[-1], client_for(editor)
    response = client.post(f"{_url(failing)}search/")
    job = RepairJob.objects.get(test_case=failing)
    assert response.status_code == 302 and response["Location"] == f"{_url(failing)}?job={job.pk}"
    assert client.post(f"{_url(failing)}search/")["Location"] == response["Location"]  # reused
    html = client.get(_url(failing)).content.decode()  # the latest search of this draft
    assert "Waiting for a worker to start the search" in html and "start-search" not in html
    profile.draft_revision += 1  # as every save of the draft does
    profile.save()
    assert 'data-testid="start-search"' in client.get(_url(failing)).content.decode()
    assert RepairJob.objects.count() == 1


def test_find_a_fix_needs_the_csrf_token(cases, editor):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    assert client.post(f"{_url(cases[-1])}search/").status_code == 403
    assert not RepairJob.objects.exists()


def test_a_queued_search_answers_at_once_polls_and_can_be_cancelled(
    cases, editor, client_for, settings
):
    settings.TASKS = DATABASE  # queued for a worker, of which none runs here
    failing, client = cases[-1], client_for(editor)
    response, job = _open(client, failing)
    page = response.content.decode()
    assert response.status_code == 200 and job.status == "queued"
    assert "Waiting for a worker to start the search" in page
    assert f'hx-get="{_url(failing)}?job={job.pk}" hx-trigger="every 1s"' in page

    fragment = client.get(f"{_url(failing)}?job={job.pk}", HTTP_HX_REQUEST="true")
    assert fragment.content.decode().lstrip().startswith('<div id="fix-job"')

    cancelled = client.post(
        f"{_url(failing)}cancel/", {"job": job.pk}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Cancelled: the search stopped and nothing changed." in cancelled
    job.refresh_from_db()
    assert job.status == "cancelled"
    # opening the page again shows the cancelled search; "search again" queues a new one
    assert "Cancelled" in client.get(_url(failing)).content.decode()
    assert _open(client, failing)[1].pk == job.pk  # "Find a fix" reuses it: no new search
    again = client.post(f"{_url(failing)}again/")
    fresh = RepairJob.objects.filter(test_case=failing).first()
    assert fresh.pk != job.pk and fresh.status == "queued"
    assert again["Location"] == f"{_url(failing)}?job={fresh.pk}"


def test_the_same_case_draft_and_suite_reuse_the_search_and_a_change_starts_another(
    cases, editor, client_for, settings, profile
):
    settings.TASKS = DATABASE
    failing, client = cases[-1], client_for(editor)
    _open(client, failing)
    _open(client, failing)
    assert RepairJob.objects.filter(test_case=failing).count() == 1
    profile.draft_revision += 1  # as every save of the draft does
    profile.save()
    _open(client, failing)
    assert RepairJob.objects.filter(test_case=failing).count() == 2
    TestCase.objects.create(profile=profile, message="a new case", expected_route="billing")
    _open(client, failing)
    assert RepairJob.objects.filter(test_case=failing).count() == 3


def test_only_the_newest_searches_of_a_case_are_kept(cases, editor, client_for, profile):
    from studio.suites.repairs import KEEP_SEARCHES

    client = client_for(editor)
    for _ in range(KEEP_SEARCHES + 2):
        client.post(f"{_url(cases[-1])}again/")
    assert RepairJob.objects.filter(test_case=cases[-1]).count() == KEEP_SEARCHES
    assert RepairJob.objects.filter(test_case=cases[0]).count() == 0


def test_a_running_search_shows_which_candidate_it_is_on(cases, editor, client_for, settings):
    settings.TASKS = DATABASE
    failing, client = cases[-1], client_for(editor)
    _response, job = _open(client, failing)
    RepairJob.objects.filter(pk=job.pk).update(status="running", done=0, total=0)
    page = client.get(f"{_url(failing)}?job={job.pk}", HTTP_HX_REQUEST="true").content.decode()
    assert "Learning the routes and running the test cases once" in page
    RepairJob.objects.filter(pk=job.pk).update(done=3, total=12)
    page = client.get(f"{_url(failing)}?job={job.pk}", HTTP_HX_REQUEST="true").content.decode()
    assert "Candidate 3 of 12 tried" in page and 'hx-trigger="every 1s"' in page


@pytest.mark.parametrize(
    "state",
    [
        {"status": "queued"},
        {"status": "running", "done": 0, "total": 0},
        {"status": "running", "done": 0, "total": 0, "cancel_requested": True},
        {"status": "running", "done": 3, "total": 12},
        {"status": "done", "reason": "no candidate edit passes every case", "fix": None},
        {"status": "cancelled"},
        {"status": "failed", "error": "The worker stopped."},
        {"status": "failed", "error": ""},
    ],
    ids=lambda state: "-".join(str(v) for v in state.values()),
)
def test_the_page_says_where_the_search_stands_in_the_apis_words(
    cases, editor, client_for, settings, state
):
    from django.utils.html import escape

    settings.TASKS = DATABASE
    failing, client = cases[-1], client_for(editor)
    _response, job = _open(client, failing)
    RepairJob.objects.filter(pk=job.pk).update(**state)
    job.refresh_from_db()
    page = client.get(f"{_url(failing)}?job={job.pk}").content.decode()
    assert escape(search_state(job)) in page
    assert page.count(escape(search_state(job))) == 1


def test_the_search_reports_progress_after_each_candidate(cases, editor, profile, settings):
    from studio.suites.repairs import request_repair

    settings.TASKS = DATABASE
    job = request_repair(cases[-1], user=editor)
    told = []
    fields = execute_repair(job, lambda done, total: told.append((done, total)))
    assert told == [(0, told[0][1]), (1, told[0][1])] and told[0][1] > 1  # 1st of n fixes it
    assert fields["done"] == 1 == len(fields["tried"])


def test_a_cancel_lands_while_the_drafts_model_is_learned(cases, editor, settings):
    from studio.jobs.progress import Cancelled, Reporter
    from studio.suites.repairs import _Learning, request_repair

    settings.TASKS = DATABASE
    job = request_repair(cases[-1], user=editor)
    RepairJob.objects.filter(pk=job.pk).update(status="running", worker="w:1")
    learning = _Learning(Reporter(RepairJob, job.pk, "w:1"))
    learning.fraction(0.4)  # still "learning": no candidate counted
    job.refresh_from_db()
    assert (job.done, job.total, job.status) == (0, 0, "running")
    RepairJob.objects.filter(pk=job.pk).update(cancel_requested=True)
    learning._told = 0.0  # as if a moment had passed
    with pytest.raises(Cancelled):
        learning.fraction(0.6)


def test_a_search_cancelled_while_it_learns_the_model_ends_cancelled(
    cases, editor, settings, monkeypatch
):
    from studio.suites.repairs import request_repair

    def learning(profile, progress):  # the draft's model, being learned
        progress.fraction(0.5)
        raise AssertionError("the cancel was not noticed while learning")

    settings.TASKS = DATABASE
    monkeypatch.setattr("studio.suites.repairs.exact_pack", learning)
    job = request_repair(cases[-1], user=editor)
    RepairJob.objects.filter(pk=job.pk).update(cancel_requested=True)
    runner.run("repair", job.pk)  # what a worker does with it
    job.refresh_from_db()
    assert job.status == "cancelled" and job.fix is None


def test_a_search_of_a_draft_that_changed_before_it_began_fails_with_the_reason(
    cases, editor, client_for, profile, settings
):
    settings.TASKS = DATABASE
    failing, client = cases[-1], client_for(editor)
    _response, job = _open(client, failing)
    profile.draft_revision += 1
    profile.save()
    runner.run("repair", job.pk)  # what a worker does with it
    job.refresh_from_db()
    assert job.status == "failed"
    page = client.get(f"{_url(failing)}?job={job.pk}").content.decode()
    assert "The draft changed before the search began: find a fix again." in page
    assert 'data-testid="search-again"' in page


def test_a_fix_is_refused_in_words_when_the_draft_changed_since_the_search(
    cases, editor, client_for, profile
):
    failing, client = cases[-1], client_for(editor)
    _response, job = _open(client, failing)
    billing = profile.routes.get(name="billing")
    billing.examples = [*billing.examples, "a brand new example"]
    billing.save()
    profile.draft_revision += 1
    profile.save()
    page = client.get(f"{_url(failing)}?job={job.pk}").content.decode()
    assert 'data-testid="fix-stale"' in page and 'data-testid="apply-fix"' not in page
    assert f'action="{_url(failing)}search/"' in page  # "Find a fix again" is a POST too
    response = client.post(_url(failing), {"job": job.pk}, follow=True)
    assert "Not applied: the draft changed since the search: find a fix again." in (
        response.content.decode()
    )
    assert profile.routes.get(name="shipping").keywords == []
    assert not AuditEntry.objects.filter(action="route.accept-repair").exists()


def test_a_fix_is_refused_when_the_test_cases_changed_since_the_search(
    cases, editor, client_for, profile
):
    failing, client = cases[-1], client_for(editor)
    _response, job = _open(client, failing)
    TestCase.objects.create(profile=profile, message="courier please", expected_route="human")
    response = client.post(_url(failing), {"job": job.pk}, follow=True)
    assert "the test cases changed since the search: find a fix again" in response.content.decode()
    assert profile.routes.get(name="shipping").keywords == []


def test_a_search_of_another_case_or_one_without_a_fix_cannot_be_applied(
    cases, editor, client_for, profile
):
    client = client_for(editor)
    _response, job = _open(client, cases[-1])
    response = client.post(_url(cases[0]), {"job": job.pk}, follow=True)
    assert "there is no fix to apply" in response.content.decode()
    assert _no_keyword_added(cases[-1])
    _response, passing = _open(client, cases[0])  # it passes: nothing to apply
    response = client.post(_url(cases[0]), {"job": passing.pk}, follow=True)
    assert "there is no fix to apply" in response.content.decode()


def _no_keyword_added(case):
    return case.profile.routes.get(name="shipping").keywords == []


def test_viewers_cannot_search_or_apply(cases, viewer, client_for):
    client = client_for(viewer)
    assert client.get(_url(cases[-1])).status_code == 403
    assert client.post(f"{_url(cases[-1])}search/").status_code == 403
    assert client.post(f"{_url(cases[-1])}again/").status_code == 403
    assert not RepairJob.objects.exists()


def test_model_wording_is_tried_first_and_a_failing_model_is_only_a_note(
    cases, editor, client_for, settings
):
    settings.STUDIO_LLM_MODEL, settings.STUDIO_LLM_API_KEY_ENV = "writer-1", ""
    client = client_for(editor)
    with ChatServer(answers(json.dumps(["never came"]))) as server:
        settings.STUDIO_LLM_BASE_URL = server.base_url
        html = _open(client, cases[-1])[0].content.decode()
    assert "Add the keyword “never came” to shipping." in html
    with ChatServer(answers(Reply(status=503))) as server:
        settings.STUDIO_LLM_BASE_URL = server.base_url
        html = client.post(f"{_url(cases[-1])}again/", follow=True).content.decode()
    assert "The language model did not answer (HTTP 503 from the LLM endpoint)" in html
    assert "Add the keyword “courier” to shipping." in html


def test_the_test_cases_page_links_failing_cases_to_a_fix(cases, editor, client_for, profile):
    from studio.suites.runs import start_run

    start_run(profile, user=editor)
    html = client_for(editor).get(f"/profiles/{profile.slug}/tests/").content.decode()
    assert html.count('data-testid="find-fix"') == 1
    assert f'method="post" action="{_url(cases[-1])}search/"' in html  # one press starts it


def test_the_run_page_offers_find_a_fix_beside_each_failure_it_lists(
    cases, editor, viewer, client_for, profile
):
    from studio.suites.runs import start_run

    run = start_run(profile, user=editor)
    url = f"/profiles/{profile.slug}/runs/{run.pk}/"
    html = client_for(editor).get(url).content.decode()
    assert html.count('data-testid="find-fix"') == 1
    assert f'action="{_url(cases[-1])}search/"' in html
    assert 'data-testid="find-fix"' not in client_for(viewer).get(url).content.decode()
    cases[-1].delete()  # a case deleted since the run: nothing to fix any more
    assert 'data-testid="find-fix"' not in client_for(editor).get(url).content.decode()


def test_a_fix_that_makes_the_case_a_training_example_says_so_plainly(
    cases, editor, client_for, profile
):
    failing = _case(profile, "what is the weather in paris")
    client = client_for(editor)
    response, job = _open(client, failing)
    html = unescape(response.content.decode())
    assert 'data-testid="fix-copies-case"' in html
    assert "the test's own message an out-of-scope example" in html
    assert "no longer proves anything" in html
    api = client.get(f"/api/profiles/{profile.slug}/test-cases/{failing.pk}/fixes/{job.pk}")
    assert "no longer proves anything" in api.json()["warning"]
    keyword = _open(client, cases[-1])[0].content.decode()  # "courier" as a keyword: no copy
    assert 'data-testid="fix-copies-case"' not in keyword


# -- every kind of fix, applied through the normal save path ---------------------------------------


def _case(profile, message, route="", **expects):
    return TestCase.objects.create(
        profile=profile, message=message, expected_route=route, order=50, **expects
    )


def _page(client, case):
    return _open(client, case)[0].content.decode()


@pytest.mark.usefixtures("without_background")
def test_an_out_of_scope_message_is_added_to_the_profiles_out_of_scope_examples(
    cases, editor, client_for, profile
):
    failing = _case(profile, "what is the weather in paris")
    client = client_for(editor)
    assert "Add “what is the weather in paris” to the out-of-scope examples." in _page(
        client, failing
    )
    revision = profile.revision
    response = _apply(client, failing)
    assert response.status_code == 302
    profile.refresh_from_db()
    assert profile.out_of_scope == ["what is the weather in paris"]
    assert profile.revision == revision + 1  # saved through save_profile, revision-checked
    assert AuditEntry.objects.filter(action="profile.update").count() == 1
    entry = AuditEntry.objects.get(action="profile.accept-repair")
    assert entry.after["edit"] == "add “what is the weather in paris” to the out-of-scope examples"
    assert "the case already passes" in _page(client, failing)


def test_a_triage_fix_adds_the_verb_to_the_profiles_own_action_lexicon(
    cases, editor, client_for, profile
):
    failing = _case(profile, "process my payment now", "billing", expected_triage="action")
    client = client_for(editor)
    assert "Add “process” to the action verbs." in _page(client, failing)
    _apply(client, failing)
    profile.refresh_from_db()
    assert "process" in profile.action_verbs and "cancel" in profile.action_verbs
    assert profile.knowledge_verbs is None  # the other lexicon stays the built-in one
    assert AuditEntry.objects.filter(action="profile.accept-repair").count() == 1
    assert "the case already passes" in _page(client, failing)


def test_a_tool_fix_adds_a_trigger_keyword_to_the_tool(cases, editor, client_for, profile):
    failing = _case(
        profile, "send my money back to my card", "billing", expected_tools=["refund_order"]
    )
    client = client_for(editor)
    html = _page(client, failing)
    fix = next(line for line in html.splitlines() if "trigger keyword" in line)
    assert "to the tool refund_order." in fix
    word = fix.split("“")[1].split("”")[0]
    _apply(client, failing)
    tool = profile.tools.get(name="refund_order")
    assert tool.trigger_keywords == ["refund", word]
    entry = AuditEntry.objects.get(action="tool.accept-repair")
    assert entry.object_repr == "refund_order"
    assert "the case already passes" in _page(client, failing)


@pytest.mark.usefixtures("without_background")
def test_when_nothing_works_the_page_says_what_each_edit_would_break(
    cases, editor, client_for, profile
):
    _case(profile, "what is the weather in paris", "shipping")  # passes: the twin
    failing = _case(profile, "what is the weather in paris", "", expected_verdict="unmatched")
    html = _page(client_for(editor), failing)
    assert 'data-testid="no-fix"' in html
    assert (
        "Adding “what is the weather in paris” to the out-of-scope examples fixed it but made "
        "‘what is the weather in paris’ fail." in html
    )
    assert "{" not in html.split('data-testid="attempts"')[1].split("</ul>")[0]  # never JSON


def test_a_menu_where_a_decisive_move_was_expected_may_lower_the_near_tie_margin(
    cases, editor, client_for, profile
):
    failing = _case(profile, "talk about delivery invoice", "billing", expected_verdict="move")
    job = found_search(failing, "set_margin", "", "0.03", "0.15")
    response = client_for(editor).post(_url(failing), {"job": job.pk})
    assert response.status_code == 302
    profile.refresh_from_db()
    assert profile.near_tie_margin == 0.03
    entry = AuditEntry.objects.get(action="profile.accept-repair")
    assert entry.after["edit"] == "change the near-tie margin from 0.15 to 0.03"


def test_a_margin_out_of_range_is_refused_by_the_pack_not_saved(cases, editor, client_for, profile):
    failing = _case(profile, "talk about delivery invoice", "billing", expected_verdict="move")
    job = found_search(failing, "set_margin", "", "7", "0.15")
    response = client_for(editor).post(_url(failing), {"job": job.pk}, follow=True)
    profile.refresh_from_db()
    assert profile.near_tie_margin == 0.15
    assert "near-tie margin" in response.content.decode()
    assert not AuditEntry.objects.filter(action="profile.accept-repair").exists()


@pytest.mark.usefixtures("without_background")
def test_a_failing_case_expecting_no_route_is_linked_to_a_fix_too(
    cases, editor, client_for, profile
):
    from studio.suites.runs import start_run

    failing = _case(profile, "what is the weather in paris")
    start_run(profile, user=editor)
    html = client_for(editor).get(f"/profiles/{profile.slug}/tests/").content.decode()
    assert html.count('data-testid="find-fix"') == 2
    assert _url(failing) in html


def test_a_word_is_taken_out_of_the_built_in_lexicon_as_the_profiles_own_list(
    cases, editor, client_for, profile
):
    failing = _case(profile, "explain my invoice", "billing", expected_triage="ambiguous")
    client = client_for(editor)
    assert "Remove “explain” from the knowledge verbs." in _page(client, failing)
    _apply(client, failing)
    profile.refresh_from_db()
    assert "explain" not in profile.knowledge_verbs and "compare" in profile.knowledge_verbs
    assert "the case already passes" in _page(client, failing)


def test_a_keyword_removed_by_a_fix_is_saved_through_the_route(cases, editor, client_for, profile):
    billing = profile.routes.get(name="billing")
    billing.keywords = ["invoice", "printer"]
    billing.save()
    profile.draft_revision += 1  # as every save does: the compiled draft is per revision
    profile.save()
    failing = _case(profile, "is the printer broken", "shipping")
    job = found_search(failing, "remove_keyword", "billing", "printer")
    response = client_for(editor).post(_url(failing), {"job": job.pk})
    assert response.status_code == 302
    assert profile.routes.get(name="billing").keywords == ["invoice"]
    entry = AuditEntry.objects.get(action="route.accept-repair")
    assert entry.after["edit"] == "remove the keyword “printer” from billing"
