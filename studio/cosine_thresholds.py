"""Embedding thresholds a profile stored while an embedding tier's scores were cosines.

Since pack format 1.2 an embedding tier's floor and near-tie margin are probabilities, and
`load_pack` refuses an older pack declaring one (`routing_core.pack.embedding_threshold_paths`).
A profile saved before then holds the old cosine, which the studio's packs (always of the
current minor) would silently read as a probability. Migration 0014 clears such values, with
an entry in the profile's history saying what was cleared and why (docs/decisions.md, "A
declared embedding floor's meaning"). No model is imported here: the migration uses these
functions with its historical models.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from routing_core.pack import embedding_threshold_paths

# The audit action of the migration's entry; its `after` holds NOTICE_KEY, the sentence.
CLEARED_ACTION = "profile.cosine_thresholds_cleared"
NOTICE_KEY = "notice"
# The first studio migration that shipped only with the calibrated (probability) tiers: in a
# database, the time it was applied is when the studio began reading probabilities. A value
# set before it was a cosine; one set after, a probability.
PROBABILITIES_SINCE_MIGRATION = "0011_import_jobs"

_WHAT = {
    "policy.floor": "embedding floor",
    "floor": "embedding tier's own floor",
    "near_tie_margin": "embedding tier's own near-tie margin",
}
_APPLIES = {
    "policy.floor": "the pack's fitted floor applies",
    "floor": "the policy's floor applies",
    "near_tie_margin": "the policy's near-tie margin applies",
}
_TOKEN = re.compile(r"[^.\[\]]+")


def embedding_thresholds(
    scorer_kind: str, floor: float | None, scorer_settings: Any
) -> dict[str, float]:
    """Each embedding threshold the profile's pack declares, by pack path, with its value.

    The pack's scorer is the stored settings only while they are of the profile's kind
    (as `Profile.active_scorer_settings`), so only those are looked at.
    """
    active = isinstance(scorer_settings, Mapping) and scorer_settings.get("kind") == scorer_kind
    scorer = scorer_settings if active else {"kind": scorer_kind}
    document = {"scorer": scorer, "policy": {"floor": floor}}
    return {path: _get(document, path) for path in embedding_threshold_paths(document)}


def snapshot_thresholds(snapshot: Any) -> dict[str, float] | None:
    """`embedding_thresholds` of a profile's audit snapshot (None: not a profile snapshot)."""
    if not isinstance(snapshot, Mapping) or "scorer_kind" not in snapshot:
        return None
    return embedding_thresholds(
        snapshot["scorer_kind"], snapshot.get("floor"), snapshot.get("scorer_settings")
    )


def last_set(path: str, value: float, history: list[tuple[datetime, Any, Any]]) -> datetime | None:
    """When the threshold at `path` last became `value`, from (at, before, after) audit
    snapshots in time order; None when no entry shows it being set."""
    found = None
    for at, before, after in history:
        new, old = snapshot_thresholds(after), snapshot_thresholds(before)
        if new is not None and new.get(path) == value and (old is None or old.get(path) != value):
            found = at
    return found


def cleared(
    floor: float | None, scorer_settings: Any, paths: list[str]
) -> tuple[float | None, Any]:
    """The profile's floor and scorer settings with the thresholds at `paths` cleared."""
    settings = copy.deepcopy(scorer_settings)
    document = {"scorer": settings, "policy": {"floor": floor}}
    for path in paths:
        *parents, key = _tokens(path)
        parent: Any = document
        for token in parents:
            parent = parent[token]
        parent[key] = None
    return document["policy"]["floor"], settings


def notice(values: Mapping[str, float]) -> str:
    """What was cleared and why, in words a person reads on the profile's pages."""
    return " ".join(_sentence(path, value) for path, value in values.items())


def _sentence(path: str, value: float) -> str:
    kind = path if path == "policy.floor" else path.rpartition(".")[2]
    where = " in the cascade" if ".tiers[" in path else ""
    unit = "floors" if kind != "near_tie_margin" else "margins"
    return (
        f"The {_WHAT[kind]}{where} {value:g} was a cosine; {unit} are now probabilities, "
        f"so it was cleared and {_APPLIES[kind]}."
    )


def _get(document: Any, path: str) -> float:
    value: Any = document
    for token in _tokens(path):
        value = value[token]
    return float(value)


def _tokens(path: str) -> list[str | int]:
    """`scorer.tiers[1].floor` → ["scorer", "tiers", 1, "floor"]."""
    return [int(t) if t.isdigit() else t for t in _TOKEN.findall(path)]
