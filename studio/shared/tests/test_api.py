"""The JSON API through the real URL stack: CRUD, roles, CSRF, tokens, conflicts, agent pulls."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from studio.models import Profile, Publication, TokenScope, Version
from studio.publishing.versions import promote, publish
from studio.shared.tokens import create_api_token, create_read_token, revoke

API = "/api/profiles"


def bearer(secret: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


@pytest.fixture
def script(owner):
    """A client that authenticates with the owner's API token, as a script does."""
    _, secret = create_api_token(owner, "ci")
    return Client(**bearer(secret))


def test_anonymous_requests_get_401_in_the_error_shape(db):
    response = Client().get(API)
    assert response.status_code == 401
    assert response.json() == {"detail": "authentication required", "errors": []}


def test_a_signed_in_user_without_a_role_gets_403(outsider, client_for):
    assert client_for(outsider).get(API).status_code == 403


def test_a_viewer_reads_but_cannot_edit(profile, viewer, client_for):
    client = client_for(viewer)
    assert client.get(f"{API}/shop/routes").status_code == 200
    response = client.post(f"{API}/shop/routes", {"name": "x"}, content_type="application/json")
    assert response.status_code == 403


def test_a_session_write_without_the_csrf_token_is_refused(profile, editor):
    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    response = client.post(f"{API}/shop/routes", {"name": "x"}, content_type="application/json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


@pytest.mark.parametrize("kind", ["revoked", "invalid", "pull", "events"])
def test_a_write_with_a_token_that_does_not_hold_is_a_401_that_names_the_token(
    kind, profile, owner
):
    # A script sends no session cookie: its token is judged, never the browser's CSRF check.
    api, api_secret = create_api_token(owner, "ci")
    revoke(api, user=owner)
    secret = {
        "revoked": api_secret,
        "invalid": "rsu_not-a-real-one",
        "pull": create_read_token(profile, "agent", user=owner)[1],
        "events": create_read_token(profile, "ev", user=owner, scope=TokenScope.EVENTS)[1],
    }[kind]
    client = Client(enforce_csrf_checks=True, **bearer(secret))
    response = client.post(f"{API}/shop/tools", {"name": "x"}, content_type="application/json")
    assert response.status_code == 401
    detail = response.json()["detail"]
    assert "CSRF" not in detail
    expected = {"pull": "only pulls packs", "events": "only sends decision events"}
    assert expected.get(kind, "invalid or was revoked") in detail


def test_an_anonymous_write_is_a_401_not_a_csrf_refusal(profile):
    response = Client(enforce_csrf_checks=True).post(
        f"{API}/shop/tools", {"name": "x"}, content_type="application/json"
    )
    assert response.status_code == 401
    assert response.json()["detail"] == "authentication required"


def test_a_session_write_with_the_csrf_token_is_accepted(profile, editor):
    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    client.get("/profiles/")  # sets the csrftoken cookie
    token = client.cookies["csrftoken"].value
    response = client.post(
        f"{API}/shop/tools",
        {"name": "lookup"},
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert response.status_code == 201


def test_a_script_creates_a_profile_and_its_first_route_with_a_token(db, script):
    created = script.post(API, {"slug": "bank", "name": "Bank"}, content_type="application/json")
    assert created.status_code == 201
    route = script.post(
        f"{API}/bank/routes",
        {"name": "cards", "description": "card questions", "examples": ["lost my card"]},
        content_type="application/json",
    )
    assert route.status_code == 201
    assert route.json()["examples"] == ["lost my card"]
    assert script.get(f"{API}/bank/routes").json()[0]["name"] == "cards"


def test_creating_a_profile_twice_is_a_conflict(profile, script):
    response = script.post(API, {"slug": "shop", "name": "Again"}, content_type="application/json")
    assert response.status_code == 409


def test_an_edit_that_breaks_the_pack_is_refused_with_paths(profile, script):
    rule_id = profile.rules.get().pk
    response = script.patch(
        f"{API}/shop/rules/{rule_id}",
        {"revision": 1, "route_name": "nowhere"},
        content_type="application/json",
    )
    assert response.status_code == 422
    assert response.json()["errors"][0]["path"].startswith("rules[0]")


def test_an_update_with_a_stale_revision_is_a_conflict(route, script):
    url = f"{API}/shop/routes/{route.pk}"
    first = script.patch(
        url, {"revision": 1, "description": "one"}, content_type="application/json"
    )
    assert first.status_code == 200 and first.json()["revision"] == 2
    second = script.patch(
        url, {"revision": 1, "description": "two"}, content_type="application/json"
    )
    assert second.status_code == 409
    assert "reload" in second.json()["detail"]


def test_profile_settings_are_edited_with_optimistic_locking(profile, script):
    ok = script.patch(
        f"{API}/shop", {"revision": 1, "menu_size": 4}, content_type="application/json"
    )
    assert ok.status_code == 200 and ok.json()["menu_size"] == 4
    stale = script.patch(
        f"{API}/shop", {"revision": 1, "menu_size": 5}, content_type="application/json"
    )
    assert stale.status_code == 409


def test_test_cases_are_created_edited_and_deleted(profile, script):
    created = script.post(
        f"{API}/shop/test-cases",
        {"message": "where is my parcel", "expected_route": "shipping"},
        content_type="application/json",
    ).json()
    url = f"{API}/shop/test-cases/{created['id']}"
    edited = script.patch(
        url, {"revision": 1, "expected_verdict": "move"}, content_type="application/json"
    )
    assert edited.json()["expected_verdict"] == "move"
    assert script.delete(url).status_code == 204
    assert script.get(url).status_code == 404


def test_a_profile_with_published_versions_cannot_be_deleted(profile, owner, script):
    publish(profile, user=owner)
    assert script.delete(f"{API}/shop").status_code == 409
    assert Profile.objects.filter(slug="shop").exists()


def test_a_profile_being_published_is_not_deleted_under_its_publish(profile, owner, script):
    Publication.objects.create(profile=profile, started_by=owner, status="queued")
    response = script.delete(f"{API}/shop")
    assert response.status_code == 409
    assert "is being published" in response.json()["detail"]
    assert Profile.objects.filter(slug="shop").exists()


@pytest.mark.django_db(transaction=True)
def test_a_publish_of_a_profile_deleted_meanwhile_is_a_409_not_a_500(profile, owner, monkeypatch):
    # The other request's DELETE commits between this publish's read of the profile and its
    # first write (the suite run it starts): that write's foreign key no longer holds.
    from studio.publishing import api as publishing_api

    real_gate = publishing_api.review_gate

    def deleted_first(profile, **kwargs):
        Profile.objects.filter(pk=profile.pk).delete()
        return real_gate(profile, **kwargs)

    monkeypatch.setattr(publishing_api, "review_gate", deleted_first)
    _, secret = create_api_token(owner, "ci")
    response = Client(**bearer(secret)).post(
        f"{API}/shop/versions", json.dumps({"reason": "go"}), content_type="application/json"
    )
    assert response.status_code in (404, 409), response.content[:300]
    assert response.json()["detail"]


def test_an_editor_cannot_publish_but_a_publisher_can(profile, editor, owner, client_for):
    body = {"note": "ship it"}
    refused = client_for(editor).post(f"{API}/shop/versions", body, content_type="application/json")
    assert refused.status_code == 403
    published = client_for(owner).post(
        f"{API}/shop/versions", body, content_type="application/json"
    )
    assert published.status_code == 201
    assert published.json()["number"] == 1


def test_publishing_an_invalid_draft_is_422_with_every_reason(profile, script):
    Profile.objects.filter(pk=profile.pk).update(default_route="nowhere")
    response = script.post(f"{API}/shop/versions", {}, content_type="application/json")
    assert response.status_code == 422
    assert any(e["path"] == "default_route" for e in response.json()["errors"])


def test_promote_and_roll_back_through_the_api(profile, owner, script):
    publish(profile, user=owner)
    publish(profile, user=owner)
    url = f"{API}/shop/environments/production"
    assert script.put(url, {"version": 2}, content_type="application/json").json()["version"] == 2
    rolled = script.put(url, {"version": 1}, content_type="application/json")
    assert rolled.json()["version"] == 1
    missing = script.put(url, {"version": 9}, content_type="application/json")
    assert missing.status_code == 404


def test_the_diff_endpoint_returns_changes_and_flips(profile, owner, script):
    publish(profile, user=owner)
    script.post(f"{API}/shop/routes", {"name": "returns"}, content_type="application/json")
    body = script.get(f"{API}/shop/diff", {"old": "1", "new": "draft"}).json()
    assert {"section": "routes", "name": "returns", "kind": "added"}.items() <= body["changes"][
        0
    ].items()


def test_a_version_downloads_as_slug_v_n_json(profile, owner, script):
    version = publish(profile, user=owner)
    response = script.get(f"{API}/shop/versions/1/pack")
    assert response["Content-Disposition"] == 'attachment; filename="shop-v1.json"'
    assert response.content.decode() == version.pack_json


def test_importing_a_bad_pack_through_the_api_lists_every_problem(db, script):
    bad = {"profile": {"slug": "x", "name": "X"}, "routes": [{"name": "A B"}], "default_route": "z"}
    response = script.post("/api/imports", bad, content_type="application/json")
    assert response.status_code == 422
    assert len(response.json()["errors"]) >= 2


# -- agents pulling packs ---------------------------------------------------------------------------


@pytest.fixture
def live_pack(profile, owner):
    """Production serves v1 of the shop; returns a read token's secret."""
    promote(publish(profile, user=owner), "production", user=owner)
    _, secret = create_read_token(profile, "agent", user=owner)
    return secret


def pull(secret: str | None, slug: str = "shop", env: str = "production", **headers: str):
    extra = bearer(secret) if secret else {}
    return Client().get(f"{API}/{slug}/packs/{env}", **extra, **headers)


def test_an_agent_pulls_the_production_pack_with_a_strong_etag(live_pack):
    response = pull(live_pack)
    version = Version.objects.get()
    assert response.status_code == 200
    assert response.content.decode() == version.pack_json
    assert response["ETag"] == f'"{version.checksum}"'


def test_the_same_etag_in_if_none_match_gets_a_304(live_pack):
    etag = pull(live_pack)["ETag"]
    again = pull(live_pack, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304
    assert again.content == b""


def test_a_read_token_records_when_it_was_last_used(live_pack):
    from studio.models import ReadToken

    pull(live_pack)
    assert ReadToken.objects.get().last_used_at is not None


@pytest.mark.parametrize("secret", [None, "rsp_wrong", "not-even-a-token"])
def test_a_missing_or_wrong_token_gets_401(live_pack, secret):
    assert pull(secret).status_code == 401


def test_a_revoked_token_gets_401(live_pack, owner):
    from studio.models import ReadToken

    revoke(ReadToken.objects.get(), user=owner)
    assert pull(live_pack).status_code == 401


def test_another_profiles_token_gets_the_same_404_as_a_missing_profile(live_pack, owner):
    other = Profile.objects.create(slug="other", name="Other")
    _, foreign = create_read_token(other, "agent", user=owner)
    hidden = pull(foreign)
    missing = pull(foreign, slug="does-not-exist")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json() == missing.json()


def test_a_read_token_cannot_use_the_rest_of_the_api(live_pack):
    assert Client(**bearer(live_pack)).get(f"{API}/shop").status_code == 401


def test_an_environment_with_nothing_promoted_is_404(live_pack):
    assert pull(live_pack, env="staging").status_code == 200  # publish put v1 on staging
    Profile.objects.create(slug="empty", name="Empty")
    assert pull(live_pack, slug="empty").status_code == 404


def test_the_openapi_schema_lists_the_pack_pull(db):
    schema = json.loads(Client().get("/api/openapi.json").content)
    assert "/api/profiles/{slug}/packs/{environment}" in schema["paths"]
