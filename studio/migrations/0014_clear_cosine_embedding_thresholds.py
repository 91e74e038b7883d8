"""Clear the embedding floors and margins profiles stored while they were cosines.

Since pack format 1.2 they are probabilities; a profile's stored cosine would be read as one
(docs/decisions.md, "A declared embedding floor's meaning"). A value is a cosine when the
profile's history shows it set before the studio began reading probabilities (when migration
0011, the first to ship only with the calibrated tiers, was applied here), or, with no entry
setting it, when the profile is older than that. No conversion is defined (a cosine's
probability depends on the pack's routes and fitted temperature), so it is cleared: the
history gets an entry naming the old value, and the policy page shows it until the profile's
settings are next saved.
"""

from datetime import datetime
from typing import Any

from django.db import migrations
from django.db.migrations.recorder import MigrationRecorder

from studio.cosine_thresholds import (
    CLEARED_ACTION,
    NOTICE_KEY,
    PROBABILITIES_SINCE_MIGRATION,
    cleared,
    embedding_thresholds,
    last_set,
    notice,
)


def clear_cosine_thresholds(apps, schema_editor):  # type: ignore[no-untyped-def]
    """Clear each profile's cosine-era embedding thresholds and say so in its history."""
    Profile, AuditEntry = (
        apps.get_model("studio", "Profile"),
        apps.get_model("studio", "AuditEntry"),
    )
    since = _probabilities_since(schema_editor.connection)
    for profile in Profile.objects.exclude(scorer_kind="lexical"):
        current = embedding_thresholds(profile.scorer_kind, profile.floor, profile.scorer_settings)
        if not current:
            continue
        entries = AuditEntry.objects.filter(profile=profile, object_type="profile")
        history = [(e.at, e.before, e.after) for e in entries.order_by("at", "pk")]
        cosines = {
            path: value
            for path, value in current.items()
            if since is None or (last_set(path, value, history) or profile.created_at) < since
        }
        if cosines:
            _clear(AuditEntry, profile, cosines)


def _probabilities_since(connection: Any) -> datetime | None:
    """When this database began running the calibrated tiers (None: not recorded)."""
    applied = MigrationRecorder(connection).migration_qs.filter(
        app="studio", name=PROBABILITIES_SINCE_MIGRATION
    )
    return applied.values_list("applied", flat=True).first()


def _clear(AuditEntry: Any, profile: Any, cosines: dict[str, float]) -> None:
    before = {"floor": profile.floor, "scorer_settings": profile.scorer_settings}
    profile.floor, profile.scorer_settings = cleared(
        profile.floor, profile.scorer_settings, list(cosines)
    )
    profile.revision += 1  # an open form holding the cosine is refused, not saved over this
    profile.draft_revision += 1  # the pack changed: per-revision caches are stale
    profile.save(update_fields=["floor", "scorer_settings", "revision", "draft_revision"])
    after = {"floor": profile.floor, "scorer_settings": profile.scorer_settings}
    AuditEntry.objects.create(
        profile=profile,
        profile_slug=profile.slug,
        action=CLEARED_ACTION,
        object_type="profile",
        object_repr=profile.slug,
        before={k: v for k, v in before.items() if v != after[k]},
        after={**{k: v for k, v in after.items() if v != before[k]}, NOTICE_KEY: notice(cosines)},
    )


class Migration(migrations.Migration):
    dependencies = [
        ("studio", "0013_one_active_search_per_case"),
    ]

    operations = [
        migrations.RunPython(clear_cosine_thresholds, migrations.RunPython.noop),
    ]
