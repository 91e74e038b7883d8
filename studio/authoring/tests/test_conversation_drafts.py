"""Test conversations drafted by a loopback model on the job queue; a person keeps some as cases."""

from __future__ import annotations

import json

from studio.models import AuditEntry, ConversationDraft, TestCase
from studio.suites.runs import start_run
from tests.routing_core.chat_server import Reply


def _url(route):
    return f"/profiles/{route.profile.slug}/routes/{route.pk}/conversations/"


def _turn(text, part, route):
    return {"user": text, "part": part, "route": route}


INVOICE = [
    _turn("download my invoice", "opening", "billing"),
    _turn("yes please", "confirmation", "billing"),
    _turn("where is my parcel", "new topic", "shipping"),
]
CARD = [
    _turn("update my card", "opening", "billing"),
    _turn("thanks", "confirmation", "shipping"),  # the model mislabelled it: flagged
]
DRAFTED = json.dumps(
    [{"turns": INVOICE}, {"turns": CARD}, {"turns": [INVOICE[0], _turn("x", "answer", "nope")]}]
)


def _draft(client, route):
    response = client.post(_url(route), {"action": "draft"})
    assert response.status_code == 302
    return ConversationDraft.objects.get(route=route)


def test_without_a_model_the_button_says_so_before_the_click(route, editor, client_for, settings):
    settings.STUDIO_LLM_BASE_URL = ""
    client = client_for(editor)

    html = client.get(_url(route)).content.decode()

    assert "Draft conversations (needs a language model)" in html
    assert 'data-testid="draft-conversations" disabled' in html
    assert "STUDIO_LLM_BASE_URL" in html
    assert client.post(_url(route), {"action": "draft"}).status_code == 200
    assert not ConversationDraft.objects.exists()


def test_drafted_conversations_run_on_the_queue_and_are_shown_routed(
    route, editor, client_for, llm
):
    server = llm(DRAFTED)
    client = client_for(editor)

    job = _draft(client, route)

    assert job.status == "done" and job.dropped == 1 and len(job.conversations) == 2
    html = client.get(_url(route)).content.decode()
    assert html.count('data-testid="drafted-conversation"') == 2
    assert html.count('data-testid="flag"') == 1  # "thanks" stays on billing, not shipping
    assert "1 more named routes the profile does not have" in html
    assert server.seen[0].headers["Authorization"] == "Bearer sk-test-123"
    assert not TestCase.objects.filter(profile=route.profile).exists()


def test_kept_conversations_become_multi_turn_cases_and_the_choice_is_audited(
    route, editor, client_for, llm
):
    llm(DRAFTED)
    client = client_for(editor)
    job = _draft(client, route)

    response = client.post(_url(route), {"action": "review", "draft": job.pk, "accept": ["1"]})

    assert response.status_code == 302
    cases = list(TestCase.objects.filter(profile=route.profile).order_by("turn"))
    assert [(c.turn, c.message, c.expected_route, c.expected_verdict) for c in cases] == [
        (1, "download my invoice", "billing", ""),
        (2, "yes please", "billing", ""),
        (3, "where is my parcel", "shipping", ""),
    ]
    assert {c.conversation for c in cases} == {"conversation 1"}
    entry = AuditEntry.objects.get(action="route.review-conversations")
    assert entry.after == {
        "accepted": [["download my invoice", "yes please", "where is my parcel"]],
        "rejected": [["update my card", "thanks"]],
    }
    run = start_run(route.profile, user=None)
    assert run.passed == 3  # the kept conversation passes on the draft that wrote it


def test_a_draft_is_reviewed_once(route, editor, client_for, llm):
    llm(DRAFTED)
    client = client_for(editor)
    job = _draft(client, route)
    client.post(_url(route), {"action": "review", "draft": job.pk, "accept": ["1"]})

    again = client.post(_url(route), {"action": "review", "draft": job.pk, "accept": ["1", "2"]})

    assert again.status_code == 409
    assert "reviewed already" in again.content.decode()
    assert TestCase.objects.filter(profile=route.profile).count() == 3


def test_a_failing_model_fails_the_job_in_words(route, editor, client_for, llm):
    llm(Reply(status=500))
    client = client_for(editor)

    job = _draft(client, route)

    assert job.status == "failed"
    assert job.error.startswith("The language model did not answer usefully")
    assert 'data-testid="draft-failed"' in client.get(_url(route)).content.decode()


def test_an_answer_in_prose_says_so(route, editor, client_for, llm):
    llm("Here are a few conversations a customer could have.")

    job = _draft(client_for(editor), route)

    assert job.status == "done" and job.note.startswith("The language model answered without")


def test_drafting_is_for_editors(route, viewer, client_for, llm):
    llm(DRAFTED)
    assert client_for(viewer).post(_url(route), {"action": "draft"}).status_code == 403
    assert not ConversationDraft.objects.exists()
