"""Triage in more languages: the lexicon page fills its boxes from built-in lexicons (nothing
saved until the person saves), and a saved Spanish mix triages Spanish in the playground."""

from __future__ import annotations

import html
import re

from django.urls import reverse

from routing_core.lexicons import mix
from studio.models import Profile


def _url(profile: Profile) -> str:
    return reverse("lexicons", args=[profile.slug])


def _box(page: str, name: str) -> str:
    found = re.search(rf'<textarea name="{name}"[^>]*>(.*?)</textarea>', page, re.S)
    assert found, name
    return html.unescape(found.group(1)).strip()


def test_choosing_languages_fills_the_boxes_without_saving(profile, editor, client_for):
    page = client_for(editor).get(_url(profile), {"start_from": ["en", "es"]}).content.decode()

    chosen = mix(["en", "es"])
    assert set(_box(page, "action_verbs").split()) == chosen.action_verbs
    assert set(_box(page, "knowledge_verbs").split()) == chosen.knowledge_verbs
    assert "Filled with the built-in words of English + Español" in page
    assert re.search(r'value="es" checked', page) and not re.search(r'value="de" checked', page)
    assert Profile.objects.get(pk=profile.pk).action_verbs is None  # a GET saves nothing


def test_english_alone_leaves_the_boxes_empty_for_the_built_in_default(profile, editor, client_for):
    page = client_for(editor).get(_url(profile), {"start_from": "en"}).content.decode()

    assert _box(page, "action_verbs") == "" and _box(page, "knowledge_verbs") == ""
    assert re.search(r'value="en" checked', page)


def test_an_unknown_language_code_is_ignored(profile, editor, client_for):
    response = client_for(editor).get(_url(profile), {"start_from": "xx"})

    assert response.status_code == 200 and b"Filled with" not in response.content


def test_a_saved_spanish_mix_triages_spanish_in_the_playground(profile, editor, client_for):
    client = client_for(editor)
    playground = reverse("playground", args=[profile.slug])
    before = client.post(playground, {"message": "Cancela mi suscripción"}).content.decode()
    assert 'data-testid="triage-label">ambiguous<' in before
    chosen = mix(["en", "es"])
    saved = client.post(
        _url(profile),
        {
            "action_verbs": " ".join(sorted(chosen.action_verbs)),
            "knowledge_verbs": " ".join(sorted(chosen.knowledge_verbs)),
            "question_pattern": chosen.question_pattern,
            "revision": str(profile.revision),
        },
    )
    assert saved.status_code == 302
    stored = Profile.objects.get(pk=profile.pk)
    assert set(stored.action_verbs) == chosen.action_verbs
    assert stored.question_pattern == chosen.question_pattern

    page = client.get(_url(profile)).content.decode()
    assert re.search(r'value="es" checked', page)  # the page says which languages it holds

    label = re.compile(r'data-testid="triage-label">(\w+)<')
    reply = client.post(playground, {"message": "Cancela mi suscripción"}).content.decode()
    assert label.findall(reply) == ["action"]  # the English default said "ambiguous"


def test_a_post_without_the_version_it_edited_is_out_of_date_not_a_conflict(
    profile, editor, client_for
):
    response = client_for(editor).post(_url(profile), {"action_verbs": "cancel book"})

    page = response.content.decode()
    assert response.status_code == 422
    assert "This form was out of date" in page and "changed by" not in page
    assert set(_box(page, "action_verbs").split()) == {"cancel", "book"}  # what was typed stays
    assert Profile.objects.get(pk=profile.pk).action_verbs is None
