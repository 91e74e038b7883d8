"""The playground's bars draw both thresholds in the scores' own units: the floor on the raw
scores, the near-tie margin as the lead over the runner-up it asks for; a menu says how it was made."""

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
        r'data-testid="gap-meter" data-lead="([\d.]+)" data-needed="([\d.]+)"', text(response)
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


def test_a_near_tie_says_the_lead_that_the_scores_beside_it_show(profile, viewer, client_for):
    message = "charged for delivery"
    decision = Router(build_pack(profile)).route(message)
    top, second = decision.ranked[0].score, decision.ranked[1].score

    html = text(_post(client_for(viewer), profile, message))

    assert decision.verdict == "menu"
    lead = re.search(r'data-testid="runner-up-lead">([^<]*)<', html)
    # What the page prints: the difference of the two printed scores, not tanh of half of it.
    assert lead is not None and lead.group(1) == (
        f"{top - second:.2f} ahead, less than the 0.30 lead the near-tie margin 0.15 asks for"
    )
    assert f"shipping ({top:.2f}) and billing ({second:.2f}): {top - second:.2f} ahead" in html
    behind = re.search(r'data-route="billing".*?<td class="num mono small">([\d.]+)', html, re.S)
    assert behind is not None and behind.group(1) == f"{top - second:.2f}"
    meter = re.search(r'data-lead="([\d.]+)" data-needed="([\d.]+)"', html)
    assert meter is not None
    assert meter.groups() == (f"{100 * (top - second):.1f}", f"{100 * 2 * math.atanh(0.15):.1f}")


def test_the_page_speaks_no_engine_names(profile, viewer, client_for):
    client = client_for(viewer)
    url = reverse("playground", args=[profile.slug])

    html = text(client.post(url, {"message": "charged for delivery", "incumbent": "human"}))

    assert "STAY" not in html and "to_event" not in html
