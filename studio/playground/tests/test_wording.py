"""The playground's words are as sure as the decision's numbers (studio.playground.wording)."""

from __future__ import annotations

import math

import pytest
from django.urls import reverse

from routing_core import Router
from studio.models import Profile, Route
from studio.playground.tests.test_playground import by_testid
from studio.playground.wording import CLEAR_RELEVANCE, needed_lead
from studio.shared import drafts
from studio.shared.packs import build_pack
from tests.studio.fixtures import htmx

AIRLINE = {
    "book_flight": ["book a flight to Madrid", "I need a ticket to London", "find me flights"],
    "change_booking": ["change my flight", "move my booking to Friday", "change my reservation"],
    "baggage": ["how many bags can I take", "my luggage is lost", "extra baggage fee"],
    "loyalty": ["how many miles do I have", "my frequent flyer status", "join the loyalty program"],
    "human_agent": ["let me talk to a person", "I want a human"],
}


@pytest.fixture
def airline(db: object) -> Profile:
    profile = Profile.objects.create(slug="air", name="Airline")
    for order, (name, examples) in enumerate(AIRLINE.items()):
        Route.objects.create(profile=profile, name=name, order=order, examples=examples)
    drafts.clear_cache()
    return profile


def _why(client, profile: Profile, message: str) -> str:
    response = client.post(
        reverse("playground", args=[profile.slug]), {"message": message}, **htmx()
    )
    (why,) = by_testid(response, "verdict-why")
    return why


def test_a_lone_weak_low_relevance_match_is_not_called_decisive(airline, viewer, client_for):
    message = "quiero cambiar mi vuelo"  # no Spanish in the profile: every score is low
    cold = Router(build_pack(airline)).route(message)
    top, second = cold.ranked[0], cold.ranked[1]
    # A floor between the best two leaves the top alone above it, only just.
    floor = (top.score + second.score) / 2
    Profile.objects.filter(pk=airline.pk).update(floor=floor)
    airline.refresh_from_db()
    decision = Router(build_pack(airline)).route(message)
    assert decision.decisive and decision.runner_up is None and decision.route == top.route
    assert top.score - floor < needed_lead(0.15) and top.relevance < CLEAR_RELEVANCE

    why = _why(client_for(viewer), airline, message)

    assert "decisively" not in why.lower()
    assert why == (
        f"Matched {top.route}: {top.score:.2f}, the only route above the floor {floor:.2f}; "
        f"a weak match: only {top.score - floor:.2f} above the floor {floor:.2f} and "
        f"only {100 * top.relevance:.1f}% of the relevance."
    )


def test_a_clear_win_is_still_decisive(airline, viewer, client_for):
    decision = Router(build_pack(airline)).route("change my flight to Friday")
    top = decision.ranked[0]
    assert top.relevance >= CLEAR_RELEVANCE and decision.runner_up is not None

    why = _why(client_for(viewer), airline, "change my flight to Friday")

    assert why.startswith("Decisively matched change_booking: ")


@pytest.mark.parametrize(
    ("margin", "lead"),
    [(0.0, 0.0), (0.15, 2 * math.atanh(0.15)), (0.5, 2 * math.atanh(0.5)), (1.0, math.inf)],
)
def test_the_needed_lead_is_the_margins_gap_in_score_units(margin, lead):
    assert needed_lead(margin) == lead
    if math.isfinite(lead):
        assert math.tanh(lead / 2) == pytest.approx(margin)


def test_evidence_chips_show_words_as_the_message_wrote_them(airline, viewer, client_for):
    Route.objects.create(
        profile=airline,
        name="status",
        order=9,
        examples=["what's my flight status", "what's the status of my flight", "is it on time"],
    )
    message = "what's the status of flight 12"
    decision = Router(build_pack(airline)).route(message)
    assert decision.evidence is not None
    engine_terms = {t.term for t in decision.evidence.terms}
    assert engine_terms & {"s", "what s", "s the"}  # how the engine reads "what's"

    response = client_for(viewer).post(
        reverse("playground", args=[airline.slug]), {"message": message}, **htmx()
    )

    chips = by_testid(response, "evidence-term")
    assert chips and not {"s", "what s", "s the"} & set(chips)
    assert any("what&#x27;s" in chip for chip in chips)
    assert len(chips) == len(set(chips))


@pytest.mark.parametrize(
    ("margin", "said"),
    [
        (0.15, "(a lead of 0.30)"),
        (0.5, "(a lead of 1.10)"),
        (1.0, "(a lead no score difference reaches)"),
    ],
)
def test_the_margin_slider_says_the_lead_the_profiles_margin_asks_for(
    airline, viewer, client_for, margin, said
):
    """The slider is on the gap's scale; the page's leads are on the scores': the help says
    both, so "0.10 behind" under a margin of 0.15 reads as the near-tie it is."""
    Profile.objects.filter(pk=airline.pk).update(near_tie_margin=margin)
    response = client_for(viewer).get(reverse("playground", args=[airline.slug]))
    (help_text,) = by_testid(response, "margin-help")
    assert help_text.endswith(f"Profile: {margin:.2f} {said}.")
    assert "about twice this, on the scores' scale" in help_text
