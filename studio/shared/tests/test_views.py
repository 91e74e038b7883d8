"""Every page with and without htmx: full page vs fragment, validation, conflicts."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from django.utils.html import escape

from studio.models import AuditEntry, Profile, Route, Tool
from studio.shared.cosine_thresholds import CLEARED_ACTION, NOTICE_KEY
from tests.studio.fixtures import htmx, policy_form


def url(name: str, profile: Profile, item: Any = None) -> str:
    args = [profile.slug] + ([item.pk] if item is not None else [])
    return reverse(name, args=args)


def route_post(route: Route, **changes: Any) -> dict[str, Any]:
    data = {
        "name": route.name,
        "description": route.description,
        "examples": "\n".join(route.examples),
        "keywords": ", ".join(route.keywords),
        "never": "",
        "action_kind": route.action_kind,
        "delegate_agent": route.delegate_agent,
        "stuck_message": route.stuck_message,
        "revision": route.revision,
    }
    return {**data, **changes}


def is_full_page(response: Any) -> bool:
    return b"<html" in response.content


PAGES = ["profile-detail", "rules", "tools", "policy", "lexicons", "audit", "pack-badge"]


@pytest.mark.parametrize("name", PAGES)
def test_each_profile_page_renders_for_a_viewer(name, profile, viewer, client_for):
    response = client_for(viewer).get(url(name, profile))

    assert response.status_code == 200
    assert is_full_page(response) == (name != "pack-badge")


def test_the_profile_list_shows_profiles_and_their_route_counts(profile, viewer, client_for):
    response = client_for(viewer).get(reverse("profile-list"))

    assert response.status_code == 200
    assert b"Shop" in response.content
    assert b"New profile" not in response.content  # a viewer cannot create


def test_the_profile_list_links_an_editor_to_the_pack_import(profile, editor, viewer, client_for):
    link = f'href="{reverse("import")}"'.encode()

    assert link in client_for(editor).get(reverse("profile-list")).content
    assert link not in client_for(viewer).get(reverse("profile-list")).content  # cannot import


def test_the_login_page_renders(client):
    response = client.get(reverse("login"))

    assert response.status_code == 200
    assert b'name="password"' in response.content


def test_the_body_sends_the_csrf_token_to_htmx(profile, viewer, client_for):
    response = client_for(viewer).get(url("profile-detail", profile))

    assert b'hx-headers=\'{"X-CSRFToken": "' in response.content
    assert b"vendor/htmx.min.js" in response.content


def test_the_routes_page_shows_the_badge_and_every_route(profile, viewer, client_for):
    response = client_for(viewer).get(url("profile-detail", profile))

    assert b"valid pack" in response.content
    for name in (b"billing", b"shipping", b"human"):
        assert name in response.content


def test_a_profile_is_created_from_the_list(editor, client_for):
    response = client_for(editor).post(
        reverse("profile-list"), {"slug": "faq", "name": "FAQ bot", "description": ""}
    )

    assert response.status_code == 302
    assert response["Location"] == reverse("profile-detail", args=["faq"])
    assert Profile.objects.get(slug="faq").name == "FAQ bot"


def test_a_bad_slug_keeps_what_was_typed_and_creates_nothing(editor, client_for):
    response = client_for(editor).post(
        reverse("profile-list"), {"slug": "Bad slug!", "name": "Typed name", "description": ""}
    )

    assert response.status_code == 422
    assert b'value="Typed name"' in response.content
    assert not Profile.objects.exists()


class TestRouteRows:
    def test_the_edit_form_is_a_row_fragment_with_htmx(self, route, editor, client_for):
        response = client_for(editor).get(url("routes-edit", route.profile, route), **htmx())

        assert response.status_code == 200
        assert not is_full_page(response)
        assert response.content.strip().startswith(b'<tr id="route-')
        assert b'name="examples"' in response.content

    def test_the_edit_form_is_the_whole_page_without_htmx(self, route, editor, client_for):
        response = client_for(editor).get(url("routes-edit", route.profile, route))

        assert is_full_page(response)
        assert b'class="edit-row"' in response.content

    def test_cancel_returns_the_display_row(self, route, editor, client_for):
        response = client_for(editor).get(url("routes-row", route.profile, route), **htmx())

        assert response.status_code == 200
        assert b'data-route="billing"' in response.content
        assert not is_full_page(response)

    def test_the_display_row_without_htmx_is_the_page(self, route, editor, client_for):
        response = client_for(editor).get(url("routes-row", route.profile, route))

        assert response.status_code == 302

    def test_saving_with_htmx_swaps_only_the_row_and_refreshes_the_badge(
        self, route, editor, client_for
    ):
        data = route_post(route, description="money things", examples="a\nb\n\n c ")

        response = client_for(editor).post(url("routes-edit", route.profile, route), data, **htmx())

        assert response.status_code == 200
        assert not is_full_page(response)
        assert b"money things" in response.content
        assert "pack-changed" in response["HX-Trigger"]
        assert Route.objects.get(pk=route.pk).examples == ["a", "b", "c"]

    def test_saving_without_htmx_redirects_to_the_page(self, route, editor, client_for):
        response = client_for(editor).post(
            url("routes-edit", route.profile, route),
            route_post(route, keywords="invoice, real bill"),
        )

        assert response.status_code == 302
        assert Route.objects.get(pk=route.pk).keywords == ["invoice", "real bill"]

    @pytest.mark.parametrize("headers", [{}, htmx()], ids=["page", "htmx"])
    def test_an_invalid_name_shows_routing_cores_reason_keeps_the_input_and_saves_nothing(
        self, route, editor, client_for, headers
    ):
        data = route_post(route, name="Bad Name", description="typed text")

        response = client_for(editor).post(
            url("routes-edit", route.profile, route), data, **headers
        )

        assert response.status_code == 422
        assert b"a name is one lowercase word" in response.content
        assert b'value="Bad Name"' in response.content
        assert b'value="typed text"' in response.content
        assert is_full_page(response) == (not headers)
        stored = Route.objects.get(pk=route.pk)
        assert (stored.name, stored.revision) == ("billing", 1)

    def test_a_delegate_and_stuck_message_together_are_refused_next_to_the_field(
        self, route, editor, client_for
    ):
        data = route_post(
            route, action_kind="delegate", delegate_agent="order-agent", stuck_message="bye"
        )

        response = client_for(editor).post(url("routes-edit", route.profile, route), data, **htmx())

        assert response.status_code == 422
        assert b'value="bye"' in response.content
        assert Route.objects.get(pk=route.pk).action_kind == "answer"

    @pytest.mark.parametrize("headers", [{}, htmx()], ids=["page", "htmx"])
    def test_a_second_save_with_a_stale_revision_is_refused(
        self, route, editor, owner, client_for, headers
    ):
        client_for(owner).post(
            url("routes-edit", route.profile, route), route_post(route, description="first")
        )

        response = client_for(editor).post(
            url("routes-edit", route.profile, route),
            route_post(route, description="second"),
            **headers,
        )

        assert response.status_code == 409
        assert b"changed by owner at " in response.content
        assert b'data-testid="edit-conflict"' in response.content  # theirs beside mine
        assert b'value="second"' in response.content
        assert Route.objects.get(pk=route.pk).description == "first"

    def test_adding_a_route_with_htmx_returns_the_table(self, profile, editor, client_for):
        data = {"name": "returns", "description": "send things back", "examples": "return my shoes"}

        response = client_for(editor).post(url("routes-add", profile), data, **htmx())

        assert response.status_code == 200
        assert response.content.strip().startswith(b'<section class="card" id="items">')
        assert b'data-route="returns"' in response.content
        assert profile.routes.last().name == "returns"

    def test_adding_a_duplicate_route_keeps_the_form_and_adds_nothing(
        self, profile, editor, client_for
    ):
        data = {"name": "billing", "description": "dup", "examples": "one"}

        response = client_for(editor).post(url("routes-add", profile), data)

        assert response.status_code == 422
        assert is_full_page(response)
        assert b'value="dup"' in response.content
        assert profile.routes.count() == 3

    def test_adding_without_htmx_redirects(self, profile, editor, client_for):
        response = client_for(editor).post(
            url("routes-add", profile), {"name": "faq", "description": "", "examples": "what"}
        )

        assert response.status_code == 302

    @pytest.mark.parametrize("headers", [{}, htmx()], ids=["page", "htmx"])
    def test_delete_asks_for_confirmation_first(self, route, editor, client_for, headers):
        response = client_for(editor).get(url("routes-delete", route.profile, route), **headers)

        assert response.status_code == 200
        assert b"Delete billing?" in response.content
        assert is_full_page(response) == (not headers)
        assert Route.objects.filter(pk=route.pk).exists()

    def test_confirmed_delete_with_htmx_removes_the_row(self, route, editor, client_for):
        response = client_for(editor).post(url("routes-delete", route.profile, route), **htmx())

        assert response.status_code == 200
        assert response.content.strip() == b""
        assert not Route.objects.filter(pk=route.pk).exists()

    def test_confirmed_delete_without_htmx_redirects(self, route, editor, client_for):
        response = client_for(editor).post(url("routes-delete", route.profile, route))

        assert response.status_code == 302
        assert not Route.objects.filter(pk=route.pk).exists()

    def test_deleting_a_route_a_rule_uses_explains_why_not(self, profile, editor, client_for):
        human = profile.routes.get(name="human")

        response = client_for(editor).post(url("routes-delete", profile, human), **htmx())

        assert response.status_code == 422
        assert "Cannot delete: rule 1 → route" in response.content.decode()
        assert Route.objects.filter(pk=human.pk).exists()

    @pytest.mark.parametrize("headers", [{}, htmx()], ids=["page", "htmx"])
    def test_moving_a_route_down_reorders(self, route, editor, client_for, headers):
        response = client_for(editor).post(
            url("routes-move", route.profile, route), {"direction": "down"}, **headers
        )

        assert response.status_code == (200 if headers else 302)
        assert [r.name for r in route.profile.routes.all()] == ["shipping", "billing", "human"]


def test_the_default_route_is_chosen_from_the_routes(profile, editor, client_for):
    data = {"name": "Shop", "description": "", "default_route": "shipping", "revision": 1}

    response = client_for(editor).post(url("profile-settings", profile), data, **htmx())

    assert response.status_code == 200
    assert not is_full_page(response)
    assert Profile.objects.get(pk=profile.pk).default_route == "shipping"


def test_profile_settings_without_htmx_redirect(profile, editor, client_for):
    data = {"name": "Shop 2", "description": "", "default_route": "", "revision": 1}

    response = client_for(editor).post(url("profile-settings", profile), data)

    assert response.status_code == 302
    assert Profile.objects.get(pk=profile.pk).name == "Shop 2"


class TestRulesAndTools:
    def test_a_bad_regex_is_shown_next_to_the_regex_field(self, profile, editor, client_for):
        data = {
            "route_name": "billing",
            "match_kind": "regex",
            "regex": "(oops",
            "keywords": "",
            "examples": "",
        }

        response = client_for(editor).post(url("rules-add", profile), data, **htmx())

        assert response.status_code == 422
        assert b"invalid regex" in response.content
        assert b'value="(oops"' in response.content
        assert profile.rules.count() == 1

    def test_an_all_rule_is_built_from_condition_rows(self, profile, editor, client_for):
        data = {
            "route_name": "billing",
            "match_kind": "all",
            "cond_kind_0": "keywords",
            "cond_value_0": "copy",
            "cond_kind_1": "regex",
            "cond_value_1": "invoice",
            "keywords": "",
            "regex": "",
            "examples": "a copy of my invoice",
        }

        response = client_for(editor).post(url("rules-add", profile), data)

        assert response.status_code == 302
        assert profile.rules.last().all_of == [{"keywords": ["copy"]}, {"regex": "invoice"}]

    def test_a_rule_edit_form_is_a_fragment(self, profile, editor, client_for):
        rule = profile.rules.get()

        response = client_for(editor).get(url("rules-edit", profile, rule), **htmx())

        assert response.content.strip().startswith(f'<tr id="rule-{rule.pk}"'.encode())

    def test_a_tool_is_edited_inline(self, profile, editor, client_for):
        tool = profile.tools.get(name="refund_order")
        data = {
            "name": "refund_order",
            "description": "refund it",
            "trigger_keywords": "refund, money back",
            "revision": 1,
        }

        response = client_for(editor).post(url("tools-edit", profile, tool), data, **htmx())

        assert response.status_code == 200
        assert b"refund it" in response.content
        assert Tool.objects.get(pk=tool.pk).trigger_keywords == ["refund", "money back"]

    def test_a_tool_is_deleted_after_confirmation(self, profile, editor, client_for):
        tool = profile.tools.get(name="refund_order")

        response = client_for(editor).post(url("tools-delete", profile, tool))

        assert response.status_code == 302
        assert not Tool.objects.filter(pk=tool.pk).exists()


class TestPolicyAndLexicons:
    def test_the_policy_page_explains_each_threshold_and_shows_defaults(
        self, profile, viewer, client_for
    ):
        response = client_for(viewer).get(url("policy", profile))

        assert b"near-tie" in response.content
        assert b"0.15" in response.content
        assert b"Built-in default" in response.content

    def test_a_policy_is_saved(self, profile, editor, client_for):
        response = client_for(editor).post(
            url("policy", profile), policy_form(floor="0.2", strictness="guard")
        )

        assert response.status_code == 302
        profile.refresh_from_db()
        assert (profile.floor, profile.strictness) == (0.2, "guard")

    @pytest.mark.parametrize("headers", [{}, htmx()], ids=["page", "htmx"])
    def test_an_out_of_range_margin_is_refused_with_routing_cores_reason(
        self, profile, editor, client_for, headers
    ):
        response = client_for(editor).post(
            url("policy", profile), policy_form(near_tie_margin="5"), **headers
        )

        assert response.status_code == 422
        assert b"must be 1 or less" in response.content  # in words, not pydantic's
        assert b'value="5"' in response.content
        assert is_full_page(response) == (not headers)
        assert Profile.objects.get(pk=profile.pk).near_tie_margin == 0.15

    def test_a_stale_policy_save_is_a_conflict(self, profile, editor, client_for):
        client_for(editor).post(url("policy", profile), policy_form(menu_size="4"))

        response = client_for(editor).post(url("policy", profile), policy_form(menu_size="5"))

        assert response.status_code == 409
        assert b"changed by editor" in response.content

    def test_a_cleared_cosine_floor_is_explained_until_the_policy_is_saved_again(
        self, profile, editor, client_for
    ):
        sentence = "The embedding floor 0.62 was a cosine; it was cleared."  # what 0014 wrote
        said = str(escape(sentence))
        AuditEntry.objects.create(
            profile=profile,
            action=CLEARED_ACTION,
            object_type="profile",
            object_repr=profile.slug,
            before={"floor": 0.62},
            after={"floor": None, NOTICE_KEY: sentence},
        )
        client = client_for(editor)

        assert said.encode() in client.get(url("policy", profile)).content
        history = client.get(url("audit", profile)).content.decode()
        assert (
            said in history
            and "cleared thresholds set in the old unit (cosine similarity) of" in history.lower()
        )
        assert "Notice" not in history  # the sentence is not shown as a changed field
        client.post(url("policy", profile), policy_form(floor="0.3"))
        assert said.encode() not in client.get(url("policy", profile)).content

    def test_the_lexicon_page_shows_the_built_in_defaults(self, profile, viewer, client_for):
        from routing_core import DEFAULT_ACTION_VERBS

        response = client_for(viewer).get(url("lexicons", profile))

        assert sorted(DEFAULT_ACTION_VERBS)[0].encode() in response.content

    def test_custom_lexicons_are_saved_and_empty_means_default(self, profile, editor, client_for):
        data = {
            "action_verbs": "refund cancel\nbook",
            "knowledge_verbs": "",
            "question_pattern": "",
            "revision": "1",
        }

        response = client_for(editor).post(url("lexicons", profile), data, **htmx())

        assert response.status_code == 200
        profile.refresh_from_db()
        assert profile.action_verbs == ["refund", "cancel", "book"]
        assert profile.knowledge_verbs is None
        assert profile.question_pattern == ""

    def test_a_lexicon_word_routing_core_refuses_is_shown_and_not_saved(
        self, profile, editor, client_for
    ):
        data = {
            "action_verbs": "refund Send-It",
            "knowledge_verbs": "",
            "question_pattern": "",
            "revision": "1",
        }

        response = client_for(editor).post(url("lexicons", profile), data)

        assert response.status_code == 422
        assert b"Send-It" in response.content
        assert Profile.objects.get(pk=profile.pk).action_verbs is None


def test_the_history_lists_edits(route, editor, client_for):
    client_for(editor).post(
        url("routes-edit", route.profile, route), route_post(route, description="x")
    )

    response = client_for(editor).get(url("audit", route.profile))

    html = response.content.decode()
    assert "Edited route" in html and "route.update" not in html
    assert "<strong>Description</strong>:" in html
    assert "{&#x27;" not in html  # no Python dict
    assert "editor" in html
