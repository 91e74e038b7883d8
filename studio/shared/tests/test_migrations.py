"""A database created by the first migration set upgrades to the latest with its data intact.

The rows are written with the *historical* models of 0001 (frozen, so this seed never changes);
the check is generic: after migrating to the latest leaves, every seeded row still exists and
every field it had keeps its value. A migration that renames or transforms a field must say so
in `TRANSFORMED` below, with the value it should now have. Getting to 0001 migrates the test
database backwards, so every later studio migration must be reversible (give RunSQL/RunPython a
reverse).
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps as current_apps
from django.apps.registry import Apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder

from studio.shared import cosine_thresholds

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


def at_migration(name: str) -> Iterator[Apps]:
    """The database at studio migration `name`, back at the latest afterwards."""
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        yield migrate([("studio", name)])
    finally:
        migrate(latest)


@pytest.fixture
def at_repair_jobs(transactional_db: None) -> Iterator[Apps]:
    yield from at_migration("0012_repair_jobs")


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


@pytest.fixture
def at_one_active_search(transactional_db: None) -> Iterator[Apps]:
    yield from at_migration("0013_one_active_search_per_case")


PROBABILITIES_SINCE = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


IMPORTS_REFUSE_COSINES_SINCE = PROBABILITIES_SINCE + timedelta(hours=2)
PRETEND = {
    "0011_import_jobs": PROBABILITIES_SINCE,
    "0013_one_active_search_per_case": IMPORTS_REFUSE_COSINES_SINCE,
}


@pytest.fixture
def probabilities_since(at_one_active_search: Apps) -> Iterator[Apps]:
    """The database at 0013 with 0011 and 0013 recorded as applied at the PRETEND times; the
    recorded times are put back afterwards (the flush between tests leaves django_migrations)."""
    recorded = MigrationRecorder(connection).migration_qs.filter(app="studio")
    applied = {name: recorded.get(name=name).applied for name in PRETEND}
    try:
        for name, at in PRETEND.items():
            recorded.filter(name=name).update(applied=at)
        yield at_one_active_search
    finally:
        for name, at in applied.items():
            recorded.filter(name=name).update(applied=at)
        # as it found them, whichever test runs next (the flush would not put them back)
        assert {name: recorded.get(name=name).applied for name in PRETEND} == applied


def _embedding_profile(apps: Apps, slug: str, *, at: datetime, **fields: Any) -> Any:
    """A profile created at `at`, with the audit entry its creation wrote."""
    Profile, AuditEntry = (
        apps.get_model("studio", "Profile"),
        apps.get_model("studio", "AuditEntry"),
    )
    profile = Profile.objects.create(slug=slug, name=slug, **fields)
    Profile.objects.filter(pk=profile.pk).update(created_at=at)
    entry = AuditEntry.objects.create(
        profile=profile,
        action="profile.create",
        object_type="profile",
        object_repr=slug,
        after={
            "scorer_kind": profile.scorer_kind,
            "floor": profile.floor,
            "scorer_settings": profile.scorer_settings,
        },
    )
    AuditEntry.objects.filter(pk=entry.pk).update(at=at)
    return profile


def test_0014_clears_embedding_thresholds_set_while_they_were_cosines_and_says_so(
    probabilities_since: Apps,
) -> None:
    apps = probabilities_since
    before, after = (
        PROBABILITIES_SINCE - timedelta(days=1),
        PROBABILITIES_SINCE + timedelta(hours=1),
    )
    old = _embedding_profile(apps, "old", at=before, scorer_kind="embedding", floor=0.62)
    retuned = _embedding_profile(apps, "retuned", at=before, scorer_kind="embedding", floor=0.62)
    AuditEntry = apps.get_model("studio", "AuditEntry")
    entry = AuditEntry.objects.create(
        profile=retuned,
        action="profile.update",
        object_type="profile",
        before={"scorer_kind": "embedding", "floor": 0.62, "scorer_settings": None},
        after={"scorer_kind": "embedding", "floor": 0.4, "scorer_settings": None},
    )
    AuditEntry.objects.filter(pk=entry.pk).update(at=after)
    apps.get_model("studio", "Profile").objects.filter(pk=retuned.pk).update(floor=0.4)
    lexical = _embedding_profile(apps, "lexical", at=before, floor=0.3)
    tiers = [{"kind": "lexical"}, {"kind": "embedding", "floor": 0.7, "near_tie_margin": None}]
    cascade = _embedding_profile(
        apps,
        "cascade",
        at=before,
        scorer_kind="cascade",
        floor=0.3,
        scorer_settings={"kind": "cascade", "tiers": tiers},
    )
    # The models as of 0014 (a newer field of Profile has no column yet).
    at_0014 = migrate([("studio", "0014_clear_cosine_embedding_thresholds")])

    Profile = at_0014.get_model("studio", "Profile")
    AuditEntry = at_0014.get_model("studio", "AuditEntry")
    cleared = Profile.objects.get(pk=old.pk)
    assert cleared.floor is None and cleared.draft_revision == old.draft_revision + 1
    note = AuditEntry.objects.get(profile=old.pk, action="profile.cosine_thresholds_cleared")
    assert note.before == {"floor": 0.62}
    assert note.after["notice"] == (
        "The embedding floor 0.62 was set in the old unit (cosine similarity); floors are now "
        "probabilities, so it was cleared and the floor fitted to this profile's examples applies."
    )
    assert Profile.objects.get(pk=retuned.pk).floor == 0.4  # set since: a probability
    assert Profile.objects.get(pk=lexical.pk).floor == 0.3  # a lexical floor never was a cosine
    fresh = Profile.objects.get(pk=cascade.pk)
    assert fresh.floor == 0.3  # the policy's floor is judged by the cascade's lexical tier
    assert fresh.scorer_settings["tiers"][1]["floor"] is None
    assert fresh.scorer_settings["tiers"][0] == {"kind": "lexical"}
    tier_note = AuditEntry.objects.get(
        profile=cascade.pk, action="profile.cosine_thresholds_cleared"
    )
    assert tier_note.after["notice"] == (
        "The embedding tier's own floor in the cascade 0.7 was set in the old unit (cosine "
        "similarity); floors are now probabilities, so it was cleared and the policy's floor "
        "0.3 applies."
    )
    assert not AuditEntry.objects.filter(
        profile__in=[retuned.pk, lexical.pk], action="profile.cosine_thresholds_cleared"
    ).exists()


def test_0014_names_what_applies_once_a_tier_floor_and_the_policy_floor_are_both_cleared(
    probabilities_since: Apps,
) -> None:
    """A standalone embedding profile's own floor and the policy's floor, both cosines: with
    neither left, the fitted floor judges (not "the policy's floor", which is gone too)."""
    both = _embedding_profile(
        probabilities_since,
        "both",
        at=PROBABILITIES_SINCE - timedelta(days=1),
        scorer_kind="embedding",
        floor=0.62,
        near_tie_margin=0.2,
        scorer_settings={"kind": "embedding", "floor": 0.7, "near_tie_margin": 0.03},
    )
    at_0014 = migrate([("studio", "0014_clear_cosine_embedding_thresholds")])

    AuditEntry = at_0014.get_model("studio", "AuditEntry")
    said = AuditEntry.objects.get(profile=both.pk, action="profile.cosine_thresholds_cleared")
    fitted = "so it was cleared and the floor fitted to this profile's examples applies."
    assert said.after["notice"].count(fitted) == 2
    assert "the policy's floor" not in said.after["notice"]
    assert "so it was reset to the default 0.15." in said.after["notice"]  # the policy's 0.2
    assert (
        "so it was cleared and the policy's near-tie margin 0.15 applies." in said.after["notice"]
    )


def test_0014_resets_a_standalone_embedding_margin_set_while_it_was_a_cosine(
    probabilities_since: Apps,
) -> None:
    """The policy's margin under a standalone embedding scorer was a cosine gap too; it cannot
    be empty, so it goes back to the default, told by the same rule as the floors."""
    apps = probabilities_since
    AuditEntry = apps.get_model("studio", "AuditEntry")
    made = {
        slug: _embedding_profile(
            apps, slug, at=PROBABILITIES_SINCE - timedelta(days=1), scorer_kind=kind
        )
        for slug, kind in (("old", "embedding"), ("since", "embedding"), ("tiers", "cascade"))
    }
    for slug, at in (
        ("old", PROBABILITIES_SINCE - timedelta(hours=1)),
        ("since", PROBABILITIES_SINCE + timedelta(hours=1)),
        ("tiers", PROBABILITIES_SINCE - timedelta(hours=1)),
    ):
        kind = made[slug].scorer_kind
        entry = AuditEntry.objects.create(
            profile=made[slug],
            action="profile.update",
            object_type="profile",
            before={"scorer_kind": kind, "floor": None, "near_tie_margin": 0.15},
            after={"scorer_kind": kind, "floor": None, "near_tie_margin": 0.03},
        )
        AuditEntry.objects.filter(pk=entry.pk).update(at=at)
        apps.get_model("studio", "Profile").objects.filter(slug=slug).update(near_tie_margin=0.03)
    at_0014 = migrate([("studio", "0014_clear_cosine_embedding_thresholds")])

    Profile = at_0014.get_model("studio", "Profile")
    margins = {slug: Profile.objects.get(pk=p.pk).near_tie_margin for slug, p in made.items()}
    assert margins == {"old": 0.15, "since": 0.03, "tiers": 0.03}
    said = AuditEntry.objects.get(
        profile=made["old"].pk, action="profile.cosine_thresholds_cleared"
    )
    assert said.before == {"near_tie_margin": 0.03}
    assert said.after == {
        "near_tie_margin": 0.15,
        "notice": "The near-tie margin 0.03 was set in the old unit (cosine similarity); margins "
        "are now probabilities, so it was reset to the default 0.15.",
    }


def test_0014_keeps_a_floor_on_a_profile_made_since_probabilities_with_no_history(
    probabilities_since: Apps,
) -> None:
    Profile = probabilities_since.get_model("studio", "Profile")
    made = Profile.objects.create(slug="made", name="made", scorer_kind="embedding", floor=0.5)
    Profile.objects.filter(pk=made.pk).update(created_at=PROBABILITIES_SINCE + timedelta(days=1))
    unknown = Profile.objects.create(slug="unknown", name="u", scorer_kind="embedding", floor=0.5)
    Profile.objects.filter(pk=unknown.pk).update(created_at=PROBABILITIES_SINCE - timedelta(days=1))
    at_0014 = migrate([("studio", "0014_clear_cosine_embedding_thresholds")])

    Current = at_0014.get_model("studio", "Profile")
    assert Current.objects.get(pk=made.pk).floor == 0.5
    assert Current.objects.get(pk=unknown.pk).floor is None


def project_imports(migration: str) -> list[str]:
    """The project modules (studio, routing_core) a migration file imports."""
    source = Path(__file__).parents[3] / "studio/migrations" / f"{migration}.py"
    tree = ast.parse(source.read_text())
    imported = [
        name
        for node in ast.walk(tree)
        for name in (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
    ]
    assert imported  # it imports django at least: the walk saw the imports
    return [n for n in imported if n.split(".")[0] in {"studio", "routing_core"}]


@pytest.mark.parametrize(
    "migration", ["0014_clear_cosine_embedding_thresholds", "0015_scrub_stored_evidence"]
)
def test_data_migrations_decide_with_frozen_logic_not_the_live_code(migration: str) -> None:
    """A later change to routing_core or the studio's helpers must not change what a data
    migration does to a database migrated later: it imports nothing of the project."""
    assert project_imports(migration) == []


def test_0014_judges_an_imported_floor_by_when_imports_began_refusing_cosines(
    probabilities_since: Apps,
) -> None:
    """Between 0011 and 0013 an import still stored a minor-1 pack's cosine floor unchanged."""
    apps = probabilities_since
    before = PROBABILITIES_SINCE - timedelta(days=1)
    AuditEntry = apps.get_model("studio", "AuditEntry")
    imported = {}
    for slug, at in (
        ("early", PROBABILITIES_SINCE + timedelta(hours=1)),
        ("late", IMPORTS_REFUSE_COSINES_SINCE + timedelta(hours=1)),
    ):
        imported[slug] = _embedding_profile(apps, slug, at=before, scorer_kind="embedding")
        entry = AuditEntry.objects.create(
            profile=imported[slug],
            action="profile.import",
            object_type="profile",
            before={"scorer_kind": "embedding", "floor": None, "scorer_settings": None},
            after={"scorer_kind": "embedding", "floor": 0.62, "scorer_settings": None},
        )
        AuditEntry.objects.filter(pk=entry.pk).update(at=at)
        apps.get_model("studio", "Profile").objects.filter(slug=slug).update(floor=0.62)
    at_0014 = migrate([("studio", "0014_clear_cosine_embedding_thresholds")])

    Profile = at_0014.get_model("studio", "Profile")
    assert Profile.objects.get(pk=imported["early"].pk).floor is None
    assert Profile.objects.get(pk=imported["late"].pk).floor == 0.62  # refused unless minor 2


def test_the_names_0014_wrote_are_the_names_the_pages_read() -> None:
    """The migration keeps its own copies (frozen logic); the policy page's notice and the
    history's label find its entries only while the live names match them."""
    frozen = importlib.import_module("studio.migrations.0014_clear_cosine_embedding_thresholds")
    assert (frozen.CLEARED_ACTION, frozen.NOTICE_KEY) == (
        cosine_thresholds.CLEARED_ACTION,
        cosine_thresholds.NOTICE_KEY,
    )


@pytest.fixture
def at_cosines_cleared(transactional_db: None) -> Iterator[Apps]:
    yield from at_migration("0014_clear_cosine_embedding_thresholds")


def test_0015_takes_out_of_stored_events_the_quoted_words_their_messages_do_not_keep(
    at_cosines_cleared: Apps,
) -> None:
    apps = at_cosines_cleared
    profile = apps.get_model("studio", "Profile").objects.create(slug="shop", name="Shop")
    Event = apps.get_model("studio", "Event")
    evidence = {
        "source": "scorer",
        "route": "billing",
        "text": "jo@x.org",
        "terms": [
            {"term": "charged", "weight": 1.0},
            {"term": "smithson", "weight": 0.5},
            {"term": "I was billed twice", "weight": 0.7, "kind": "example"},
        ],
    }
    rows = {
        message: Event.objects.create(
            profile=profile,
            received=PROBABILITIES_SINCE,
            verdict="move",
            by="scorer",
            message=message,
            event={"schema": "route-decision/1", "route": "billing", "evidence": evidence},
        )
        for message in ("smithson was charged, mail [email]", None)
    }
    untouched = Event.objects.create(
        profile=profile, received=PROBABILITIES_SINCE, verdict="menu", by="menu", event={}
    )
    # The models as of 0015: the current ones have columns later migrations add.
    Current = migrate([("studio", "0015_scrub_stored_evidence")]).get_model("studio", "Event")
    kept = Current.objects.get(pk=rows["smithson was charged, mail [email]"].pk).event["evidence"]
    assert kept["text"] == "[email]"
    assert [t["term"] for t in kept["terms"]] == ["charged", "smithson", "I was billed twice"]
    dropped = Current.objects.get(pk=rows[None].pk).event
    assert dropped["route"] == "billing" and dropped["evidence"]["text"] is None
    assert [t["term"] for t in dropped["evidence"]["terms"]] == ["I was billed twice"]
    assert Current.objects.get(pk=untouched.pk).event == {}
