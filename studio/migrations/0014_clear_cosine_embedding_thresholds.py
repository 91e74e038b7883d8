"""Clear the embedding floors and margins profiles stored while they were cosines.

Since pack format 1.2 they are probabilities; a profile's stored cosine would be read as one
(docs/decisions.md, "A declared embedding floor's meaning"). A value is a cosine when the
profile's history shows it set before the studio began reading probabilities (when migration
0011, the first to ship only with the calibrated tiers, was applied here), or, with no entry
setting it, when the profile is older than that. A value an import set is judged by when
imports began refusing cosine-era packs instead (when 0013, the first migration to ship only
with that refusal, was applied): until then an older pack's cosine was imported unchanged.
No conversion is defined (a cosine's probability depends on the pack's routes and fitted
temperature), so it is cleared; a standalone embedding profile's policy margin, which cannot
be empty, is reset to its default (when it differs from it). The history gets an entry
naming the old value, and the policy page shows it until the profile's settings are next
saved.

Everything this migration decides with is frozen here, as of when it was written (which
values a pack declares on an embedding tier, the sentences, the action's name): a later
change to the live code (`routing_core.pack.embedding_threshold_paths`,
`studio.shared.cosine_thresholds`) must not change what it clears on a database migrated later.
"""

import copy
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.db import migrations
from django.db.migrations.recorder import MigrationRecorder

# The audit action of the entry written here, and the key of its sentence in `after`
# (studio.shared.cosine_thresholds names both for the pages; these are this migration's own copy).
CLEARED_ACTION = "profile.cosine_thresholds_cleared"
NOTICE_KEY = "notice"
# The first studio migration that shipped only with the calibrated (probability) tiers: in a
# database, the time it was applied is when the studio began reading probabilities.
PROBABILITIES_SINCE_MIGRATION = "0011_import_jobs"
# The first that shipped only with imports refusing a cosine-era pack (format minor < 2
# declaring an embedding threshold; commit 9154b19): an import before it stored the cosine.
IMPORTS_REFUSE_COSINES_SINCE_MIGRATION = "0013_one_active_search_per_case"
IMPORT_ACTION = "profile.import"

# Profile.near_tie_margin's default when this was written (a probability margin).
DEFAULT_MARGIN = 0.15
# The profile's fields that hold embedding thresholds (besides scorer_kind, which says which).
FIELDS = ("floor", "near_tie_margin", "scorer_settings")

_WHAT = {
    "policy.floor": "embedding floor",
    "policy.near_tie_margin": "near-tie margin",
    "floor": "embedding tier's own floor",
    "near_tie_margin": "embedding tier's own near-tie margin",
}
_FITTED = "the floor fitted to this profile's examples applies"
_TOKEN = re.compile(r"[^.\[\]]+")
History = list[tuple[datetime, str, Any, Any]]  # (at, action, before, after)


def clear_cosine_thresholds(apps, schema_editor):  # type: ignore[no-untyped-def]
    """Clear each profile's cosine-era embedding thresholds and say so in its history."""
    Profile, AuditEntry = (
        apps.get_model("studio", "Profile"),
        apps.get_model("studio", "AuditEntry"),
    )
    since = _applied(schema_editor.connection, PROBABILITIES_SINCE_MIGRATION)
    imports_since = _applied(schema_editor.connection, IMPORTS_REFUSE_COSINES_SINCE_MIGRATION)
    for profile in Profile.objects.exclude(scorer_kind="lexical"):
        current = _thresholds(_fields(profile))
        if not current:
            continue
        entries = AuditEntry.objects.filter(profile=profile, object_type="profile")
        history = [(e.at, e.action, e.before, e.after) for e in entries.order_by("at", "pk")]
        cosines = {
            path: value
            for path, value in current.items()
            if _was_cosine(_last_set(path, value, history), profile, since, imports_since)
        }
        if cosines:
            _clear(AuditEntry, profile, cosines)


def _applied(connection: Any, name: str) -> datetime | None:
    """When studio migration `name` was applied in this database (None: not recorded)."""
    applied = MigrationRecorder(connection).migration_qs.filter(app="studio", name=name)
    return applied.values_list("applied", flat=True).first()


def _was_cosine(
    set_by: tuple[datetime, str] | None,
    profile: Any,
    since: datetime | None,
    imports_since: datetime | None,
) -> bool:
    """Whether a value was stored as a cosine: set (by the entry `set_by`, else when the
    profile was made) before probabilities, or imported before imports refused cosines."""
    if since is None:
        return True
    at, action = set_by or (profile.created_at, "")
    if action == IMPORT_ACTION:
        return bool(at < max(since, imports_since or since))
    return bool(at < since)


def _fields(profile: Any) -> dict[str, Any]:
    return {"scorer_kind": profile.scorer_kind, **{k: getattr(profile, k) for k in FIELDS}}


def _thresholds(fields: Mapping[str, Any]) -> dict[str, float]:
    """Each embedding threshold in a profile's `fields`, by pack path, with its value: an
    embedding tier's (the scorer's, or a cascade tier's) floor and near-tie margin, and the
    policy's floor and (unless the default) margin under a standalone embedding scorer. The
    stored settings are the pack's scorer only while they are of the profile's kind."""
    scorer_kind = fields["scorer_kind"]
    scorer_settings: Any = fields.get("scorer_settings")
    floor, margin = fields.get("floor"), fields.get("near_tie_margin")
    active = isinstance(scorer_settings, Mapping) and scorer_settings.get("kind") == scorer_kind
    scorer = scorer_settings if active else {"kind": scorer_kind}
    located: list[tuple[str, Any]] = [("scorer", scorer)]
    tiers = scorer.get("tiers")
    if scorer_kind == "cascade" and isinstance(tiers, list | tuple):
        located = [(f"scorer.tiers[{i}]", tier) for i, tier in enumerate(tiers)]
    found = {
        f"{where}.{key}": float(tier[key])
        for where, tier in located
        if isinstance(tier, Mapping) and tier.get("kind") == "embedding"
        for key in ("floor", "near_tie_margin")
        if tier.get(key) is not None
    }
    if scorer_kind == "embedding" and floor is not None:
        found["policy.floor"] = float(floor)
    if scorer_kind == "embedding" and margin is not None and margin != DEFAULT_MARGIN:
        found["policy.near_tie_margin"] = float(margin)
    return found


def _snapshot_thresholds(snapshot: Any) -> dict[str, float] | None:
    """`_thresholds` of a profile's audit snapshot (None: not a profile snapshot)."""
    if not isinstance(snapshot, Mapping) or "scorer_kind" not in snapshot:
        return None
    return _thresholds(snapshot)


def _last_set(path: str, value: float, history: History) -> tuple[datetime, str] | None:
    """When, and by which action, the threshold at `path` last became `value`, from audit
    snapshots in time order; None when no entry shows it being set."""
    found = None
    for at, action, before, after in history:
        new, old = _snapshot_thresholds(after), _snapshot_thresholds(before)
        if new is not None and new.get(path) == value and (old is None or old.get(path) != value):
            found = (at, action)
    return found


def _clear(AuditEntry: Any, profile: Any, cosines: dict[str, float]) -> None:
    before = {k: getattr(profile, k) for k in FIELDS}
    after = _cleared(before, list(cosines))
    for field, value in after.items():
        setattr(profile, field, value)
    profile.revision += 1  # an open form holding the cosine is refused, not saved over this
    profile.draft_revision += 1  # the pack changed: per-revision caches are stale
    profile.save(update_fields=[*FIELDS, "revision", "draft_revision"])
    AuditEntry.objects.create(
        profile=profile,
        profile_slug=profile.slug,
        action=CLEARED_ACTION,
        object_type="profile",
        object_repr=profile.slug,
        before={k: v for k, v in before.items() if v != after[k]},
        after={
            **{k: v for k, v in after.items() if v != before[k]},
            NOTICE_KEY: _notice(cosines, profile.floor, profile.near_tie_margin),
        },
    )


def _cleared(fields: Mapping[str, Any], paths: list[str]) -> dict[str, Any]:
    """The profile's FIELDS with the thresholds at `paths` cleared (the policy's margin,
    which cannot be empty, back at its default)."""
    settings = copy.deepcopy(fields["scorer_settings"])
    policy = {"floor": fields["floor"], "near_tie_margin": fields["near_tie_margin"]}
    document = {"scorer": settings, "policy": policy}
    for path in paths:
        *parents, key = _tokens(path)
        parent: Any = document
        for token in parents:
            parent = parent[token]
        parent[key] = DEFAULT_MARGIN if path == "policy.near_tie_margin" else None
    return {**policy, "scorer_settings": settings}


def _notice(values: Mapping[str, float], floor: float | None, margin: float) -> str:
    """What was cleared, why, and what applies instead, in words a person reads on the
    profile's pages; `floor` and `margin` are the policy's once the values are cleared."""
    return " ".join(_sentence(path, value, floor, margin) for path, value in values.items())


def _sentence(path: str, value: float, floor: float | None, margin: float) -> str:
    kind = path if path.startswith("policy.") else path.rpartition(".")[2]
    where = " in the cascade" if ".tiers[" in path else ""
    unit = "margins" if kind.endswith("near_tie_margin") else "floors"
    done = (
        f"reset to the default {DEFAULT_MARGIN:g}"
        if kind == "policy.near_tie_margin"
        else f"cleared and {_applies(kind, floor, margin)}"
    )
    return (
        f"The {_WHAT[kind]}{where} {value:g} was set in the old unit (cosine similarity); "
        f"{unit} are now probabilities, so it was {done}."
    )


def _applies(kind: str, floor: float | None, margin: float) -> str:
    """What judges the scores once `kind` is cleared: a tier without its own threshold takes
    the policy's (routing_core.cascade.Tier.policy), and a policy without a floor leaves the
    scorer's fitted one (routing_core.policy.decide_scores)."""
    if kind == "near_tie_margin":
        return f"the policy's near-tie margin {margin:g} applies"
    if kind == "floor" and floor is not None:
        return f"the policy's floor {floor:g} applies"
    return _FITTED


def _tokens(path: str) -> list[str | int]:
    """`scorer.tiers[1].floor` → ["scorer", "tiers", 1, "floor"]."""
    return [int(t) if t.isdigit() else t for t in _TOKEN.findall(path)]


class Migration(migrations.Migration):
    dependencies = [
        ("studio", "0013_one_active_search_per_case"),
    ]

    operations = [
        migrations.RunPython(clear_cosine_thresholds, migrations.RunPython.noop),
    ]
