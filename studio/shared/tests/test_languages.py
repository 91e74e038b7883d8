"""Each message's language in the studio: stored at ingest, shown on the playground, the
suites and the traffic pages, and linted against the routes' examples.

The messages are this file's own; the profile (`tests/studio/fixtures.py`) is in English.
"""

from __future__ import annotations

import re
import sys

import pytest
from django.urls import reverse

from routing_core import Router
from studio.agents.events import EventBatchIn, ingest
from studio.models import Event, Profile, TestCase, TrafficSettings
from studio.shared.languages import recent_languages
from studio.shared.packs import build_pack

SPANISH = "¿Por qué me cobraron dos veces este mes en la tarjeta?"
ENGLISH = "I would like to know why I was charged twice this month"
UNMATCHED = {"verdict": "unmatched", "route": None, "by": "none"}


def store(profile: Profile, messages: list[str], event: dict | None = None) -> list[Event]:
    router = Router(build_pack(profile))
    records = [
        {"message": m, "event": router.route(m).to_event() | (event or {})} for m in messages
    ]
    ingest(profile, EventBatchIn.model_validate({"events": records}))
    return list(Event.objects.order_by("-pk")[: len(messages)])


def test_ingest_stores_each_messages_language(profile):
    latest_first = store(profile, [ENGLISH, "ok", SPANISH])

    assert [event.language for event in latest_first] == ["es", "", "en"]


def test_the_language_is_kept_when_the_text_is_not(profile):
    TrafficSettings.objects.create(profile=profile, keep_message_text=False)

    (event,) = store(profile, [SPANISH])

    assert event.message is None and event.language == "es"


def test_a_turn_sent_without_text_has_no_language(profile):
    router = Router(build_pack(profile))
    ingest(
        profile,
        EventBatchIn.model_validate({"events": [{"event": router.route(SPANISH).to_event()}]}),
    )
    assert Event.objects.get().language == ""


def test_the_review_page_says_the_language(profile, viewer, client_for):
    store(profile, [SPANISH], UNMATCHED)

    html = client_for(viewer).get(reverse("traffic-review", args=[profile.slug])).content.decode()

    assert re.search(r'written in <span data-testid="review-language">Spanish</span>', html)


def test_the_traffic_page_charts_the_languages(profile, viewer, client_for):
    store(profile, [SPANISH, SPANISH, ENGLISH, "ok"])

    html = client_for(viewer).get(reverse("traffic", args=[profile.slug])).content.decode()

    assert "Share of turns by language" in html
    for label in ("Spanish", "English", "unclear (short, or no text sent)"):
        assert f">{label}</text>" in html or f">{label[:25]}…</text>" in html, label


def test_the_lint_names_routes_with_no_examples_in_a_language_the_traffic_uses(
    profile, viewer, client_for
):
    store(profile, [SPANISH] * 12 + [ENGLISH] * 40)
    assert recent_languages(profile) == {"es": 12, "en": 40}

    html = client_for(viewer).get(reverse("lint", args=[profile.slug])).content.decode()

    assert 'data-kind="language-gap"' in html
    assert (
        "23% of recent messages (of those whose language is clear) are in Spanish; these routes have no Spanish examples: "
        "billing, shipping, human"
    ) in html


def test_the_playground_says_the_messages_language(profile, viewer, client_for):
    client = client_for(viewer)
    url = reverse("playground", args=[profile.slug])

    spanish = client.post(url, {"message": SPANISH}).content.decode()
    short = client.post(url, {"message": "ok"}).content.decode()

    assert (
        '<p class="small muted" data-testid="verdict-language">Written in Spanish.</p>' in spanish
    )
    assert 'data-testid="verdict-language"' not in short


def test_the_playground_says_which_routes_lack_the_messages_language_and_what_would_read_it(
    profile, viewer, client_for
):
    """On routes written in English, a Spanish message is read only through what it shares
    with them: the page says so, and the API's notes say the same."""
    client = client_for(viewer)
    spanish = client.post(reverse("playground", args=[profile.slug]), {"message": SPANISH})
    english = client.post(reverse("playground", args=[profile.slug]), {"message": ENGLISH})

    gap = re.search(r'data-testid="verdict-language-gap">([^<]*)<', spanish.content.decode())
    assert gap is not None
    assert gap.group(1) == (
        "No route has Spanish examples. Until they have some, a hybrid scorer whose sentence"
        " encoder knows many languages (multilingual-e5-small) would read Spanish messages by"
        " what they mean."
    )
    assert 'data-testid="verdict-language-gap"' not in english.content.decode()
    notes = client.post(
        f"/api/profiles/{profile.slug}/route", {"message": SPANISH}, content_type="application/json"
    ).json()["notes"]
    assert gap.group(1) in notes


def test_the_test_cases_page_says_each_cases_language(profile, viewer, client_for):
    TestCase.objects.create(profile=profile, message=SPANISH, expected_route="billing", order=0)
    TestCase.objects.create(profile=profile, message="ok", expected_route="billing", order=1)

    html = client_for(viewer).get(reverse("tests", args=[profile.slug])).content.decode()

    assert re.findall(r'data-testid="case-language">([^<]*)<', html) == ["Spanish"]


@pytest.mark.usefixtures("without_background")
def test_a_suite_runs_results_say_each_cases_language(profile, viewer, client_for):
    TestCase.objects.create(profile=profile, message=SPANISH, expected_route="billing", order=0)
    client = client_for(viewer)

    started = client.post(reverse("test-run-start", args=[profile.slug]))
    html = client.get(started["Location"], {"show": "all"}).content.decode()

    assert re.findall(r'data-testid="case-language">([^<]*)<', html) == ["Spanish"]


def test_without_the_detector_turns_are_stored_and_pages_show_no_language(
    profile, viewer, client_for, monkeypatch
):
    from routing_core import languages

    monkeypatch.setattr(languages, "_loaded", None)  # as if never loaded
    languages.forget()  # nor any message classified
    monkeypatch.setitem(sys.modules, "py3langid.langid", None)  # and not installed

    (event,) = store(profile, [SPANISH], UNMATCHED)
    html = client_for(viewer).get(reverse("traffic-review", args=[profile.slug])).content.decode()

    assert event.language == "" and event.message == SPANISH
    assert 'data-testid="review-language"' not in html


def test_the_playground_api_gives_the_messages_language(profile, viewer, client_for):
    client = client_for(viewer)
    url = f"/api/profiles/{profile.slug}/route"

    spanish = client.post(url, {"message": SPANISH}, content_type="application/json").json()
    short = client.post(url, {"message": "ok"}, content_type="application/json").json()

    assert (spanish["language"], short["language"]) == ("es", None)
