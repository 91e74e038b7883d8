"""The ORM → pack bridge: building, validating, saving, refusing, auditing."""

from __future__ import annotations

import pytest
from django.urls import reverse

from routing_core import Router, load_pack
from studio.models import AuditEntry, Profile, Route, Rule, TestCase
from studio.shared.edits import create_profile, delete_item, move_item, save_item, save_profile
from studio.shared.errors import Conflict, Refused
from studio.shared.packs import build_pack, build_pack_dict, pack_report


def test_an_edited_profile_builds_a_pack_that_routing_core_loads_and_routes(profile, editor):
    route = profile.routes.get(name="shipping")
    route.examples = [*route.examples, "my package never arrived"]
    save_item(route, user=editor, expected_revision=route.revision)

    pack = load_pack(build_pack_dict(profile))
    decision = Router(pack).route("my package never arrived")

    assert decision.route == "shipping"
    assert [r.name for r in pack.routes] == ["billing", "shipping", "human"]


def test_the_pack_carries_every_field_of_the_profile(profile):
    pack = build_pack_dict(profile)

    assert pack["profile"] == {"slug": "shop", "name": "Shop", "description": "A small shop"}
    assert pack["routes"][2]["action"] == {
        "kind": "stuck",
        "message": "A colleague will take over.",
    }
    assert pack["rules"] == [
        {"route": "human", "match": {"keywords": ["real person"]}, "examples": []}
    ]
    assert pack["policy"] == {
        "near_tie_margin": 0.15,
        "menu_size": 3,
        "floor": None,
        "strictness": "assist",
    }
    assert "action_verbs" not in pack["triage"]
    assert [t["name"] for t in pack["tools"]] == ["hydrate_context", "refund_order"]


def test_a_rule_routes_before_the_scorer(profile):
    decision = Router(build_pack(profile)).route("I want a real person")

    assert decision.route == "human"
    assert decision.by == "rule"


def test_a_valid_profile_has_no_problems(profile):
    assert pack_report(profile).is_valid


def test_a_profile_without_routes_reports_a_problem(db):
    empty = Profile.objects.create(slug="empty", name="Empty")

    assert not pack_report(empty).is_valid


def test_a_duplicate_route_name_is_refused_and_nothing_is_saved(profile, editor):
    route = Route(profile=profile, name="billing", description="again")

    with pytest.raises(Refused) as caught:
        save_item(route, user=editor)

    assert caught.value.prefix == "routes[3]"
    assert any(path.startswith("routes[3].name") for path, _ in caught.value.errors)
    assert profile.routes.count() == 3


def test_a_default_route_that_does_not_exist_is_refused(profile, editor):
    profile.default_route = "nowhere"

    with pytest.raises(Refused) as caught:
        save_profile(profile, user=editor, expected_revision=profile.revision)

    assert [p for p, _ in caught.value.errors] == ["default_route"]
    assert Profile.objects.get(pk=profile.pk).default_route == ""


def test_a_bad_regex_is_refused_with_its_path(profile, editor):
    rule = Rule(profile=profile, route_name="billing", match_kind="regex", regex="(unclosed")

    with pytest.raises(Refused) as caught:
        save_item(rule, user=editor)

    assert caught.value.errors[0][0] == "rules[1].match.regex"
    assert profile.rules.count() == 1


def test_a_delegate_with_a_stuck_message_is_refused(route, editor):
    route.action_kind = "delegate"
    route.delegate_agent = "order-agent"
    route.stuck_message = "bye"

    with pytest.raises(Refused) as caught:
        save_item(route, user=editor, expected_revision=route.revision)

    assert caught.value.errors[0][0].startswith("routes[0].action")


def test_a_stale_revision_is_refused_with_who_changed_it_and_when(route, editor, owner):
    first = Route.objects.get(pk=route.pk)
    second = Route.objects.get(pk=route.pk)
    first.description = "mine"
    save_item(first, user=owner, expected_revision=1)

    second.description = "theirs"
    with pytest.raises(
        Conflict, match=r"changed by owner at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d — reload"
    ):
        save_item(second, user=editor, expected_revision=1)

    assert Route.objects.get(pk=route.pk).description == "mine"


def test_renaming_a_route_rewrites_the_rules_default_and_test_cases(profile, editor):
    profile.default_route = "human"
    profile.save()
    TestCase.objects.create(profile=profile, message="a person please", expected_route="human")
    human = profile.routes.get(name="human")
    human.name = "person"

    save_item(human, user=editor, expected_revision=human.revision)

    profile.refresh_from_db()
    assert profile.default_route == "person"
    assert profile.rules.get().route_name == "person"
    assert profile.test_cases.get().expected_route == "person"
    assert pack_report(profile).is_valid


def test_deleting_a_route_a_rule_needs_is_refused(profile, editor):
    human = profile.routes.get(name="human")

    with pytest.raises(Refused) as caught:
        delete_item(human, user=editor)

    assert caught.value.errors[0][0] == "rules[0].route"
    assert profile.routes.filter(name="human").exists()


def test_deleting_is_recorded_with_the_deleted_content(route, editor):
    delete_item(route, user=editor)

    entry = AuditEntry.objects.get(action="route.delete")
    assert entry.before is not None
    assert entry.username == "editor"
    assert entry.before["examples"] == [
        "why was I charged twice",
        "download my invoice",
        "update my card",
    ]
    assert entry.after is None


def test_saving_records_before_and_after(route, editor):
    route.description = "money matters"
    save_item(route, user=editor, expected_revision=route.revision)

    entry = AuditEntry.objects.get(action="route.update")
    assert entry.before is not None and entry.after is not None
    assert entry.before["description"] == "invoices, charges and payment methods"
    assert entry.after["description"] == "money matters"
    assert entry.after["revision"] == 2


def test_every_edit_bumps_the_draft_revision(profile, route, editor):
    start = profile.draft_revision
    route.keywords = ["invoice", "receipt"]
    save_item(route, user=editor, expected_revision=route.revision)

    assert Profile.objects.get(pk=profile.pk).draft_revision > start


def test_moving_a_rule_changes_which_matches_first(profile, editor):
    second = Rule.objects.create(
        profile=profile, route_name="billing", keywords=["person"], order=1
    )

    move_item(second, "up", user=editor)

    assert [r.route_name for r in profile.rules.all()] == ["billing", "human"]


def test_a_delegate_to_an_unknown_agent_is_a_warning_not_a_problem(route, editor):
    route.action_kind = "delegate"
    route.delegate_agent = "order-agent"
    save_item(route, user=editor, expected_revision=route.revision)

    report = pack_report(route.profile)
    assert report.is_valid
    assert report.warnings == [
        (
            "routes[0].action.agent",
            "'order-agent' is not a profile in this studio; make sure an agent with that id exists",
        )
    ]


def test_a_delegation_cycle_between_profiles_is_refused(profile, editor):
    other = Profile.objects.create(slug="orders", name="Orders")
    Route.objects.create(
        profile=other,
        name="back",
        action_kind="delegate",
        delegate_agent="shop",
        examples=["x"],
    )
    route = profile.routes.get(name="shipping")
    route.action_kind = "delegate"
    route.delegate_agent = "orders"

    with pytest.raises(Refused) as caught:
        save_item(route, user=editor, expected_revision=route.revision)

    assert caught.value.errors == [
        ("routes[1].action.agent", "delegation cycle: shop → orders → shop")
    ]


def test_a_delegate_target_that_is_not_an_agent_id_is_refused(route, editor):
    route.action_kind = "delegate"
    route.delegate_agent = "Order Agent!"

    with pytest.raises(Refused) as caught:
        save_item(route, user=editor, expected_revision=route.revision)

    assert caught.value.errors[0][0] == "routes[0].action.agent"


def test_a_profile_slug_taken_after_the_form_checked_it_is_refused_not_a_crash(profile, editor):
    # Another studio process can create the slug between the form's check and this save.
    with pytest.raises(Refused) as refused:
        create_profile(Profile(slug=profile.slug, name="Again"), user=editor)
    assert refused.value.errors == [("profile.slug", "a profile 'shop' exists")]
    assert Profile.objects.filter(slug=profile.slug).count() == 1


def test_a_profile_slug_taken_by_a_racing_request_is_a_conflict_like_a_sequential_one(
    profile, editor
):
    # The API answers a Conflict with 409; a race must not read as an invalid pack (422).
    with pytest.raises(Conflict):
        create_profile(Profile(slug=profile.slug, name="Again"), user=editor)


def test_a_route_added_with_no_examples_is_accepted_with_a_warning(profile, editor, client_for):
    client = client_for(editor)
    added = client.post(
        reverse("routes-add", args=[profile.slug]),
        {"name": "baggage", "description": "bags and luggage"},
    )
    assert added.status_code in (200, 302)

    html = client.get(reverse("profile-detail", args=[profile.slug])).content.decode()

    assert profile.routes.filter(name="baggage", examples=[]).exists()
    assert '<span class="badge warn">1 warning</span>' in html
    assert "baggage → examples</strong>: no examples yet" in html
