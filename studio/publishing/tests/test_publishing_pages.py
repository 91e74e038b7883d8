"""The publishing pages: versions, publish with the diff against production, diff, tokens, import."""

from __future__ import annotations

import hashlib
import json
import re
from html import unescape

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from studio.authoring.demo import load_demo_profile
from studio.importing.packs import import_pack
from studio.models import ApiToken, Environment, Profile, ReadToken, Route, Version
from studio.publishing.versions import promote, publish
from studio.shared.packs import build_pack_dict


def test_the_versions_page_lists_versions_and_environments(profile, owner, client_for):
    publish(profile, user=owner, note="first <b>cut</b>")
    page = client_for(owner).get("/profiles/shop/versions/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "v1" in html and "first &lt;b&gt;cut&lt;/b&gt;" in html
    assert "Promote to production" in html


def test_a_viewer_sees_versions_but_no_publish_button(profile, owner, viewer, client_for):
    publish(profile, user=owner)
    html = client_for(viewer).get("/profiles/shop/versions/").content.decode()
    assert "Publish the draft" not in html and "Promote to" not in html


def test_an_editor_cannot_open_or_post_the_publish_page(profile, editor, client_for):
    client = client_for(editor)
    assert client.get("/profiles/shop/publish/").status_code == 403
    assert client.post("/profiles/shop/publish/", {"note": "x"}).status_code == 403
    assert not Version.objects.exists()


def test_the_publish_page_shows_the_diff_against_production_escaped(profile, owner, client_for):
    promote(publish(profile, user=owner), "production", user=owner)
    profile.routes.filter(name="billing").update(description="<script>alert(1)</script>")
    html = client_for(owner).get("/profiles/shop/publish/").content.decode()
    assert "against production" in html and "(version 1)" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert(1)" not in html


def test_confirming_publishes_and_puts_the_version_on_the_chosen_environment(
    profile, owner, client_for
):
    response = client_for(owner).post(
        "/profiles/shop/publish/",
        {"note": "ok", "environment": "production", "draft_revision": profile.draft_revision},
    )
    assert response.status_code == 302
    assert Environment.objects.get(profile=profile, name="production").version.number == 1


def test_confirming_a_draft_that_changed_since_the_review_is_refused(profile, owner, client_for):
    response = client_for(owner).post(
        "/profiles/shop/publish/", {"draft_revision": profile.draft_revision + 5}
    )
    assert response.status_code == 422
    assert "changed since you reviewed it" in response.content.decode()
    assert not Version.objects.exists()


def test_rolling_back_production_asks_first_naming_the_version_and_what_changes(
    profile, owner, client_for
):
    v1 = publish(profile, user=owner, note="first")
    Route.objects.filter(profile=profile, name="billing").update(description="money matters")
    promote(publish(profile, user=owner, note="second"), "production", user=owner)
    env = Environment.objects.get(profile=profile, name="production")
    client = client_for(owner)
    data = {"version": 1, "environment": "production", "revision": env.revision}

    unconfirmed = client.post("/profiles/shop/promote/", data)
    page = client.get(unconfirmed["Location"]).content.decode()
    env.refresh_from_db()
    assert unconfirmed.status_code == 302 and env.version.number == 2
    assert "Roll back production to version 1?" in page
    assert "serves <strong>version 2</strong> now" in page and "money matters" in page

    client.post("/profiles/shop/promote/", {**data, "confirm": "yes"})
    env.refresh_from_db()
    assert env.version == v1


def test_a_version_downloads_as_a_named_json_file(profile, owner, client_for):
    publish(profile, user=owner)
    response = client_for(owner).get("/profiles/shop/versions/1/download/")
    assert response["Content-Disposition"] == 'attachment; filename="shop-v1.json"'


def test_the_diff_page_compares_a_version_with_the_draft(profile, owner, client_for):
    publish(profile, user=owner)
    profile.routes.filter(name="shipping").update(examples=["parcel <lost>"])
    html = client_for(owner).get("/profiles/shop/diff/?old=1&new=draft").content.decode()
    assert "+ parcel &lt;lost&gt;" in html
    assert "Verdict flips" in html


def test_a_read_token_is_shown_once_and_stored_only_as_its_hash(profile, owner, client_for):
    client = client_for(owner)
    page = client.post(
        "/profiles/shop/tokens/", {"action": "create-read", "name": "agent"}, follow=True
    )
    assert page.redirect_chain == [("/profiles/shop/tokens/", 302)]  # post/redirect/get
    secret = page.context["secret"]
    assert secret.startswith("rsp_") and secret in page.content.decode()
    token = ReadToken.objects.get()
    assert token.digest == hashlib.sha256(secret.encode()).hexdigest()
    reloaded = client.get("/profiles/shop/tokens/")  # a reload: no second token, no secret
    assert secret not in reloaded.content.decode() and ReadToken.objects.count() == 1


@pytest.mark.parametrize("action", ["create-read", "create-events", "create-api"])
def test_a_token_name_with_a_nul_is_refused_in_words(action, profile, owner, client_for):
    page = client_for(owner).post(
        "/profiles/shop/tokens/", {"action": action, "name": "agent\x00one"}, follow=True
    )
    assert page.status_code == 200
    assert "NUL character" in page.content.decode()
    assert not ReadToken.objects.exists() and not ApiToken.objects.exists()


def test_a_publish_reason_with_a_nul_is_refused_in_words(profile, owner, client_for):
    response = client_for(owner).post(
        "/profiles/shop/publish/", {"reason": "known\x00issue", "environment": "staging"}
    )
    assert response.status_code == 422
    assert "contains a NUL character" in response.content.decode()
    assert not profile.versions.exists()


def test_an_editor_cannot_create_read_tokens(profile, editor, client_for):
    response = client_for(editor).post("/profiles/shop/tokens/", {"action": "create-read"})
    assert response.status_code == 403


def test_revoking_a_read_token_keeps_it_listed_as_revoked(profile, owner, client_for):
    client = client_for(owner)
    client.post("/profiles/shop/tokens/", {"action": "create-read", "name": "agent"})
    token = ReadToken.objects.get()
    client.post("/profiles/shop/tokens/", {"action": "revoke-read", "token": token.pk})
    token.refresh_from_db()
    assert token.revoked_at is not None


def _upload(document: dict | bytes, name: str = "pack.json") -> SimpleUploadedFile:
    data = document if isinstance(document, bytes) else json.dumps(document).encode()
    return SimpleUploadedFile(name, data, content_type="application/json")


def test_importing_a_pack_file_creates_a_profile(profile, editor, client_for):
    document = build_pack_dict(profile)
    response = client_for(editor).post(
        "/profiles/import/", {"file": _upload(document), "slug": "shop-two"}
    )
    assert response.status_code == 302
    assert Profile.objects.get(slug="shop-two").routes.count() == 3


def test_a_bad_pack_file_is_refused_with_every_path_and_reason(db, editor, client_for):
    bad = {"profile": {"slug": "x", "name": "X"}, "routes": [{"name": "A B"}], "default_route": "z"}
    response = client_for(editor).post("/profiles/import/", {"file": _upload(bad)})
    assert response.status_code == 422
    html = response.content.decode()
    assert "Nothing was imported" in html and "route 1 → name" in html  # the place in words
    assert not Profile.objects.filter(slug="x").exists()


def test_a_refused_import_keeps_the_slug_typed(db, editor, client_for):
    bad = {"profile": {"slug": "x", "name": "X"}, "routes": [{"name": "A B"}]}

    response = client_for(editor).post(
        "/profiles/import/", {"file": _upload(bad), "slug": "spring-copy"}
    )

    assert response.status_code == 422
    assert 'value="spring-copy"' in response.content.decode()


def test_an_oversized_upload_is_refused_with_a_clear_message(db, editor, client_for, monkeypatch):
    import studio.publishing.views as pages

    monkeypatch.setattr("studio.importing.packs.MAX_IMPORT_BYTES", 100)
    monkeypatch.setattr(pages, "MAX_IMPORT_BYTES", 100)
    response = client_for(editor).post(
        "/profiles/import/", {"file": _upload(b"{" + b" " * 500 + b"}")}
    )
    assert response.status_code == 422
    assert "import limit" in response.content.decode()


def test_importing_as_a_new_draft_replaces_the_routes(profile, editor, client_for):
    document = build_pack_dict(profile)
    document["routes"] = document["routes"][:2] + [{"name": "human", "description": "a person"}]
    response = client_for(editor).post("/profiles/shop/import/", {"file": _upload(document)})
    assert response.status_code == 302
    assert profile.routes.get(name="human").description == "a person"


def _imported_with_scorer(scorer: dict, owner) -> Profile:
    document = build_pack_dict(load_demo_profile())
    document = {**document, "profile": {**document["profile"], "slug": "tiered"}, "scorer": scorer}
    return import_pack(document, user=owner)


def test_the_policy_page_shows_imported_scorer_settings_read_only(db, owner, viewer, client_for):
    tiers = [{"kind": "lexical"}, {"kind": "llm", "base_url": "http://x.test/v1", "model": "m"}]
    _imported_with_scorer({"kind": "cascade", "tiers": tiers}, owner)

    html = client_for(viewer).get("/profiles/tiered/policy/").content.decode()

    assert "Scorer settings: cascade" in html and "read-only" in html
    shown = re.search(r'data-testid="scorer-settings"[^>]*>(.*?)</pre>', html, re.S)
    assert shown and json.loads(unescape(shown.group(1)))["tiers"][1]["model"] == "m"


def test_the_policy_page_of_a_plain_lexical_profile_shows_no_scorer_settings(
    profile, viewer, client_for
):
    html = client_for(viewer).get("/profiles/shop/policy/").content.decode()
    assert 'data-testid="scorer-settings"' not in html
    assert "NOT_PROVIDED" not in html  # the floor has no built-in default: "none"


def test_the_playground_explains_a_scorer_this_studio_cannot_run(db, owner, client_for):
    _imported_with_scorer({"kind": "embedding"}, owner)

    page = client_for(owner).get("/profiles/tiered/playground/", {"message": "refund please"})

    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-testid="scorer-unavailable"' in html and "cannot run its embedding scorer" in html
    assert "routing-core[embeddings]" in html and "not a valid pack" not in html
