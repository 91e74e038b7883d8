"""The playground's bars draw each threshold on its own axis: the floor on
the raw scores, the near-tie margin on the gap to the top route, and a menu says how it was made."""

from __future__ import annotations

import math
import re

from django.urls import reverse

from routing_core import Router
from studio.models import Profile
from studio.playground.tests.test_playground import score_rows, text
from studio.shared.packs import build_pack
from tests.studio.fixtures import htmx


def _post(client, profile, message: str):
    return client.post(reverse("playground", args=[profile.slug]), {"message": message}, **htmx())


def test_the_floor_is_drawn_on_the_score_bars_and_not_on_relevance(profile, viewer, client_for):
    Profile.objects.filter(pk=profile.pk).update(floor=0.2)

    html = text(_post(client_for(viewer), profile, "why was I charged twice"))

    floors = re.findall(r'<line class="floor" data-testid="floor-line" x1="([\d.]+)"', html)
    assert floors and set(floors) == {"20.0"}  # 0.2 on a 0–1 score axis
    relevance_bars = re.findall(r'<svg class="bar" viewBox.*?</svg>', html)
    assert relevance_bars and not any("floor" in bar for bar in relevance_bars)


def test_a_decisive_win_marks_no_row_as_a_near_tie(profile, viewer, client_for):
    response = _post(client_for(viewer), profile, "why was I charged twice")
    decision = Router(build_pack(profile)).route("why was I charged twice")

    assert decision.decisive
    assert {row["tied"] for row in score_rows(response)} == {"no"}
    meter = re.search(
        r'data-testid="gap-meter" data-gap="([\d.]+)" data-margin="([\d.]+)"', text(response)
    )
    assert meter is not None and float(meter.group(1)) >= float(meter.group(2))
    assert 'class="band"' not in text(response)


def test_a_near_tie_marks_the_rivals_within_the_margin_and_explains_the_menu(
    profile, viewer, client_for
):
    message = "charged for delivery"
    decision = Router(build_pack(profile)).route(message)
    top = decision.ranked[0].score
    margin = decision.policy.near_tie_margin

    response = _post(client_for(viewer), profile, message)

    assert decision.verdict == "menu"
    tied = {r["route"] for r in score_rows(response) if r["tied"] == "yes"}
    expected = {
        r.route
        for r in decision.ranked[1:]
        if r.score > 0 and math.tanh((top - r.score) / 2) < margin
    }
    assert tied == expected and tied
    assert "equal scores keep the pack&#x27;s route order" in text(response)
    assert 'data-testid="menu-order"' in text(response)
