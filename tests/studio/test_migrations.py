"""A database created by the first migration set upgrades to the latest with its data intact.

The rows are written with the *historical* models of 0001 (frozen, so this seed never changes);
the check is generic: after migrating to the latest leaves, every seeded row still exists and
every field it had keeps its value. A migration that renames or transforms a field must say so
in `TRANSFORMED` below, with the value it should now have. Getting to 0001 migrates the test
database backwards, so every later studio migration must be reversible (give RunSQL/RunPython a
reverse).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.apps import apps as current_apps
from django.apps.registry import Apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

MigrationKey = tuple[str, str]
Seeded = dict[str, list[tuple[int, dict[str, Any]]]]

# (model, field) -> how the field's 0001 value reads after every later migration.
TRANSFORMED: dict[tuple[str, str], Any] = {}


def first_studio_migrations(executor: MigrationExecutor) -> list[MigrationKey]:
    return [key for key in executor.loader.graph.root_nodes() if key[0] == "studio"]


def migrate(targets: list[MigrationKey]) -> Apps:
    """Migrate the test database to `targets`; the historical models at that point."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


@pytest.fixture
def at_first_migrations(transactional_db: None) -> Iterator[Apps]:
    executor = MigrationExecutor(connection)
    first, latest = first_studio_migrations(executor), executor.loader.graph.leaf_nodes()
    try:
        yield migrate(first)
    finally:
        migrate(latest)  # whatever happened, leave the schema the other tests expect


def seed(apps: Apps) -> Seeded:
    """A small but complete profile, written through 0001's models."""
    user = apps.get_model("auth", "User").objects.create(username="ada", password="!")
    profile = apps.get_model("studio", "Profile").objects.create(
        slug="shop",
        name="Shop",
        description="A small shop",
        default_route="billing",
        floor=0.2,
        near_tie_margin=0.1,
        menu_size=2,
        strictness="guard",
        action_verbs=["cancel", "refund"],
        question_pattern=r"\?$",
        updated_by=user,
    )
    Route, Rule = apps.get_model("studio", "Route"), apps.get_model("studio", "Rule")
    rows = {
        "Profile": [profile],
        "Route": [
            Route.objects.create(
                profile=profile,
                name="billing",
                order=0,
                examples=["charged twice"],
                keywords=["invoice"],
                never=["refund"],
                revision=4,
                updated_by=user,
            ),
            Route.objects.create(
                profile=profile,
                name="human",
                order=1,
                action_kind="stuck",
                stuck_message="A colleague will take over.",
            ),
        ],
        "Rule": [
            Rule.objects.create(profile=profile, route_name="human", keywords=["a person"]),
            Rule.objects.create(
                profile=profile, route_name="billing", match_kind="regex", regex=r"\binvoice\s+\d+"
            ),
        ],
        "Tool": [
            apps.get_model("studio", "Tool").objects.create(
                profile=profile, name="hydrate_context", always_include=True
            )
        ],
        "TestCase": [
            apps.get_model("studio", "TestCase").objects.create(
                profile=profile,
                message="why was I charged twice?",
                expected_route="billing",
                expected_verdict="move",
                expected_tools=["hydrate_context"],
            )
        ],
        "AuditEntry": [
            apps.get_model("studio", "AuditEntry").objects.create(
                profile=profile,
                profile_slug="shop",
                user=user,
                username="ada",
                action="route.update",
                object_type="route",
                object_repr="billing",
                before={"name": "bills"},
                after={"name": "billing"},
            )
        ],
    }
    return {name: [(obj.pk, _values(obj)) for obj in objs] for name, objs in rows.items()}


def _values(obj: Any) -> dict[str, Any]:
    return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields}


def test_a_database_from_the_first_migrations_upgrades_to_the_latest_with_data_intact(
    at_first_migrations: Apps,
) -> None:
    seeded = seed(at_first_migrations)
    executor = MigrationExecutor(connection)
    migrate(executor.loader.graph.leaf_nodes())

    for model_name, rows in seeded.items():
        model = current_apps.get_model("studio", model_name)
        names = {f.attname for f in model._meta.concrete_fields}
        for pk, before in rows:
            after = _values(model._default_manager.get(pk=pk))
            for field, value in before.items():
                if field in names:
                    expected = TRANSFORMED.get((model_name, field), value)
                    assert after[field] == expected, f"{model_name}.{field} of row {pk}"


@pytest.fixture
def at_repair_jobs(transactional_db: None) -> Iterator[Apps]:
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    try:
        yield migrate([("studio", "0012_repair_jobs")])
    finally:
        migrate(latest)


def test_searches_queued_twice_before_0013_leave_one_queued_and_say_why_the_other_stopped(
    at_repair_jobs: Apps,
) -> None:
    profile = at_repair_jobs.get_model("studio", "Profile").objects.create(slug="shop", name="Shop")
    case = at_repair_jobs.get_model("studio", "TestCase").objects.create(
        profile=profile, message="where is my parcel", expected_route="shipping"
    )
    RepairJob = at_repair_jobs.get_model("studio", "RepairJob")
    twins = [
        RepairJob.objects.create(profile=profile, test_case=case, suite_fingerprint="f")
        for _ in range(2)
    ]
    migrate([("studio", "0013_one_active_search_per_case")])

    older, newer = (
        current_apps.get_model("studio", "RepairJob").objects.get(pk=j.pk) for j in twins
    )
    assert newer.status == "queued"
    assert older.status == "cancelled" and f"#{newer.pk}" in older.error
