"""No lost work: concurrent edits are refused, refused forms keep what was typed, publishing and
imports are all-or-nothing, and a deletion is confirmed, recorded with its content and restorable."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import IntegrityError
from django.test import Client
from django.urls import reverse

from studio.authoring.restore import restore
from studio.importing import packs
from studio.importing.packs import import_pack
from studio.models import AuditEntry, Environment, Profile, Route, Rule, TestCase, Version
from studio.publishing import versions as publishing
from studio.publishing.versions import publish
from studio.shared.edits import delete_item
from studio.shared.errors import Refused
from studio.shared.packs import build_pack_dict
from studio.shared.tokens import create_api_token
from studio.suites import case_import
from studio.suites.cases import delete_case

MINE = "typed-by-me"
POLICY = {
    "scorer_kind": "lexical", "near_tie_margin": "0.2", "menu_size": "3", "strictness": "assist",
    "triage_mode": "enforce", "ambiguity_confidence_floor": "0.55", "min_action_signals": "2",
}  # fmt: skip


def _forms(profile: Profile) -> dict[str, tuple[Any, str, dict[str, Any]]]:
    """Each editing form: the object it saves, its URL and a valid post that carries MINE."""
    route, rule = profile.routes.get(name="billing"), profile.rules.get()
    case = TestCase.objects.create(profile=profile, message="hi")
    slug = profile.slug
    return {
        "route row": (
            route,
            reverse("routes-edit", args=[slug, route.pk]),
            {"name": "billing", "description": MINE, "action_kind": "answer"},
        ),
        "rule row": (
            rule,
            reverse("rules-edit", args=[slug, rule.pk]),
            {"route_name": "human", "match_kind": "keywords", "keywords": MINE},
        ),
        "test case row": (
            case,
            reverse("tests-edit", args=[slug, case.pk]),
            {"message": MINE, "expected_route": "billing", "turn": "0"},
        ),
        "profile settings": (
            profile,
            reverse("profile-settings", args=[slug]),
            {"name": MINE, "description": ""},
        ),
        "policy": (profile, reverse("policy", args=[slug]), {**POLICY, "floor": "0.05"}),
        "lexicons": (
            profile,
            reverse("lexicons", args=[slug]),
            {"action_verbs": "", "knowledge_verbs": "", "question_pattern": MINE},
        ),
    }


@pytest.mark.parametrize(
    "form", ["route row", "rule row", "test case row", "profile settings", "policy", "lexicons"]
)
def test_a_page_refuses_a_save_over_someone_elses_and_keeps_the_typed_input(
    form, profile, editor, client_for
):
    obj, url, data = _forms(profile)[form]
    type(obj).objects.filter(pk=obj.pk).update(revision=2)  # someone else saved meanwhile

    response = client_for(editor).post(url, {**data, "revision": "1"})

    assert response.status_code == 409
    page = response.content.decode()
    assert "changed by" in page  # with their version beside mine on a table's row
    assert MINE in page or "0.05" in page
    assert type(obj).objects.get(pk=obj.pk).revision == 2


@pytest.mark.parametrize("kind", ["routes", "rules", "tools", "test-cases"])
def test_the_api_refuses_an_edit_over_someone_elses_with_a_409(kind, profile, editor):
    TestCase.objects.create(profile=profile, message="hi")
    listed = _api(editor).get(f"/api/profiles/{profile.slug}/{kind}").json()[0]
    url = f"/api/profiles/{profile.slug}/{kind}/{listed['id']}"
    first = _api(editor).patch(
        url, {"revision": listed["revision"]}, content_type="application/json"
    )

    second = _api(editor).patch(
        url, {"revision": listed["revision"]}, content_type="application/json"
    )

    assert (first.status_code, second.status_code) == (200, 409)
    assert "reload" in second.json()["detail"]


def test_the_api_refuses_a_stale_profile_edit_and_a_stale_environment_move(profile, owner):
    promote_url = f"/api/profiles/{profile.slug}/environments/staging"
    publish(profile, user=owner)
    api = _api(owner)

    stale_profile = api.patch(
        f"/api/profiles/{profile.slug}", {"revision": 7}, content_type="application/json"
    )
    stale_move = api.put(
        promote_url, {"version": 1, "revision": 99}, content_type="application/json"
    )

    assert (stale_profile.status_code, stale_move.status_code) == (409, 409)


def _api(user: Any) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {create_api_token(user, 'lost-work')[1]}")


# -- refused forms keep what was typed --------------------------------------------------------------


def _refused_posts(profile: Profile) -> dict[str, tuple[str, dict[str, Any]]]:
    slug, route = profile.slug, profile.routes.get(name="billing")
    return {
        "new profile": (reverse("profile-list"), {"slug": "Bad Slug!", "name": MINE}),
        "new route": (
            reverse("routes-add", args=[slug]),
            {"name": "Not A Name", "description": MINE},
        ),
        "route row": (
            reverse("routes-edit", args=[slug, route.pk]),
            {
                "name": "billing",
                "description": MINE,
                "action_kind": "delegate",
                "revision": "1",
                "stuck_message": "both set",
            },
        ),  # fmt: skip
        "new rule": (
            reverse("rules-add", args=[slug]),
            {"route_name": "billing", "match_kind": "regex", "regex": "(" + MINE},
        ),
        "new tool": (reverse("tools-add", args=[slug]), {"name": "no spaces " + MINE}),
        "profile settings": (
            reverse("profile-settings", args=[slug]),
            {"name": MINE, "default_route": "nowhere", "revision": "1"},
        ),
        "policy": (
            reverse("policy", args=[slug]),
            {**POLICY, "near_tie_margin": "7", "floor": "0.123", "revision": "1"},
        ),
        "lexicons": (
            reverse("lexicons", args=[slug]),
            {"action_verbs": "", "question_pattern": "(" + MINE, "revision": "1"},
        ),
        "new test case": (reverse("tests-add", args=[slug]), {"message": "", "conversation": MINE}),
        "test import": (
            reverse("tests-import", args=[slug]),
            {"text": f"text,expected\n{MINE},billing\n,\nbad,row,extra\n", "format": "csv"},
        ),
    }


@pytest.mark.parametrize(
    "form",
    [
        "new profile", "new route", "route row", "new rule", "new tool", "profile settings",
        "policy", "lexicons", "new test case", "test import",
    ],
)  # fmt: skip
def test_a_refused_form_keeps_everything_that_was_typed(form, profile, owner, client_for):
    url, data = _refused_posts(profile)[form]
    before = json.dumps(build_pack_dict(profile), sort_keys=True)

    response = client_for(owner).post(url, data)

    assert response.status_code == 422
    page = response.content.decode()
    assert MINE in page or "0.123" in page
    profile.refresh_from_db()
    assert json.dumps(build_pack_dict(profile), sort_keys=True) == before
    assert profile.test_cases.count() == 0


# -- all or nothing ---------------------------------------------------------------------------------


def _boom(*args: Any, **kwargs: Any) -> Any:
    raise IntegrityError("injected failure")


@pytest.mark.parametrize("where", ["run_test_cases", "promote"])
def test_a_publish_that_fails_midway_leaves_no_version_no_move_and_no_record(
    where, profile, owner, monkeypatch
):
    TestCase.objects.create(profile=profile, message="refund please", expected_route="billing")
    monkeypatch.setattr(publishing, where, _boom)

    with pytest.raises(IntegrityError):
        publish(profile, user=owner, environment="production")

    assert Version.objects.count() == 0
    assert not Environment.objects.filter(version__isnull=False).exists()
    assert not AuditEntry.objects.filter(action__startswith="version").exists()


def test_a_publish_whose_test_case_makes_evaluation_raise_stores_nothing(
    profile, owner, monkeypatch
):
    TestCase.objects.create(profile=profile, message="refund please", expected_route="billing")

    def explode(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("evaluation failed")

    monkeypatch.setattr(publishing, "evaluate", explode)

    with pytest.raises(RuntimeError):
        publish(profile, user=owner)

    assert Version.objects.count() == 0


def test_an_import_that_fails_midway_keeps_the_old_draft_whole(profile, owner, monkeypatch):
    pack = build_pack_dict(profile)
    pack["routes"][0]["description"] = "from the file"
    before = json.dumps(build_pack_dict(profile), sort_keys=True)
    monkeypatch.setattr(packs, "_tool", _boom)  # routes and rules are written by then

    with pytest.raises(IntegrityError):
        import_pack(pack, user=owner, into=profile)

    profile.refresh_from_db()
    assert json.dumps(build_pack_dict(profile), sort_keys=True) == before
    assert not AuditEntry.objects.filter(action="profile.import").exists()


def test_a_test_case_import_that_fails_midway_adds_no_case(profile, owner, monkeypatch):
    rows = case_import.parse_cases("text,expected\na,billing\nb,shipping\n").rows
    monkeypatch.setattr(case_import, "audit", _boom)

    with pytest.raises(IntegrityError):
        case_import.import_cases(profile, rows, user=owner)

    assert profile.test_cases.count() == 0


# -- delete: confirmed, recorded, restorable ---------------------------------------------------------


def test_deleting_a_route_asks_for_confirmation_first(profile, route, editor, client_for):
    url = reverse("routes-delete", args=[profile.slug, route.pk])

    asked = client_for(editor).get(url)

    assert asked.status_code == 200
    assert f'action="{url}"' in asked.content.decode()
    assert profile.routes.filter(pk=route.pk).exists()


def test_a_deleted_route_is_recorded_with_its_content_and_restored_from_the_history_page(
    profile, route, editor, client_for
):
    client = client_for(editor)
    client.post(reverse("routes-delete", args=[profile.slug, route.pk]))
    entry = AuditEntry.objects.get(action="route.delete")
    history = client.get(reverse("audit", args=[profile.slug]))

    restored = client.post(reverse("audit-restore", args=[profile.slug, entry.pk]))

    assert entry.before["examples"] == route.examples and entry.before["keywords"] == ["invoice"]
    assert 'data-testid="restore"' in history.content.decode()
    assert restored.status_code == 302
    again = profile.routes.get(name="billing")
    assert (again.examples, again.description) == (route.examples, route.description)
    record = AuditEntry.objects.get(action="route.restore")
    assert record.before == {"restored_from": entry.pk} and record.username == "editor"


@pytest.mark.parametrize("kind", ["rule", "tool", "testcase"])
def test_a_deleted_rule_tool_or_test_case_is_restored_with_its_content(kind, profile, owner):
    case = TestCase.objects.create(
        profile=profile, message="where is it", expected_route="shipping"
    )
    item = {"rule": profile.rules.get(), "tool": profile.tools.get(name="refund_order")}.get(
        kind, case
    )
    if kind == "testcase":
        delete_case(item, user=owner)
    else:
        delete_item(item, user=owner)

    back = restore(AuditEntry.objects.get(action=f"{kind}.delete"), user=owner)

    fields = ("keywords", "route_name", "trigger_keywords", "message", "expected_route")
    assert all(getattr(back, f) == getattr(item, f) for f in fields if hasattr(item, f))


def test_a_restore_is_refused_when_the_name_is_taken(profile, route, owner):
    delete_item(route, user=owner)
    Route.objects.create(profile=profile, name="billing", order=5)

    with pytest.raises(Refused, match="a route named 'billing' exists"):
        restore(AuditEntry.objects.get(action="route.delete"), user=owner)


def test_a_restore_is_refused_when_the_pack_would_become_invalid(profile, owner):
    rule = profile.rules.get()
    delete_item(rule, user=owner)
    human = profile.routes.get(name="human")
    delete_item(human, user=owner)  # the rule's route is gone now

    with pytest.raises(Refused) as refused:
        restore(AuditEntry.objects.get(action="rule.delete"), user=owner)

    assert "human" in str(refused.value)
    assert Rule.objects.filter(profile=profile).count() == 0


def test_a_deletion_is_restored_once_only(profile, owner):
    case = TestCase.objects.create(profile=profile, message="hi")
    delete_case(case, user=owner)
    entry = AuditEntry.objects.get(action="testcase.delete")
    restore(entry, user=owner)

    with pytest.raises(Refused, match="already restored"):
        restore(entry, user=owner)
    assert profile.test_cases.count() == 1


def test_the_history_page_refuses_a_restore_with_the_reason(profile, route, owner, client_for):
    delete_item(route, user=owner)
    Route.objects.create(profile=profile, name="billing", order=5)
    entry = AuditEntry.objects.get(action="route.delete")
    client = client_for(owner)

    response = client.post(reverse("audit-restore", args=[profile.slug, entry.pk]), follow=True)

    assert "Not restored: a route named" in response.content.decode()
