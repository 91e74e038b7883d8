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
