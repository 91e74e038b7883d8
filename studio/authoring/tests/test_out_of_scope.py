"""A profile's out-of-scope examples and the fitted floor, as the policy page shows and edits them."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from routing_core import BACKGROUND_MIN_EXAMPLES, dump_pack
from routing_core.scorers.lexical import FITS_THRESHOLDS_FROM
from studio.importing.packs import import_pack
from studio.models import Profile, Route
from studio.shared import drafts
from studio.shared.drafts import compiled_router
from studio.shared.packs import release_pack
from tests.routing_core.airline_profile import AIRLINE_ROUTES
from tests.routing_core.conftest import TEMPLATES, TOPICS
from tests.studio.fixtures import htmx, policy_form

OUT_OF_SCOPE = ["tell me a joke about cats", "what is the capital of france"]


@pytest.fixture
def large(db: Any) -> Profile:
    """A profile with enough examples (220 texts) for the scorer to calibrate and fit a floor."""
    p = Profile.objects.create(slug="large", name="Large")
    for order, (name, words) in enumerate(TOPICS.items()):
        examples = [t.format(w) for t in TEMPLATES for w in words]
        Route.objects.create(profile=p, name=name, order=order, examples=examples)
    return p


def test_an_editor_saves_out_of_scope_examples_and_the_scorer_learns_them(
    large: Profile, editor: Any, client_for: Any
) -> None:
    text = "\n".join(OUT_OF_SCOPE) + "\n\n"
    response = client_for(editor).post(
        reverse("policy", args=[large.slug]), policy_form(out_of_scope=text)
    )
    assert response.status_code == 302
    large.refresh_from_db()
    assert large.out_of_scope == OUT_OF_SCOPE
    assert release_pack(large).out_of_scope == tuple(OUT_OF_SCOPE)
    details = compiled_router(large).scorer.info.details
    assert details["out_of_scope_examples"] is True
    page = client_for(editor).get(reverse("policy", args=[large.slug]))
    assert "tell me a joke about cats\nwhat is the capital of france" in page.content.decode()


def test_a_viewer_cannot_save_out_of_scope_examples(
    large: Profile, viewer: Any, client_for: Any
) -> None:
    response = client_for(viewer).post(
        reverse("policy", args=[large.slug]), policy_form(out_of_scope="hello")
    )
    assert response.status_code == 403
    large.refresh_from_db()
    assert large.out_of_scope == []


def test_the_policy_page_shows_the_floor_fitted_on_the_examples(
    large: Profile, viewer: Any, client_for: Any
) -> None:
    fitted = compiled_router(large).scorer.info.floor
    assert fitted is not None and fitted > 0
    page = client_for(viewer).get(reverse("policy", args=[large.slug])).content.decode()
    assert f"Effective floor now: {fitted:.2f}, fitted on this profile's examples" in page
    assert "Type a floor to override it." in page
    texts = sum(1 + len(r.examples) for r in large.routes.all())  # each name is a text
    assert f'<span data-testid="fitted-on">when it had {texts} route texts</span>' in page


def test_a_small_profile_says_its_scorer_has_no_fitted_floor_yet(
    profile: Profile, viewer: Any, client_for: Any
) -> None:
    page = client_for(viewer).get(reverse("policy", args=[profile.slug])).content.decode()
    assert "Effective floor now: the scorer's own (0.00)" in page
    assert f"once the profile has {FITS_THRESHOLDS_FROM} route texts" in page
    assert "Near-tie margin that fits" not in page  # nothing fitted in a small profile


def test_the_policy_page_answers_while_the_drafts_model_is_learning(
    large: Profile, viewer: Any, client_for: Any, settings: Any
) -> None:
    """After an edit or an import the model trains on a worker: the page must not wait or fail."""
    from studio.models import Route
    from tests.job_worker import DATABASE

    settings.TASKS = DATABASE  # no worker runs here: the new draft's model stays queued
    route = Route.objects.filter(profile=large).first()
    assert route is not None
    route.examples = [*route.examples, "one more example to learn"]
    route.save()
    Profile.objects.filter(pk=large.pk).update(draft_revision=large.draft_revision + 1)

    response = client_for(viewer).get(reverse("policy", args=[large.slug]))

    assert response.status_code == 200
    assert "once the draft's model has finished learning" in response.content.decode()


def test_a_floor_set_by_a_person_overrides_the_fitted_one(
    large: Profile, editor: Any, client_for: Any
) -> None:
    response = client_for(editor).post(
        reverse("policy", args=[large.slug]), policy_form(floor="0.3"), **htmx()
    )
    assert response.status_code == 200
    assert "Effective floor now" not in response.content.decode()
    large.refresh_from_db()
    decision = compiled_router(large).route("the storm bill parcel")
    assert decision.floor == 0.3


def test_an_imported_pack_brings_its_out_of_scope_examples(large: Profile, owner: Any) -> None:
    large.out_of_scope = OUT_OF_SCOPE
    large.save()
    copy = import_pack(dump_pack(release_pack(large)), user=owner, slug="copy")
    assert Profile.objects.get(pk=copy.pk).out_of_scope == OUT_OF_SCOPE


def test_the_policy_page_suggests_the_margin_fitted_for_the_profiles_size(
    large: Profile, viewer: Any, client_for: Any
) -> None:
    large.near_tie_margin = 0.5  # far from anything fitted: the suggestion shows
    large.save()
    fitted = compiled_router(large).scorer.info.details["fitted_margin"]
    assert isinstance(fitted, float)
    page = client_for(viewer).get(reverse("policy", args=[large.slug])).content.decode()
    assert f"Near-tie margin that fits this profile's size: {fitted:.2f}" in page


def test_the_demo_profile_leaves_its_out_of_scope_case_unmatched_and_says_why(
    db: Any, viewer: Any, client_for: Any
) -> None:
    from studio.authoring.demo import load_demo_profile

    drafts.clear_cache()
    demo = load_demo_profile()
    assert demo.out_of_scope  # the demo ships out-of-scope examples
    cases = list(demo.test_cases.filter(expected_route=""))
    assert cases
    pages = [
        client_for(viewer)
        .post(reverse("playground", args=[demo.slug]), {"message": case.message}, **htmx())
        .content.decode()
        for case in cases
    ]
    assert all('data-testid="verdict-kind">unmatched<' in page for page in pages)
    reason = "Not scored: it reads like this profile&#x27;s out-of-scope examples."
    assert any(reason in page for page in pages)
    refund = client_for(viewer).post(
        reverse("playground", args=[demo.slug]), {"message": "I want a refund"}, **htmx()
    )
    assert 'data-testid="verdict-kind">unmatched<' not in refund.content.decode()


def test_a_script_sets_out_of_scope_examples_through_the_api(profile: Profile, owner: Any) -> None:
    from django.test import Client

    from studio.shared.tokens import create_api_token

    _, secret = create_api_token(owner, "ci")
    script = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    body = {"revision": 1, "out_of_scope": OUT_OF_SCOPE}
    response = script.patch("/api/profiles/shop", body, content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json()["out_of_scope"] == OUT_OF_SCOPE
    profile.refresh_from_db()
    assert profile.out_of_scope == OUT_OF_SCOPE
    assert script.get("/api/profiles/shop").json()["out_of_scope"] == OUT_OF_SCOPE


def test_a_version_diff_lists_the_out_of_scope_examples_added_and_removed(
    profile: Profile,
) -> None:
    from studio.publishing.diff import diff_packs
    from studio.shared.packs import build_pack

    profile.out_of_scope = ["tell me a joke about cats"]
    profile.save()
    old = build_pack(profile)
    profile.out_of_scope = ["what is the capital of france"]
    profile.save()
    [change] = [c for c in diff_packs(old, build_pack(profile)).changes if c.section == "policy"]
    assert (change.name, change.added, change.removed) == (
        "out_of_scope",
        ("what is the capital of france",),
        ("tell me a joke about cats",),
    )
    assert not [c for c in diff_packs(old, old).changes if c.name == "out_of_scope"]


def test_the_policy_page_says_when_routing_compares_meanings(
    large: Profile, db: Any, viewer: Any, client_for: Any
) -> None:
    from tests.routing_core.test_semantic import _routes

    meaning = Profile.objects.create(slug="meaning", name="Meaning")
    for order, route in enumerate(_routes()):
        Route.objects.create(
            profile=meaning, name=route["name"], order=order, examples=route["examples"]
        )
    pages = {
        p.slug: client_for(viewer).get(reverse("policy", args=[p.slug])).content.decode()
        for p in (meaning, large)
    }
    assert compiled_router(meaning).scorer.info.details["semantic_weight"] is not None
    assert 'data-testid="learns-meaning"' in pages["meaning"]
    assert "in other words" in pages["meaning"]
    # Templates filled with each route's own words: the words place every example.
    assert 'data-testid="learns-meaning"' not in pages["large"]


def test_a_profile_with_few_out_of_scope_examples_is_told_so_with_a_one_click_start(
    large: Profile, editor: Any, client_for: Any
) -> None:
    client = client_for(editor)
    for page in ("policy", "profile-detail"):
        html = client.get(reverse(page, args=[large.slug])).content.decode()
        assert 'data-testid="few-out-of-scope"' in html, page
        assert "This profile has 0 out-of-scope examples" in html
    response = client.post(reverse("out-of-scope-starter", args=[large.slug]))
    assert response.status_code == 302
    large.refresh_from_db()
    assert len(large.out_of_scope) == 12
    # Suggestions never speak for a route of the profile: TOPICS has a weather route.
    assert not any("weather" in text or "rain" in text for text in large.out_of_scope)
    html = client.get(reverse("policy", args=[large.slug])).content.decode()
    assert "Added 12 suggested out-of-scope examples" in html
    assert large.out_of_scope[0] in html


def test_a_profile_with_enough_out_of_scope_examples_is_not_told(
    large: Profile, editor: Any, client_for: Any
) -> None:
    Profile.objects.filter(pk=large.pk).update(out_of_scope=[f"unrelated {i}" for i in range(20)])
    html = client_for(editor).get(reverse("policy", args=[large.slug])).content.decode()
    assert 'data-testid="few-out-of-scope"' not in html


def test_the_lint_finding_links_to_where_out_of_scope_examples_are_edited(
    large: Profile, viewer: Any, client_for: Any
) -> None:
    html = client_for(viewer).get(reverse("lint", args=[large.slug])).content.decode()
    assert 'data-kind="few-out-of-scope"' in html
    assert reverse("policy", args=[large.slug]) in html


@pytest.fixture
def airline(db: Any) -> Profile:
    """A first-day profile (12 routes of 8 examples, no out-of-scope examples): it learns the
    built-in background unless told not to."""
    p = Profile.objects.create(slug="airline", name="Airline")
    for order, route in enumerate(AIRLINE_ROUTES):
        Route.objects.create(profile=p, name=route["name"], order=order, examples=route["examples"])
    return p


def test_an_editor_leaves_out_the_built_in_background_and_the_pack_says_so(
    airline: Profile, editor: Any, client_for: Any
) -> None:
    client = client_for(editor)
    assert compiled_router(airline).scorer.info.details["out_of_scope_examples"] is True
    off_topic = "tell me a joke"
    assert compiled_router(airline).route(off_topic).verdict == "unmatched"
    page = client.get(reverse("policy", args=[airline.slug])).content.decode()
    assert "Leave out the built-in off-topic examples" in page

    response = client.post(reverse("policy", args=[airline.slug]), policy_form(no_background="on"))

    assert response.status_code == 302
    airline.refresh_from_db()
    assert airline.no_background is True
    assert release_pack(airline).no_background is True
    router = compiled_router(airline)
    assert router.scorer.info.details["out_of_scope_examples"] is False  # nothing learned as such
    assert router.route(off_topic).verdict != "unmatched"  # nothing of the kind to tell it by
    html = client.get(reverse("policy", args=[airline.slug])).content.decode()
    assert "The built-in set of off-topic messages is left out" in html
    client.post(reverse("policy", args=[airline.slug]), policy_form(revision="2"))
    airline.refresh_from_db()
    assert airline.no_background is False  # unticked: learned again


def test_a_script_leaves_out_the_background_and_an_imported_pack_keeps_it_out(
    airline: Profile, owner: Any
) -> None:
    from django.test import Client

    from studio.shared.tokens import create_api_token

    script = Client(HTTP_AUTHORIZATION=f"Bearer {create_api_token(owner, 'ci')[1]}")
    body = {"revision": 1, "no_background": True}
    response = script.patch("/api/profiles/airline", body, content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json()["no_background"] is True
    airline.refresh_from_db()
    pack = release_pack(airline)
    assert pack.no_background is True and '"no_background":true' in dump_pack(pack)
    copy = import_pack(dump_pack(pack), user=owner, slug="airline-copy")
    assert copy.no_background is True


def test_routes_of_too_few_examples_are_told_the_background_is_not_learned_yet(
    profile: Profile, editor: Any, client_for: Any
) -> None:
    """The notice says what routing does: the shop's routes have 1-3 examples, under three on
    average, too few for the built-in background (routing_core.background_left_out), so no
    'routing also learns'; and it names the engine's own number."""
    html = client_for(editor).get(reverse("profile-detail", args=[profile.slug])).content.decode()

    assert 'data-testid="background-not-learned"' in html
    assert f"fewer than {BACKGROUND_MIN_EXAMPLES} examples on average" in html
    assert "routing also learns a built-in set" not in html
    Route.objects.filter(profile=profile).update(examples=[f"example {i}" for i in range(6)])
    html = client_for(editor).get(reverse("profile-detail", args=[profile.slug])).content.decode()
    assert "routing also learns a built-in set" in html
