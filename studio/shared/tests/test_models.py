"""Models: constraints, defaults, roles and the settings they rely on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction

from studio.models import Profile, Route, snapshot
from studio.shared.roles import ROLES

ROOT = Path(__file__).resolve().parents[3]


def test_a_route_name_is_unique_within_a_profile_in_the_database(profile):
    with pytest.raises(IntegrityError), transaction.atomic():
        Route.objects.create(profile=profile, name="billing")


def test_the_same_route_name_may_exist_in_two_profiles(profile):
    other = Profile.objects.create(slug="other", name="Other")

    Route.objects.create(profile=other, name="billing")

    assert Route.objects.filter(name="billing").count() == 2


def test_a_new_profile_starts_at_revision_one_with_the_design_defaults(db):
    p = Profile.objects.create(slug="p", name="P")

    assert (p.revision, p.near_tie_margin, p.menu_size, p.floor, p.strictness) == (
        1,
        0.15,
        3,
        None,
        "assist",
    )
    assert (p.triage_mode, p.ambiguity_confidence_floor, p.min_action_signals) == (
        "enforce",
        0.55,
        2,
    )


def test_routes_keep_their_order(profile):
    assert [r.name for r in profile.routes.all()] == ["billing", "shipping", "human"]


def test_a_snapshot_holds_the_editable_fields_only(route):
    snap = snapshot(route)

    assert snap["name"] == "billing"
    assert {"id", "profile", "updated_at", "updated_by"}.isdisjoint(snap)


def test_the_four_roles_exist_after_migrate(db):
    assert set(Group.objects.values_list("name", flat=True)) >= set(ROLES)
    assert Group.objects.get(name="viewer").permissions.count() == 1
    assert Group.objects.get(name="admin").permissions.count() == 4


def test_settings_refuse_to_start_without_a_secret_key_when_debug_is_off():
    env = {
        **os.environ,
        "DEBUG": "False",
        "SECRET_KEY": "",
        "DJANGO_SETTINGS_MODULE": "studio.settings",
    }

    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )

    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr
