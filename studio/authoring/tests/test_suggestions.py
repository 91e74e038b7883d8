"""Suggested examples for a route come from a loopback model; only what a person ticks is saved."""

from __future__ import annotations

import json

import pytest

from studio.models import AuditEntry
from tests.routing_core.chat_server import Reply


def _url(route):
    return f"/profiles/{route.profile.slug}/routes/{route.pk}/suggest/"


GOOD = json.dumps(
    [
        "I was billed twice this month",
        "can I pay with a different card",
        "when will my parcel arrive",
    ]
)


def test_suggestions_are_shown_scored_and_nothing_is_saved_yet(route, editor, client_for, llm):
    server = llm(GOOD)
    response = client_for(editor).post(_url(route), {"action": "suggest", "kind": "examples"})
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count('name="offered"') == 3
    # the one that lands on shipping is flagged and not ticked
    assert 'value="when will my parcel arrive" id="s3" >' in html
    assert "would not land here" in html
    assert 'value="I was billed twice this month" id="s1" checked>' in html
    route.refresh_from_db()
    assert "I was billed twice this month" not in route.examples
    assert server.seen[0].headers["Authorization"] == "Bearer sk-test-123"
    assert server.seen[0].body["model"] == "writer-1"


def test_accepting_saves_the_ticked_ones_and_audits_the_rejected_one(
    route, editor, client_for, llm
):
    llm(GOOD)
    client = client_for(editor)
    client.post(_url(route), {"action": "suggest", "kind": "examples"})
    offered = [
        "I was billed twice this month",
        "can I pay with a different card",
        "when will my parcel arrive",
    ]
    response = client.post(
        _url(route),
        {
            "action": "accept",
            "kind": "examples",
            "revision": route.revision,
            "offered": offered,
            "accept": offered[:2],
        },
    )
    assert response.status_code == 302
    route.refresh_from_db()
    assert route.examples[-2:] == offered[:2]
    assert "when will my parcel arrive" not in route.examples
    entry = AuditEntry.objects.get(action="route.accept-suggestions")
    assert entry.after == {"kind": "examples", "accepted": offered[:2], "rejected": offered[2:]}
    assert AuditEntry.objects.filter(action="route.update", object_repr=str(route)).exists()


def test_rejecting_every_suggestion_saves_nothing_but_is_recorded(route, editor, client_for, llm):
    before = list(route.examples)
    response = client_for(editor).post(
        _url(route),
        {
            "action": "accept",
            "kind": "never",
            "revision": route.revision,
            "offered": ["refund my parcel"],
        },
    )
    assert response.status_code == 302
    route.refresh_from_db()
    assert (route.examples, route.never) == (before, [])
    entry = AuditEntry.objects.get(action="route.accept-suggestions")
    assert entry.after == {"kind": "never", "accepted": [], "rejected": ["refund my parcel"]}


def test_accepted_never_phrases_go_to_the_never_list(route, editor, client_for, llm):
    client_for(editor).post(
        _url(route),
        {
            "action": "accept",
            "kind": "never",
            "revision": route.revision,
            "offered": ["where is my parcel today"],
            "accept": ["where is my parcel today"],
        },
    )
    route.refresh_from_db()
    assert route.never == ["where is my parcel today"]


def test_a_text_that_was_not_offered_cannot_be_accepted(route, editor, client_for, llm):
    client_for(editor).post(
        _url(route),
        {"action": "accept", "kind": "examples", "revision": route.revision, "accept": ["sneaky"]},
    )
    route.refresh_from_db()
    assert "sneaky" not in route.examples


def test_a_route_changed_since_the_suggestions_is_a_conflict(route, editor, client_for, llm):
    stale = route.revision
    route.description = "changed meanwhile"
    from studio.shared.edits import save_item

    save_item(route, user=editor)
    response = client_for(editor).post(
        _url(route),
        {
            "action": "accept",
            "kind": "examples",
            "revision": stale,
            "offered": ["x y"],
            "accept": ["x y"],
        },
    )
    assert response.status_code == 409
    assert "reload" in response.content.decode()


@pytest.mark.parametrize("revision", ["abc", "1e3", "-1", "99999999999999999999"])
def test_a_revision_that_is_not_a_number_is_a_conflict_not_a_crash(
    revision, route, editor, client_for, llm
):
    response = client_for(editor).post(
        _url(route),
        {
            "action": "accept",
            "kind": "examples",
            "revision": revision,
            "offered": ["x y"],
            "accept": ["x y"],
        },
    )
    assert response.status_code == 409
    assert "reload the page" in response.content.decode()
    route.refresh_from_db()
    assert "x y" not in route.examples


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("Happy to help! Billing covers invoices and cards.", "answered in prose"),
        (
            json.dumps(["why was I charged twice", "Download my invoice!"]),
            "Every suggestion repeated an existing one (2)",
        ),
        (Reply(status=500), "did not answer usefully: HTTP 500 from the LLM endpoint"),
        (Reply('["late"]', delay=3.0), "timed out"),
    ],
)
def test_bad_answers_say_what_happened_and_save_nothing(
    route, editor, client_for, llm, reply, message
):
    llm(reply)
    response = client_for(editor).post(_url(route), {"action": "suggest", "kind": "examples"})
    assert response.status_code == 502
    assert message in response.content.decode()
    assert not AuditEntry.objects.filter(action="route.accept-suggestions").exists()


def test_without_an_endpoint_the_page_says_how_to_configure_one(
    route, editor, client_for, settings
):
    settings.STUDIO_LLM_BASE_URL = ""
    html = client_for(editor).get(_url(route)).content.decode()
    assert "Suggestions need a language model" in html and "STUDIO_LLM_BASE_URL" in html
    assert "Suggest examples</button>" not in html


def test_viewers_cannot_ask_for_suggestions(route, viewer, client_for, llm):
    server = llm(GOOD)
    assert client_for(viewer).post(_url(route), {"action": "suggest"}).status_code == 403
    assert server.seen == []


@pytest.mark.parametrize("configured", [True, False])
def test_the_routes_table_says_before_the_click_when_suggestions_need_a_model(
    configured, route, editor, client_for, settings
):
    settings.STUDIO_LLM_BASE_URL = "http://127.0.0.1:9/v1" if configured else ""
    settings.STUDIO_LLM_MODEL = "writer-1"

    html = client_for(editor).get(f"/profiles/{route.profile.slug}/").content.decode()

    assert ('data-testid="suggest-link"' in html) is configured
    assert ('data-testid="suggest-off"' in html) is not configured
    if not configured:
        assert "Suggest (needs a language model)" in html and "STUDIO_LLM_BASE_URL" in html
