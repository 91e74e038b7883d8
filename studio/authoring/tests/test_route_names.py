"""Routes named in any language: a display name people read, an identifier the pack keeps strict."""

from __future__ import annotations

from html import unescape

import pytest
from django.urls import reverse

from studio.authoring.identifiers import suggest_identifier
from studio.importing.packs import import_pack
from studio.models import Route
from studio.shared.packs import build_pack
from tests.studio.fixtures import htmx


def route_post(route: Route, **changes: str) -> dict[str, object]:
    """What the route's edit form posts, with `changes`."""
    fields = ("name", "display_name", "description", "action_kind", "delegate_agent")
    data: dict[str, object] = {name: getattr(route, name) for name in fields}
    data |= {"examples": "\n".join(route.examples), "keywords": ", ".join(route.keywords)}
    return data | {"never": "", "stuck_message": "", "revision": route.revision} | changes


def _add(client, profile, **data):
    fields = {"display_name": "", "name": "", "description": "", "examples": "one"} | data
    return client.post(reverse("routes-add", args=[profile.slug]), fields, **htmx())


@pytest.mark.parametrize(
    ("shown", "identifier"),
    [
        ("Réclamations", "reclamations"),
        ("Änderung der Buchung", "anderung_der_buchung"),
        ("Жалобы", "zhaloby"),
        ("Straße", "strasse"),
        ("🙂", "route"),
    ],
)
def test_an_identifier_is_suggested_from_a_name_in_any_language(shown, identifier):
    assert suggest_identifier(shown) == identifier
    assert suggest_identifier(shown, {identifier}) == f"{identifier}_2"


def test_a_route_named_in_french_is_added_with_its_name_kept_for_people(
    profile, editor, client_for
):
    response = _add(client_for(editor), profile, name="réclamations")
    assert response.status_code == 200, unescape(response.content.decode())
    route = profile.routes.get(name="reclamations")
    assert route.display_name == "réclamations"
    assert "<strong>réclamations</strong>" in response.content.decode()
    assert build_pack(profile).routes[-1].display_name == "réclamations"


def test_a_display_name_that_is_its_own_identifier_is_not_kept_twice(profile, editor, client_for):
    _add(client_for(editor), profile, display_name="returns")
    assert profile.routes.get(name="returns").display_name == ""


def test_a_blank_identifier_is_made_from_the_display_name(profile, editor, client_for):
    client = client_for(editor)
    _add(client, profile, display_name="Remboursements")
    _add(client, profile, display_name="Remboursements !")
    names = list(
        profile.routes.filter(display_name__startswith="Rembourse").values_list("name", flat=True)
    )
    assert names == ["remboursements", "remboursements_2"]


def test_renaming_to_a_name_that_is_no_identifier_is_refused_in_words_with_a_suggestion(
    route, editor, client_for
):
    data = route_post(route, name="réclamations", display_name="", description="typed")
    response = client_for(editor).post(
        reverse("routes-edit", args=[route.profile.slug, route.pk]), data
    )
    html = unescape(response.content.decode())
    assert response.status_code == 422
    assert "“réclamations” cannot be an identifier: use the letters a to z without accents" in html
    assert "Try “reclamations”" in html
    assert 'value="réclamations"' in html and 'value="typed"' in html
    assert Route.objects.get(pk=route.pk).name == "billing"


def test_the_form_explains_the_identifier_rules_in_plain_words(profile, editor, client_for):
    html = unescape(client_for(editor).get(f"/profiles/{profile.slug}/").content.decode())
    assert "What agents receive: the letters a to z without accents, digits, _ or -" in html
    assert "Leave it blank to make one from the name." in html
    assert "What people read, in any language" in html


def test_a_display_name_survives_export_and_import(profile, editor):
    Route.objects.filter(profile=profile, name="billing").update(display_name="Facturation")
    document = build_pack(profile).model_dump(mode="json", exclude_none=True)
    copy = import_pack(document, user=editor, slug="copy")
    assert copy.routes.get(name="billing").display_name == "Facturation"


def test_the_api_reads_and_writes_a_display_name(profile, editor, client_for):
    client = client_for(editor)
    url = f"/api/profiles/{profile.slug}/routes"
    made = client.post(
        url,
        {"name": "reclamations", "display_name": "Réclamations", "examples": ["plainte"]},
        content_type="application/json",
    )
    assert made.status_code == 201, made.content
    assert made.json()["display_name"] == "Réclamations"
