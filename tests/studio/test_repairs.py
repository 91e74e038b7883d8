"""'Find a fix' for a failing test case: tried against the suite, applied only when asked."""

from __future__ import annotations

import json

import pytest

from studio.models import AuditEntry, TestCase
from tests.routing_core.chat_server import ChatServer, Reply, answers


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


def test_the_fix_is_shown_and_nothing_changes_until_it_is_applied(cases, editor, client_for):
    failing = cases[-1]
    response = client_for(editor).get(_url(failing))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Add the keyword “courier” to shipping." in html
    assert failing.profile.routes.get(name="billing").keywords == ["invoice"]


def test_applying_the_fix_saves_it_audits_it_and_the_case_then_passes(cases, editor, client_for):
    failing = cases[-1]
    client = client_for(editor)
    response = client.post(
        _url(failing), {"kind": "add_keyword", "route": "shipping", "text": "courier"}
    )
    assert response.status_code == 302
    assert failing.profile.routes.get(name="shipping").keywords == ["courier"]
    entry = AuditEntry.objects.get(action="route.accept-repair")
    assert entry.after["edit"] == "add the keyword “courier” to shipping"
    assert "the case already passes" in client.get(_url(failing)).content.decode()


def test_an_edit_that_would_break_another_case_is_refused(cases, editor, client_for):
    failing = cases[-1]
    response = client_for(editor).post(
        _url(failing),
        {
            "kind": "move_example",
            "route": "billing",
            "text": "where is my parcel",
            "source": "shipping",
        },
        follow=True,
    )
    assert "the routes or the cases changed since: find a fix again" in response.content.decode()
    assert "where is my parcel" in failing.profile.routes.get(name="shipping").examples


def test_a_forged_route_is_refused_cleanly(cases, editor, client_for):
    response = client_for(editor).post(
        _url(cases[-1]), {"kind": "add_keyword", "route": "nowhere", "text": "x"}, follow=True
    )
    assert "that route no longer exists" in response.content.decode()


def test_model_wording_is_tried_first_and_a_failing_model_is_only_a_note(
    cases, editor, client_for, settings
):
    settings.STUDIO_LLM_MODEL, settings.STUDIO_LLM_API_KEY_ENV = "writer-1", ""
    with ChatServer(answers(json.dumps(["never came"]))) as server:
        settings.STUDIO_LLM_BASE_URL = server.base_url
        html = client_for(editor).get(_url(cases[-1])).content.decode()
    assert "Add the keyword “never came” to shipping." in html
    with ChatServer(answers(Reply(status=503))) as server:
        settings.STUDIO_LLM_BASE_URL = server.base_url
        html = client_for(editor).get(_url(cases[-1])).content.decode()
    assert "The language model did not answer (HTTP 503 from the LLM endpoint)" in html
    assert "Add the keyword “courier” to shipping." in html


def test_the_test_cases_page_links_failing_cases_to_a_fix(cases, editor, client_for, profile):
    from studio.suites import start_run

    start_run(profile, user=editor)
    html = client_for(editor).get(f"/profiles/{profile.slug}/tests/").content.decode()
    assert html.count('data-testid="find-fix"') == 1
    assert _url(cases[-1]) in html


# -- every kind of fix, applied through the normal save path ---------------------------------------


def _case(profile, message, route="", **expects):
    return TestCase.objects.create(
        profile=profile, message=message, expected_route=route, order=50, **expects
    )


def _page(client, case):
    return client.get(_url(case)).content.decode()


def test_an_out_of_scope_message_is_added_to_the_profiles_out_of_scope_examples(
    cases, editor, client_for, profile
):
    failing = _case(profile, "what is the weather in paris")
    client = client_for(editor)
    assert "Add “what is the weather in paris” to the out-of-scope examples." in _page(
        client, failing
    )
    revision = profile.revision
    response = client.post(
        _url(failing), {"kind": "add_out_of_scope", "route": "", "text": failing.message}
    )
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
    client.post(_url(failing), {"kind": "add_verb", "route": "action", "text": "process"})
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
    client.post(_url(failing), {"kind": "add_trigger", "route": "refund_order", "text": word})
    tool = profile.tools.get(name="refund_order")
    assert tool.trigger_keywords == ["refund", word]
    entry = AuditEntry.objects.get(action="tool.accept-repair")
    assert entry.object_repr == "refund_order"
    assert "the case already passes" in _page(client, failing)


def test_a_forged_tool_or_lexicon_is_refused_cleanly(cases, editor, client_for, profile):
    failing = _case(profile, "process my payment now", "billing", expected_triage="action")
    client = client_for(editor)
    html = client.post(
        _url(failing), {"kind": "add_trigger", "route": "nowhere", "text": "x"}, follow=True
    ).content.decode()
    assert "that tool no longer exists" in html
    html = client.post(
        _url(failing), {"kind": "add_verb", "route": "sideways", "text": "x"}, follow=True
    ).content.decode()
    assert "there is no such lexicon" in html
    profile.refresh_from_db()
    assert profile.action_verbs is None


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
    client = client_for(editor)
    response = client.post(
        _url(failing), {"kind": "set_margin", "route": "", "text": "0.03", "source": "0.15"}
    )
    assert response.status_code == 302
    profile.refresh_from_db()
    assert profile.near_tie_margin == 0.03
    entry = AuditEntry.objects.get(action="profile.accept-repair")
    assert entry.after["edit"] == "change the near-tie margin from 0.15 to 0.03"


def test_a_margin_out_of_range_is_refused_by_the_pack_not_saved(cases, editor, client_for, profile):
    failing = _case(profile, "talk about delivery invoice", "billing", expected_verdict="move")
    response = client_for(editor).post(
        _url(failing),
        {"kind": "set_margin", "route": "", "text": "7", "source": "0.15"},
        follow=True,
    )
    profile.refresh_from_db()
    assert profile.near_tie_margin == 0.15
    assert "near-tie margin" in response.content.decode()
    assert not AuditEntry.objects.filter(action="profile.accept-repair").exists()


def test_a_failing_case_expecting_no_route_is_linked_to_a_fix_too(
    cases, editor, client_for, profile
):
    from studio.suites import start_run

    failing = _case(profile, "what is the weather in paris")
    start_run(profile, user=editor)
    html = client_for(editor).get(f"/profiles/{profile.slug}/tests/").content.decode()
    assert html.count('data-testid="find-fix"') == 2
    assert _url(failing) in html


def test_while_the_latest_routes_are_still_learned_the_page_says_so_instead_of_failing(
    cases, editor, client_for, profile, settings
):
    from tests.job_worker import DATABASE

    settings.TASKS = DATABASE  # training waits for a worker; none runs in this test
    route = profile.routes.get(name="billing")
    route.examples = [*route.examples, "a brand new example"]
    route.save()
    profile.draft_revision += 1
    profile.save()
    client = client_for(editor)
    response = client.get(_url(cases[-1]))
    assert response.status_code == 200
    assert "still being learned: find a fix again shortly" in response.content.decode()
    response = client.post(
        _url(cases[-1]),
        {"kind": "add_keyword", "route": "shipping", "text": "courier"},
        follow=True,
    )
    assert "still being learned" in response.content.decode()
    assert profile.routes.get(name="shipping").keywords == []


def test_a_word_is_taken_out_of_the_built_in_lexicon_as_the_profiles_own_list(
    cases, editor, client_for, profile
):
    failing = _case(profile, "explain my invoice", "billing", expected_triage="ambiguous")
    client = client_for(editor)
    assert "Remove “explain” from the knowledge verbs." in _page(client, failing)
    client.post(_url(failing), {"kind": "remove_verb", "route": "knowledge", "text": "explain"})
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
    client = client_for(editor)
    response = client.post(
        _url(failing), {"kind": "remove_keyword", "route": "billing", "text": "printer"}
    )
    assert response.status_code == 302
    assert profile.routes.get(name="billing").keywords == ["invoice"]
    entry = AuditEntry.objects.get(action="route.accept-repair")
    assert entry.after["edit"] == "remove the keyword “printer” from billing"
