"""The demo data: a realistic support profile, loaded idempotently, demo login only when allowed."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from routing_core import Router
from studio.models import AuditEntry, Profile, Route, Rule, TestCase, Tool
from studio.services import build_pack, pack_report

COUNTED = (Profile, Route, Rule, Tool, TestCase, User, AuditEntry)


def _counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in COUNTED}


def test_loading_the_demo_twice_creates_no_duplicates(db):
    call_command("load_demo", "--force", stdout=StringIO())
    first = _counts()

    call_command("load_demo", "--force", stdout=StringIO())

    assert _counts() == first
    assert first["Profile"] == 1 and first["User"] == 1


def test_the_demo_profile_is_a_valid_realistic_support_agent(db):
    call_command("load_demo", "--no-user", stdout=StringIO())
    profile = Profile.objects.get(slug="support")

    routes = {r.name: r for r in profile.routes.all()}
    assert len(routes) >= 8
    assert all(len(r.examples) >= 6 and r.description and r.keywords for r in routes.values())
    assert routes["human"].action_kind == "stuck" and routes["human"].stuck_message
    assert (routes["orders"].action_kind, routes["orders"].delegate_agent) == (
        "delegate",
        "order-agent",
    )
    assert profile.tools.count() >= 10
    assert profile.tools.get(name="hydrate_context").always_include
    assert profile.test_cases.count() >= 3
    assert pack_report(profile).is_valid


def test_the_demo_profile_routes_its_own_rule(db):
    call_command("load_demo", "--no-user", stdout=StringIO())

    decision = Router(build_pack(Profile.objects.get(slug="support"))).route("get me a real person")

    assert (decision.route, decision.by) == ("human", "rule")


def test_the_demo_user_has_every_role(db):
    call_command("load_demo", "--force", stdout=StringIO())

    user = User.objects.get(username="demo")
    assert user.check_password("demo")
    assert sorted(user.groups.values_list("name", flat=True)) == [
        "admin",
        "editor",
        "publisher",
        "viewer",
    ]


def test_the_demo_user_is_refused_with_debug_off(db, settings):
    settings.DEBUG = False

    with pytest.raises(CommandError, match="refusing to create the demo/demo login"):
        call_command("load_demo", stdout=StringIO())

    assert not User.objects.exists()
