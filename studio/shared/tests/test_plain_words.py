"""Plain words first, the formula behind a disclosure: the policy help, the playground's verdict
and the feedback after a save."""

from __future__ import annotations

import re

from django.urls import reverse

from studio.playground.tests.test_playground import by_testid, text
from studio.shared import drafts
from tests.studio.fixtures import htmx, policy_form


def _outside_details(html: str) -> str:
    return re.sub(r"<details.*?</details>", "", html, flags=re.S)


def test_the_policy_help_is_plain_and_its_formula_sits_behind_a_disclosure(
    profile, viewer, client_for
):
    html = client_for(viewer).get(reverse("policy", args=[profile.slug])).content.decode()

    assert "too close to call" in _outside_details(html)
    assert "tanh" not in _outside_details(html)
    formula = re.search(
        r"<details class=\"formula small\"><summary>How it is computed</summary><p>(.*?)</p>", html
    )
    assert formula is not None and "tanh" in html.split("How it is computed", 1)[1]


def test_saving_the_policy_in_place_says_it_was_saved(profile, editor, client_for):
    data = policy_form(near_tie_margin="0.2")

    response = client_for(editor).post(reverse("policy", args=[profile.slug]), data, **htmx())

    assert response.status_code == 200
    assert by_testid(response, "saved")[0].startswith("Saved at ")
    again = client_for(editor).post(
        reverse("policy", args=[profile.slug]),
        {**data, "near_tie_margin": "7", "revision": "2"},
        **htmx(),
    )
    assert again.status_code == 422 and 'data-testid="saved"' not in text(again)


def test_a_first_turn_chose_a_route_rather_than_moved(profile, viewer, client_for):
    drafts.clear_cache()
    response = client_for(viewer).post(
        reverse("playground", args=[profile.slug]), {"message": "why was I charged twice"}, **htmx()
    )

    assert by_testid(response, "verdict-words") == ["Chose billing · the scores decided"]
    raw = re.search(r'<details class="verdict-raw small">.*?</details>', text(response), re.S)
    assert raw is not None and 'data-testid="verdict-kind">move<' in raw.group(0)


def test_a_later_turn_says_where_it_moved_from_and_a_tie_why_it_stayed(profile, viewer, client_for):
    client = client_for(viewer)
    page = reverse("playground", args=[profile.slug])

    moved = client.post(
        page, {"message": "why was I charged twice", "incumbent": "shipping"}, **htmx()
    )
    stayed = client.post(
        page, {"message": "charged for delivery", "incumbent": "shipping"}, **htmx()
    )

    assert by_testid(moved, "verdict-words") == [
        "Moved from shipping to billing · the scores decided"
    ]
    # A near-tie alone; the incumbent's prior now settles it (docs/decisions.md, "Routing
    # that follows the conversation").
    assert by_testid(stayed, "verdict-words") == ["Stayed on shipping · the scores decided"]


def test_no_template_comment_spans_lines_so_none_is_shown_to_people():
    """Django's `{# #}` comments end at the line's end: one that runs on is printed on the
    page as text (a playground once showed its own comment above the scores)."""
    from django.conf import settings

    folder = settings.BASE_DIR / "templates"
    runs_on = [
        f"{path.relative_to(folder)}:{number}"
        for path in sorted(folder.rglob("*.html"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "{#" in line and "#}" not in line.split("{#", 1)[1]
    ]
    assert runs_on == []


def test_the_playground_shows_no_template_source(profile, viewer, client_for):
    page = client_for(viewer).get(
        reverse("playground", args=[profile.slug]), {"message": "where is my parcel"}
    )

    assert "{#" not in page.content.decode() and "{%" not in page.content.decode()
