"""Two people edit one route: the second sees what the first changed beside what they typed,
keeps their text, and saves it on top (or takes the first one's, field by field)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from studio.models import Route
from studio.shared.tokens import create_api_token
from tests.studio.fixtures import htmx


class _Form(HTMLParser):
    """The values a browser would post from the page's first POST form (to `action`, if given)."""

    def __init__(self, action: str = "") -> None:
        super().__init__()
        self._action = action
        self.values: dict[str, str] = {}
        self._textarea: str | None = None
        self._select: str | None = None
        self._done = self._inside = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form" and a.get("method") == "post" and not self._done:
            self._inside = a.get("action", "").endswith(self._action)
        if not self._inside:
            return
        if tag == "input" and a.get("type") not in ("radio", "checkbox", "submit"):
            self.values[a["name"]] = a.get("value", "")
        elif tag == "input" and "checked" in a:
            self.values[a["name"]] = a.get("value", "on")
        elif tag == "textarea":
            self._textarea = a["name"]
            self.values[a["name"]] = ""
        elif tag == "select":
            self._select = a["name"]
        elif (
            tag == "option"
            and self._select
            and ("selected" in a or self._select not in self.values)
        ):
            self.values[self._select] = a.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None
        elif tag == "form" and self._inside:
            self._inside, self._done = False, True

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.values[self._textarea] += data


def form_values(html: str, action: str = "") -> dict[str, str]:
    parser = _Form(action)
    parser.feed(html)
    values = parser.values
    for name, value in values.items():  # a textarea's first newline is not part of its value
        if value.startswith("\n"):
            values[name] = value[1:]
    return values


def _edit_url(route: Route) -> str:
    return reverse("routes-edit", args=[route.profile.slug, route.pk])


def _open(client: Client, route: Route) -> dict[str, str]:
    return form_values(client.get(_edit_url(route), **htmx()).content.decode())


def test_opening_an_edit_carries_the_values_it_started_from(route, editor, client_for):
    values = _open(client_for(editor), route)

    base = json.loads(values["base"])
    assert base["description"] == route.description
    assert base["examples"] == "\n".join(route.examples)


def test_a_conflict_takes_their_change_where_i_typed_nothing_and_saves_mine_on_top(
    route, owner, editor, client_for
):
    maria, me = client_for(owner), client_for(editor)
    theirs, mine = _open(maria, route), _open(me, route)
    maria.post(_edit_url(route), {**theirs, "description": "money questions"}, **htmx())
    my_examples = mine["examples"] + "\nI was charged twice this month"

    refused = me.post(_edit_url(route), {**mine, "examples": my_examples}, **htmx())

    html = refused.content.decode()
    assert refused.status_code == 409
    assert 'data-testid="edit-conflict"' in html and "changed by owner at" in html
    assert 'data-field="description"' in html and 'data-field="examples"' not in html
    shown = form_values(html)
    assert shown["description"] == "money questions"  # theirs: I had not touched it
    assert shown["examples"] == my_examples  # mine, kept
    assert shown["revision"] == str(Route.objects.get(pk=route.pk).revision)

    saved = me.post(_edit_url(route), shown, **htmx())

    assert saved.status_code == 200
    stored = Route.objects.get(pk=route.pk)
    assert stored.description == "money questions"
    assert stored.examples[-1] == "I was charged twice this month"


@pytest.mark.parametrize("choice", ["mine", "theirs"])
def test_a_field_we_both_changed_keeps_mine_unless_i_take_theirs(
    route, owner, editor, client_for, choice
):
    maria, me = client_for(owner), client_for(editor)
    theirs, mine = _open(maria, route), _open(me, route)
    maria.post(_edit_url(route), {**theirs, "description": "maria's words"}, **htmx())

    refused = me.post(_edit_url(route), {**mine, "description": "my words"}, **htmx())

    html = refused.content.decode()
    shown = form_values(html)
    assert shown["description"] == "my words"  # never lost, whatever the choice
    assert shown["take_description"] == "mine"  # the default
    assert "maria&#x27;s words" in html and "my words" in html  # side by side

    me.post(_edit_url(route), {**shown, "take_description": choice}, **htmx())

    expected = {"mine": "my words", "theirs": "maria's words"}[choice]
    assert Route.objects.get(pk=route.pk).description == expected


def test_a_third_save_meanwhile_is_a_new_conflict_that_still_keeps_my_text(
    route, owner, editor, client_for
):
    maria, me = client_for(owner), client_for(editor)
    theirs, mine = _open(maria, route), _open(me, route)
    maria.post(_edit_url(route), {**theirs, "description": "first"}, **htmx())
    shown = form_values(
        me.post(_edit_url(route), {**mine, "description": "mine"}, **htmx()).content.decode()
    )
    again = _open(maria, route)
    maria.post(_edit_url(route), {**again, "description": "second"}, **htmx())

    refused = me.post(_edit_url(route), {**shown, "take_description": "theirs"}, **htmx())

    assert refused.status_code == 409
    assert form_values(refused.content.decode())["description"] == "mine"
    assert Route.objects.get(pk=route.pk).description == "second"


def test_without_htmx_the_conflict_is_on_the_whole_page(route, owner, editor, client_for):
    maria, me = client_for(owner), client_for(editor)
    theirs, mine = _open(maria, route), _open(me, route)
    maria.post(_edit_url(route), {**theirs, "description": "money questions"})

    refused = me.post(_edit_url(route), {**mine, "keywords": "invoice, receipt"})

    html = refused.content.decode()
    assert refused.status_code == 409 and "<html" in html
    assert 'data-testid="edit-conflict"' in html and 'value="invoice, receipt"' in html


def test_the_api_answers_a_conflict_with_both_versions(route, owner, editor):
    url = f"/api/profiles/{route.profile.slug}/routes/{route.pk}"
    maria, me = _api(owner), _api(editor)
    maria.patch(url, {"revision": 1, "description": "maria's"}, content_type="application/json")

    response = me.patch(
        url, {"revision": 1, "keywords": ["receipt"]}, content_type="application/json"
    )

    body = response.json()
    assert response.status_code == 409 and "changed by owner" in body["detail"]
    assert body["current"]["description"] == "maria's"
    assert body["current"]["revision"] == 2 and body["current"]["id"] == route.pk
    assert body["yours"] == {"revision": 1, "keywords": ["receipt"]}


def _api(user: Any) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {create_api_token(user, 'conflicts')[1]}")


def test_a_tool_conflict_takes_their_unticked_box_and_keeps_my_description(
    profile, owner, editor, client_for
):
    tool = profile.tools.get(name="hydrate_context")  # always included
    url = reverse("tools-edit", args=[profile.slug, tool.pk])
    maria, me = client_for(owner), client_for(editor)
    theirs = form_values(maria.get(url, **htmx()).content.decode())
    mine = form_values(me.get(url, **htmx()).content.decode())
    del theirs["always_include"]  # she unticks it
    maria.post(url, theirs, **htmx())

    refused = me.post(url, {**mine, "description": "loads the customer"}, **htmx())

    shown = form_values(refused.content.decode())
    assert refused.status_code == 409 and "always_include" not in shown
    me.post(url, shown, **htmx())
    stored = type(tool).objects.get(pk=tool.pk)
    assert (stored.always_include, stored.description) == (False, "loads the customer")


def test_a_policy_conflict_keeps_my_floor_and_takes_their_menu_size(
    profile, owner, editor, client_for
):
    url = reverse("policy", args=[profile.slug])
    maria, me = client_for(owner), client_for(editor)
    theirs = form_values(maria.get(url).content.decode(), url)
    mine = form_values(me.get(url).content.decode(), url)
    maria.post(url, {**theirs, "menu_size": "4"})

    refused = me.post(url, {**mine, "floor": "0.05"})

    html = refused.content.decode()
    shown = form_values(html, url)
    assert refused.status_code == 409 and 'data-testid="edit-conflict"' in html
    assert (shown["menu_size"], shown["floor"]) == ("4", "0.05")
    me.post(url, shown)
    stored = type(profile).objects.get(pk=profile.pk)
    assert (stored.menu_size, stored.floor) == (4, 0.05)


def test_a_policy_conflict_takes_their_ticked_background_box_and_keeps_my_floor(
    profile, owner, editor, client_for
):
    url = reverse("policy", args=[profile.slug])
    maria, me = client_for(owner), client_for(editor)
    theirs = form_values(maria.get(url).content.decode(), url)
    mine = form_values(me.get(url).content.decode(), url)
    assert "no_background" not in mine  # unticked by default: the background is learned
    maria.post(url, {**theirs, "no_background": "on"})

    refused = me.post(url, {**mine, "floor": "0.05"})

    shown = form_values(refused.content.decode(), url)
    assert refused.status_code == 409 and shown.get("no_background") == "on"
    me.post(url, shown)
    stored = type(profile).objects.get(pk=profile.pk)
    assert (stored.no_background, stored.floor) == (True, 0.05)


def test_a_policy_conflict_takes_their_encoder_and_keeps_my_floor(
    profile, owner, editor, client_for
):
    url = reverse("policy", args=[profile.slug])
    type(profile).objects.filter(pk=profile.pk).update(scorer_kind="hybrid")
    maria, me = client_for(owner), client_for(editor)
    theirs = form_values(maria.get(url).content.decode(), url)
    mine = form_values(me.get(url).content.decode(), url)
    assert mine["encoder"] == "all-minilm-l6-v2"
    maria.post(url, {**theirs, "encoder": "multilingual-e5-small"})

    refused = me.post(url, {**mine, "floor": "0.05"})

    shown = form_values(refused.content.decode(), url)
    assert refused.status_code == 409
    assert (shown["encoder"], shown["floor"]) == ("multilingual-e5-small", "0.05")
    me.post(url, shown)
    stored = type(profile).objects.get(pk=profile.pk)
    assert (stored.scorer_settings["model"], stored.floor) == ("multilingual-e5-small", 0.05)


def test_a_profile_settings_conflict_keeps_my_name_and_takes_their_description(
    profile, owner, editor, client_for
):
    page, url = f"/profiles/{profile.slug}/", reverse("profile-settings", args=[profile.slug])
    maria, me = client_for(owner), client_for(editor)
    theirs = form_values(maria.get(page).content.decode(), url)
    mine = form_values(me.get(page).content.decode(), url)
    maria.post(url, {**theirs, "description": "maria's words"})

    refused = me.post(url, {**mine, "name": "Shop support"}, **htmx())

    shown = form_values(refused.content.decode(), url)
    assert refused.status_code == 409
    assert (shown["name"], shown["description"]) == ("Shop support", "maria's words")
    me.post(url, shown)
    stored = type(profile).objects.get(pk=profile.pk)
    assert (stored.name, stored.description) == ("Shop support", "maria's words")
