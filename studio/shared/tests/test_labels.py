"""Every message a person sees names things as they see them: pack paths, pydantic messages and
audit actions in words, on lint, overlap, the badge, forms and the history."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from studio.models import OverlapCheck
from studio.publishing.versions import promote, publish
from studio.shared.labels import action_label, changes, place, plain_message, plain_problem
from studio.shared.tokens import create_read_token, revoke
from studio.suites.tests.test_authoring import messy  # noqa: F401  (a fixture)

PACK = {
    "routes": [
        {"name": "billing", "examples": ["why was I charged twice this month for one order"]},
        {"name": "shipping", "examples": ["where is my parcel"], "keywords": ["parcel"]},
    ],
    "rules": [{"route": "shipping", "match": {"all": [{"regex": "x"}, {"keywords": ["y"]}]}}],
}


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("routes[0].examples[0]", "billing → example 1 ‘why was I charged twice this month for…’"),
        ("routes[1].keywords[0]", "shipping → keyword 1 ‘parcel’"),
        ("routes[1].name", "shipping → name"),
        ("routes[5].examples[2]", "route 6 → example 3"),
        ("rules[0].match.all[1].regex", "rule 1 (to shipping) → match → condition 2 → pattern"),
        ("policy.near_tie_margin", "policy → near-tie margin"),
        ("default_route", "default route"),
        ("$", "the pack"),
    ],
)
def test_a_pack_path_reads_as_the_place_a_person_knows(path, words):
    assert place(path, PACK) == words


@pytest.mark.parametrize(
    ("path", "message", "words"),
    [
        ("routes", "List should have at least 1 item after validation, not 0", "add at least one route"),
        ("routes[0].examples", "List should have at least 1 item after validation, not 0", "add at least one example"),
        ("policy.menu_size", "Input should be greater than or equal to 1", "must be 1 or more"),
        ("policy.floor", "Input should be less than or equal to 1", "must be 1 or less"),
        ("routes[0].action.agent", "Field required", "is required"),
        ("default_route", "no route named 'q'", "no route named 'q'"),  # already plain
    ],
)  # fmt: skip
def test_a_pydantic_message_reads_in_plain_words(path, message, words):
    assert plain_message(message, path) == words


@given(st.text(max_size=60), st.text(max_size=200))
def test_any_path_and_message_give_one_line_and_never_raise(path, message):
    line = plain_problem(path, message, PACK)

    assert isinstance(line, str) and line


@pytest.mark.parametrize(
    ("action", "words"),
    [
        ("route.update", "edited route"),
        ("rule.create", "added rule"),
        ("testcase.delete", "deleted test case"),
        ("environment.promote", "promoted"),
        ("environment.rollback", "rolled back"),
        ("version.publish", "published"),
        ("token.revoke", "revoked read token"),
    ],
)
def test_an_audit_action_reads_as_a_verb_and_a_noun(action, words):
    assert action_label(action) == words


def test_a_list_change_says_what_was_added_and_removed():
    (change,) = changes(
        {"examples": ["a", "b"], "revision": 1}, {"examples": ["b", "c"], "revision": 2}
    )

    assert (change.field, change.added, change.removed) == ("examples", ("c",), ("a",))


def test_a_new_profiles_badge_asks_for_a_route_in_plain_words(editor, client_for):
    client = client_for(editor)
    client.post(reverse("profile-list"), {"slug": "fresh", "name": "Fresh"})

    html = client.get(reverse("profile-detail", args=["fresh"])).content.decode()

    assert "<strong>routes</strong>: add at least one route" in html
    assert "List should have" not in html and "after validation" not in html


def test_lint_names_an_example_by_its_route_number_and_text(messy, viewer, client_for):  # noqa: F811
    html = client_for(viewer).get(reverse("lint", args=[messy.slug])).content.decode()

    assert "billing → example 1 ‘card charged twice’" in html
    assert not re.search(r"routes\[\d+\]", html)


def test_overlap_counts_landing_elsewhere_apart_from_near_ties(messy, viewer, client_for):  # noqa: F811
    client = client_for(viewer)
    page = client.post(reverse("overlap-start", args=[messy.slug]))["Location"]
    check = OverlapCheck.objects.get()
    outcomes = [f["outcome"] for f in check.findings]

    html = client.get(page).content.decode()

    headline = re.search(r'data-testid="overlap-headline">(.*?)<span', html, re.S)
    assert headline is not None
    elsewhere, ties = outcomes.count("elsewhere"), outcomes.count("near-tie")
    assert f"{elsewhere} example" in headline.group(1) and f"{ties} near-tie" in headline.group(1)
    assert not re.search(r"routes\[\d+\]", html)


def test_the_history_names_a_promotion_with_its_versions(profile, owner, client_for):
    first = publish(profile, user=owner, note="one")
    second = publish(profile, user=owner, note="two")
    promote(first, "production", user=owner)
    promote(second, "production", user=owner)

    html = client_for(owner).get(reverse("audit", args=[profile.slug])).content.decode()

    assert "Promoted" in html and "production (v1 → v2)" in html
    assert "environment.promote" not in html and f"{profile.pk}/production" not in html


def test_a_form_error_outside_the_form_names_its_place(profile):
    from studio.authoring.forms import ProfileCreateForm

    form = ProfileCreateForm(data={"slug": "x", "name": "X"})
    form.is_valid()
    form.add_pack_errors(
        [("routes", "List should have at least 1 item after validation, not 0")], "profile"
    )

    assert form.non_field_errors() == ["routes: add at least one route"]


def test_the_history_calls_an_event_token_an_event_token(profile, owner, client_for):
    events, _ = create_read_token(profile, "reporter", user=owner, scope="events")
    create_read_token(profile, "puller", user=owner)
    revoke(events, user=owner)

    html = client_for(owner).get(reverse("audit", args=[profile.slug])).content.decode()

    assert html.count("Added event token") == 1 and html.count("Revoked event token") == 1
    assert html.count("Added read token") == 1 and "Revoked read token" not in html
