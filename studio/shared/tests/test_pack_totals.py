"""A profile at a per-pack total (docs/pack-format.md, Limits) refuses one text more: the API with
a 422 in its error shape naming the limit, the route form in plain words keeping what was typed,
and nothing is saved. The totals are routing_core's (`routing_core.limits`): the studio reads
them, it does not restate them."""

from __future__ import annotations

from html import unescape
from typing import Any

from django.test import Client
from django.urls import reverse

from routing_core.limits import MAX_ITEMS, MAX_PACK_TEXTS, pack_totals
from studio.models import Profile, Route
from studio.shared.packs import build_pack_dict
from studio.shared.tests.test_views import route_post
from studio.shared.tokens import create_api_token


def _fill_to_the_text_total(profile: Profile, beyond: int = 0) -> None:
    """Routes of filler examples that bring the profile to MAX_PACK_TEXTS texts (+ `beyond`)."""
    texts, _, _ = pack_totals(build_pack_dict(profile))
    missing = MAX_PACK_TEXTS + beyond - texts
    routes = []
    for i in range(-(-missing // MAX_ITEMS)):
        n = min(MAX_ITEMS, missing - i * MAX_ITEMS)
        examples = [f"filler {i} {j}" for j in range(n)]
        routes.append(Route(profile=profile, name=f"filler_{i}", order=10 + i, examples=examples))
    Route.objects.bulk_create(routes)


def _api(user: Any) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {create_api_token(user, 'totals')[1]}")


def test_the_api_refuses_one_text_past_the_pack_total_with_a_422_naming_it(profile, owner):
    _fill_to_the_text_total(profile)
    route = profile.routes.get(name="billing")

    response = _api(owner).patch(
        f"/api/profiles/{profile.slug}/routes/{route.pk}",
        {"revision": route.revision, "examples": [*route.examples, "one more"]},
        content_type="application/json",
    )

    assert response.status_code == 422
    [error] = response.json()["errors"]
    assert f"at most {MAX_PACK_TEXTS:,}" in error["message"]
    assert f"{MAX_PACK_TEXTS + 1:,} texts" in error["message"]
    assert "one more" not in Route.objects.get(pk=route.pk).examples


def test_the_api_accepts_a_profile_at_the_pack_total(profile, owner):
    _fill_to_the_text_total(profile)
    route = profile.routes.get(name="billing")

    response = _api(owner).patch(
        f"/api/profiles/{profile.slug}/routes/{route.pk}",
        {"revision": route.revision, "description": "still within the limits"},
        content_type="application/json",
    )

    assert response.status_code == 200


def test_the_route_form_refuses_one_text_past_the_total_in_words_and_keeps_the_typing(
    profile, editor, client_for
):
    _fill_to_the_text_total(profile)
    route = profile.routes.get(name="billing")
    typed = "\n".join([*route.examples, "my typed example"])

    response = client_for(editor).post(
        reverse("routes-edit", args=[profile.slug, route.pk]),
        route_post(route, examples=typed, description="typed description"),
    )

    html = unescape(response.content.decode())
    assert response.status_code == 422
    # Said of the route edited (the first), not of where the whole pack's count crossed it.
    assert f"route 1: the pack would hold {MAX_PACK_TEXTS + 1:,} texts in all" in html
    assert "my typed example" in html and "typed description" in html
    assert "my typed example" not in Route.objects.get(pk=route.pk).examples


def test_a_profile_saved_past_the_total_before_it_existed_can_shrink_but_not_grow(profile, owner):
    _fill_to_the_text_total(profile, beyond=10)  # as a profile saved before the totals were
    route = profile.routes.get(name="billing")
    api = _api(owner)
    url = f"/api/profiles/{profile.slug}/routes/{route.pk}"

    grown = api.patch(
        url,
        {"revision": route.revision, "examples": [*route.examples, "one more"]},
        content_type="application/json",
    )
    shrunk = api.patch(
        url,
        {"revision": route.revision, "examples": route.examples[:1]},
        content_type="application/json",
    )

    assert grown.status_code == 422
    assert shrunk.status_code == 200
    assert Route.objects.get(pk=route.pk).examples == route.examples[:1]
