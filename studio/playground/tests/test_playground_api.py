"""POST /api/profiles/{slug}/route: the playground's decision for scripts, through the real URLs."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from studio.models import Profile, Route
from studio.shared import drafts
from studio.shared.edits import save_item
from studio.shared.tokens import create_api_token
from tests.routing_core.airline_profile import AIRLINE_ROUTES

URL = "/api/profiles/shop/route"


@pytest.fixture(autouse=True)
def _cold_cache() -> None:
    drafts.clear_cache()


def post(client: Any, body: dict[str, Any], url: str = URL, **headers: Any) -> Any:
    return client.post(url, body, content_type="application/json", **headers)


def test_it_returns_the_decision_event_and_the_why(profile, viewer, client_for):
    response = post(client_for(viewer), {"message": "refund my order"})

    assert response.status_code == 200
    body = response.json()
    event = body["decision"]
    top, second = event["ranked"][0]["score"], event["ranked"][1]["score"]
    assert body["why"].startswith(f"decisively matched billing: {top:.2f} vs {second:.2f} for")
    assert body["why"].endswith(
        f"{top - second:.2f} ahead, at least the 0.30 lead the near-tie margin 0.15 asks for"
    )
    assert event["schema"] == "route-decision/1"
    assert (event["route"], event["verdict"], event["by"]) == ("billing", "move", "scorer")
    assert [r["route"] for r in event["ranked"]] == ["billing", "shipping", "human"]
    assert event["tools"]["kept"] == ["hydrate_context", "refund_order"]
    assert event["triage"]["label"] == "action"
    assert body["menu_text"] is None


def test_it_agrees_with_the_page(profile, viewer, client_for):
    client = client_for(viewer)
    page = client.post("/profiles/shop/playground/", {"message": "charged for delivery"})
    api = post(client, {"message": "charged for delivery"}).json()

    assert api["decision"]["verdict"] == "menu"
    assert html.escape(api["why"][1:]) in page.content.decode()  # capitalised on the page
    assert api["menu_text"].startswith("The request could belong to several routes:")


def test_it_says_what_the_page_says_of_an_off_topic_message(viewer, client_for, db):
    """A first day's profile (five examples a route) leaves "tell me a joke" unmatched by its
    built-in off-topic messages; the API's notes are the page's sentences, word for word: why
    it was not scored, and the route that came nearest."""
    airline = Profile.objects.create(slug="first-day", name="First day")
    for order, route in enumerate(AIRLINE_ROUTES):
        Route.objects.create(
            profile=airline, name=route["name"], order=order, examples=list(route["examples"])[:5]
        )
    client = client_for(viewer)
    message = {"message": "tell me a joke"}
    api = post(client, message, url="/api/profiles/first-day/route").json()
    page = client.post("/profiles/first-day/playground/", message).content.decode()

    assert api["decision"]["verdict"] == "unmatched"
    shown = [_shown(page, name) for name in ("verdict-unscored", "verdict-nearest")]
    assert api["notes"] == shown
    assert shown[1].startswith("Of your routes, ")


def _shown(page: str, testid: str) -> str:
    found = re.search(rf'data-testid="{testid}"[^>]*>([^<]*)<', page)
    assert found is not None, testid
    return html.unescape(found.group(1))


def test_a_message_a_route_took_has_no_notes(profile, viewer, client_for):
    assert post(client_for(viewer), {"message": "refund my order"}).json()["notes"] == []


def test_an_incumbent_holds_a_near_tie(profile, viewer, client_for):
    body = post(
        client_for(viewer), {"message": "charged for delivery", "incumbent": "shipping"}
    ).json()

    assert (body["decision"]["route"], body["decision"]["verdict"]) == ("shipping", "stay")
    assert body["decision"]["from_route"] == "shipping"


def test_an_unknown_incumbent_is_dropped_and_recorded(profile, viewer, client_for):
    body = post(client_for(viewer), {"message": "refund my order", "incumbent": "nope"}).json()

    assert body["decision"]["from_route"] is None
    assert body["decision"]["dropped_incumbent"] == "nope"


def test_policy_overrides_apply_to_this_call_only(profile, viewer, client_for):
    client = client_for(viewer)
    wide = post(client, {"message": "refund my order", "policy": {"near_tie_margin": 0.9}})
    again = post(client, {"message": "refund my order"})

    assert wide.json()["decision"]["verdict"] == "menu"
    assert wide.json()["decision"]["policy"]["near_tie_margin"] == 0.9
    assert again.json()["decision"]["verdict"] == "move"
    profile.refresh_from_db()
    assert profile.near_tie_margin == 0.15


def test_a_null_floor_means_the_scorers_own(profile, viewer, client_for):
    profile.floor = 0.95
    profile.save()
    body = post(client_for(viewer), {"message": "refund my order", "policy": {"floor": None}})

    assert body.json()["decision"]["verdict"] == "move"
    assert body.json()["decision"]["policy"]["effective_floor"] == 0.0


def test_an_out_of_range_override_is_refused_with_its_path(profile, viewer, client_for):
    response = post(client_for(viewer), {"message": "hi", "policy": {"near_tie_margin": 5}})

    assert response.status_code == 422
    assert response.json()["errors"][0]["path"] == "policy.near_tie_margin"


def test_an_unknown_field_is_refused(profile, viewer, client_for):
    response = post(client_for(viewer), {"message": "hi", "colour": "blue"})

    assert response.status_code == 422


def test_an_invalid_draft_is_a_422_with_routing_cores_reasons(viewer, client_for, db):
    Profile.objects.create(slug="empty", name="Empty")

    response = post(client_for(viewer), {"message": "hi"}, url="/api/profiles/empty/route")

    assert response.status_code == 422
    assert response.json()["detail"] == "invalid pack"
    assert response.json()["errors"]


def test_a_script_routes_with_a_bearer_token(profile, viewer, client):
    _, secret = create_api_token(viewer, "script")

    response = post(client, {"message": "refund my order"}, HTTP_AUTHORIZATION=f"Bearer {secret}")

    assert response.status_code == 200


def test_it_needs_a_signed_in_user_with_a_role(profile, outsider, client, client_for):
    assert post(client, {"message": "hi"}).status_code == 401
    assert post(client_for(outsider), {"message": "hi"}).status_code == 403


def test_an_unknown_profile_is_a_404(viewer, client_for, db):
    response = post(client_for(viewer), {"message": "hi"}, url="/api/profiles/nope/route")

    assert response.status_code == 404


def test_an_edit_is_seen_by_the_next_call(profile, viewer, editor, client_for, route):
    client = client_for(viewer)
    before = post(client, {"message": "parcel fees"}).json()["decision"]["pack"]["version"]
    route.examples = [*route.examples, "parcel fees"]
    save_item(route, user=editor)
    after = post(client, {"message": "parcel fees"}).json()["decision"]

    assert after["pack"]["version"] > before
    assert after["route"] == "billing"
