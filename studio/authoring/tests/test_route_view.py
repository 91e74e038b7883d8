"""A read-only page per route, for viewers: examples, keywords, rules and test cases, and
rules whose match reads in words, never as a Python repr."""

from __future__ import annotations

from django.urls import reverse

from studio.models import Rule, TestCase


def _page(profile, route) -> str:
    return reverse("route-view", args=[profile.slug, route.pk])


def test_a_viewer_sees_everything_about_a_route_on_one_page(profile, route, viewer, client_for):
    route.never = ["track my parcel"]
    route.save()
    Rule.objects.create(
        profile=profile, route_name="billing", match_kind="all", order=5,
        all_of=[{"keywords": ["invoice"]}, {"regex": r"\bcopy\b"}], examples=["invoice copy"],
    )  # fmt: skip
    TestCase.objects.create(profile=profile, message="send me my invoice", expected_route="billing")
    TestCase.objects.create(
        profile=profile, message="where is my parcel", expected_route="shipping"
    )

    html = client_for(viewer).get(_page(profile, route)).content.decode()

    for example in route.examples:
        assert f"<li>{example}</li>" in html
    assert '<span class="tag">invoice</span>' in html and "<li>track my parcel</li>" in html
    assert r"all of: any of ‘invoice’; the pattern \bcopy\b" in html
    assert "send me my invoice" in html and "where is my parcel</td>" not in html
    assert "Edit this route" not in html  # a viewer reads; the edit link is for editors


def test_an_editor_gets_a_link_to_edit_it_and_the_routes_table_links_here(
    profile, route, editor, client_for
):
    client = client_for(editor)

    assert "Edit this route" in client.get(_page(profile, route)).content.decode()
    routes = client.get(reverse("profile-detail", args=[profile.slug])).content.decode()
    assert f'href="{_page(profile, route)}"' in routes


def test_someone_without_a_role_cannot_read_a_route(profile, route, outsider, client_for):
    assert client_for(outsider).get(_page(profile, route)).status_code == 403


def test_a_route_of_another_profile_is_not_found(profile, route, viewer, client_for):
    assert client_for(viewer).get(f"/profiles/other/routes/{route.pk}/view/").status_code == 404


def test_the_rules_table_reads_an_all_of_rule_in_words(profile, viewer, client_for):
    Rule.objects.create(
        profile=profile, route_name="billing", match_kind="all", order=5,
        all_of=[{"keywords": ["invoice", "receipt"]}, {"regex": "copy"}],
    )  # fmt: skip

    html = client_for(viewer).get(reverse("rules", args=[profile.slug])).content.decode()

    assert "all of: any of ‘invoice’, ‘receipt’; the pattern copy" in html
    assert "[{&#x27;" not in html and "{'keywords'" not in html


def test_a_conversation_turn_is_named_as_the_test_cases_page_numbers_it(
    profile, route, viewer, client_for
):
    TestCase.objects.create(
        profile=profile,
        message="and my invoice?",
        expected_route="billing",
        conversation="conversation 1",
        turn=2,
    )

    html = client_for(viewer).get(_page(profile, route)).content.decode()

    assert 'data-testid="case-turn">conversation 1 · turn 2<' in html
    assert "conversation conversation" not in html
