"""A run of a suite with conversations: turn, stay and move accuracy in words that match the
numbers, and the turns that went wrong with the conversation around them."""

from __future__ import annotations

import re

from django.urls import reverse

from studio.models import Profile, TestRun
from studio.suites.conversation_figures import conversation_figures
from studio.suites.runs import start_run
from tests.studio.fixtures import add_conversation

# One conversation on the `profile` fixture, worked out by hand:
TURNS = [
    (1, "where is my parcel", "shipping", ""),  # opens on shipping ✓
    (2, "yes please", "shipping", ""),  # no new topic: stays ✓ (stay)
    (3, "download my invoice", "billing", ""),  # moves to billing ✓ (move)
    (4, "thanks", "shipping", ""),  # stays on billing by rule ✗ (should have moved)
]


def _run(profile: Profile) -> TestRun:
    add_conversation(profile, TURNS)
    return start_run(profile, user=None)


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_the_run_page_shows_turn_stay_and_move_accuracy_with_their_counts(
    profile, viewer, client_for
):
    run = _run(profile)

    html = client_for(viewer).get(reverse("test-run", args=[profile.slug, run.pk])).content
    text = _text(html.decode())

    assert "Turn accuracy 75.0% 3 of 4 turns of conversations routed where expected" in text
    assert "Stay accuracy 100.0% 1 of 1 turn that should keep the route kept it" in text
    assert (
        "Move accuracy 50.0% 1 of 2 turns that should change the route moved to the right one"
        in text
    )


def test_a_wrong_turn_is_listed_with_the_turns_before_it_and_the_engines_reason(
    profile, viewer, client_for
):
    run = _run(profile)

    html = client_for(viewer).get(reverse("test-run", args=[profile.slug, run.pk])).content
    text = _text(html.decode())

    assert text.count("c1 · turn 4") == 1
    assert "c1 · turn 4 should have moved to shipping" in text
    assert "thanks expected shipping , routed to billing" in text
    assert "no word of a new topic), so the conversation stays on billing" in text
    # the three turns before it, in order, each with where it went
    context = text[text.index("c1 · turn 4") :]
    assert context.index("where is my parcel") < context.index("yes please")
    assert context.index("yes please") < context.index("download my invoice")
    assert "download my invoice routed to billing" in context


def test_the_suite_page_shows_the_last_runs_conversation_figures(profile, viewer, client_for):
    run = _run(profile)

    html = client_for(viewer).get(reverse("tests", args=[profile.slug])).content.decode()
    text = _text(html)

    assert "Conversations in the last run: 1, 4 turns · 1 turn went wrong" in text
    assert "Move accuracy 50.0% 1 of 2 turns that should change the route" in text
    assert f'href="/profiles/{profile.slug}/runs/{run.pk}/#conversations"' in html


def test_a_suite_without_conversations_shows_no_conversation_figures(profile, viewer, client_for):
    profile.test_cases.create(message="download my invoice", expected_route="billing")
    run = start_run(profile, user=None)

    html = client_for(viewer).get(reverse("test-run", args=[profile.slug, run.pk])).content
    assert b'data-testid="conversation-figures"' not in html
    assert conversation_figures(run.figures) is None


def test_no_turn_to_move_says_so_instead_of_zero_of_zero():
    figures = {
        "conversations": {
            "conversations": 1, "turns": 2, "turn_accuracy": 1.0, "first_accuracy": 1.0,
            "stay_accuracy": 1.0, "move_accuracy": None, "stay_turns": 1, "move_turns": 0,
            "first_turns": 1, "wrong_turns": 0, "wrong": [],
        }
    }  # fmt: skip

    talk = conversation_figures(figures)

    assert talk is not None
    assert [s.words for s in talk.shares] == [
        "2 of 2 turns of conversations routed where expected",
        "1 of 1 turn that should keep the route kept it",
        "no turn should change the route",
    ]
