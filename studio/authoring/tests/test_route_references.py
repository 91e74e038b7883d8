"""Before a route goes: what refers to it; after: its cases' old passes are not shown as passes;
and the pack badge counts lint errors, not only load errors."""

from __future__ import annotations

from django.urls import reverse

from studio.models import Profile, Route, Rule, TestCase
from studio.shared.edits import delete_item, save_item
from studio.suites.runs import start_run
from tests.studio.fixtures import htmx


def test_deleting_a_route_first_names_the_cases_and_rules_that_refer_to_it(
    profile, editor, client_for
):
    TestCase.objects.create(profile=profile, message="I want a person", expected_route="human")
    TestCase.objects.create(profile=profile, message="and now?", incumbent="human")
    human = profile.routes.get(name="human")
    url = reverse("routes-delete", args=[profile.slug, human.pk])

    for headers in ({}, htmx()):
        html = client_for(editor).get(url, **headers).content.decode()
        refs = html[html.index('data-testid="delete-references"') :]
        assert "“I want a person” expects it" in refs
        assert "“and now?” starts in it" in refs
        assert "rule 1: keywords → human" in refs


def test_a_route_nothing_refers_to_is_deleted_without_a_list(profile, editor, client_for):
    route = Route.objects.create(profile=profile, name="faq", examples=["what"], order=5)

    html = (
        client_for(editor)
        .get(reverse("routes-delete", args=[profile.slug, route.pk]), **htmx())
        .content.decode()
    )

    assert "Delete faq?" in html and "delete-references" not in html


def test_an_old_pass_of_a_case_whose_route_was_deleted_is_not_shown_as_a_pass(
    profile, editor, client_for
):
    TestCase.objects.create(
        profile=profile, message="let me talk to someone", expected_route="human"
    )
    run = start_run(profile, user=editor)
    assert run.passed == 1
    Rule.objects.filter(profile=profile).delete()
    delete_item(profile.routes.get(name="human"), user=editor)

    html = client_for(editor).get(reverse("tests", args=[profile.slug])).content.decode()

    assert 'data-testid="stale-result"' in html and "route deleted — run again" in html
    assert '<span class="pf pass">pass</span>' not in html


def _badge(client, profile: Profile) -> str:  # type: ignore[no-untyped-def]
    html = client.get(reverse("profile-detail", args=[profile.slug])).content.decode()
    return html[html.index('id="pack-badge"') : html.index("</div>", html.index('id="pack-badge"'))]


def test_the_pack_badge_counts_lint_errors(profile, editor, client_for):
    client = client_for(editor)
    assert "valid pack" in _badge(client, profile)

    shipping = profile.routes.get(name="shipping")
    shipping.examples = [*shipping.examples, "download my invoice"]  # also a billing example
    save_item(shipping, user=editor)
    profile.refresh_from_db()

    badge = _badge(client, profile)
    assert "lint error" in badge and "valid pack" not in badge
    assert reverse("lint", args=[profile.slug]) in badge
