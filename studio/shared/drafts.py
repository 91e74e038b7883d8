"""The draft's router, cached per profile revision: what the playground, lint, suggestions and
the review queue route with.

The router never waits for training (studio/jobs/training.py): it scores the draft with the model
of exactly its route texts when that is ready, else with the newest model that finished while
the new one trains on the queue (`Compiled.scoring` says which, for the page to say so).

The cache is per process and keyed by what the database says the draft is (`draft_revision`,
bumped by every edit), never by in-memory state: several studio processes behind one database
each notice an edit on their next request. The key also holds the profile's `created_at`, so a
new profile that reuses a deleted one's primary key never gets its router.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from routing_core import Pack, PackError, Router
from routing_core.scorers.lexical import FITS_THRESHOLDS_FROM
from studio.jobs import Scoring, scoring, training_note
from studio.models import ACTIVE, Profile, TrainedModel

MAX_CACHED_PROFILES = 16

_Key = tuple[int, str, int]
_lock = threading.Lock()


class ScorerUnavailable(PackError):
    """The draft is a valid pack, but this process cannot build its scorer (a missing extra)."""


class ModelPending(Exception):
    """The model of exactly this draft is still training (its row has the progress)."""

    def __init__(self, compiled: Compiled) -> None:
        super().__init__("the model of this draft is still training")
        self.compiled = compiled


@dataclass(frozen=True)
class Compiled:
    """The draft's router (None: no model to score with yet) and where its scores come from."""

    router: Router | None
    scoring: Scoring

    @property
    def training(self) -> TrainedModel | None:
        return self.scoring.pending


_cache: OrderedDict[int, tuple[_Key, Compiled]] = OrderedDict()
_building: dict[int, threading.Lock] = {}


def playground_router(profile: Profile) -> Compiled:
    """The router for the profile's draft, at once: the exact model's, else an older one's.

    Raises:
        PackError: the draft is not a valid pack.
        ScorerUnavailable: it is, but its scorer needs an optional extra this studio lacks.
    """
    key = (profile.pk, profile.created_at.isoformat(), profile.draft_revision)
    compiled = _fresh(key)
    if compiled is not None:
        return compiled
    with _lock:
        building = _building.setdefault(profile.pk, threading.Lock())
    with building:  # one build per profile at a time: every keystroke would start its own
        compiled = _fresh(key)
        if compiled is None:
            now = scoring(profile)
            compiled = Compiled(_router(now.pack) if now.pack is not None else None, now)
            with _lock:
                _cache[profile.pk] = (key, compiled)
                _cache.move_to_end(profile.pk)
                while len(_cache) > MAX_CACHED_PROFILES:
                    _cache.popitem(last=False)
    return compiled


def compiled_router(profile: Profile) -> Router:
    """The router with the model of exactly the draft (lint, tuning: figures must be exact).

    Raises:
        PackError: the draft is not a valid pack.
        ModelPending: that model is still training (it has been queued).
    """
    compiled = playground_router(profile)
    if compiled.router is None or not compiled.scoring.exact:
        raise ModelPending(compiled)
    return compiled.router


@dataclass(frozen=True, slots=True)
class ScorerDefaults:
    """What the draft's scorer brings when the policy leaves it to the scorer.

    The floor applies when the policy sets none; the lexical scorer fits it and a margin on
    held-out examples once the profile is big enough to calibrate (routing_core's
    `fit_floor`, `fit_margin`). The margin is only suggested: the profile's own applies.
    """

    floor: float
    is_fitted: bool
    margin: float | None
    training: bool = False  # the draft's model is still learning: nothing fitted to show yet
    # How many route texts a profile needs for its floor and margin to be fitted (the
    # library's, for the page to say).
    fits_from: ClassVar[int] = FITS_THRESHOLDS_FROM
    # The model compares what messages mean as well as their words (routing_core's semantic
    # view, learned where the words alone missed some held-out examples).
    learns_meaning: bool = False
    # How many route texts the profile had when the floor and margin were fitted (None: not
    # known, a model from before routing_core recorded it, or nothing fitted).
    fitted_on: int | None = None


def scorer_defaults(profile: Profile) -> ScorerDefaults | None:
    """The draft's scorer floor and fitted margin; None when the draft is invalid.

    While the draft's model trains (after an edit or an import) the fitted values are not
    known yet: the page says so instead of waiting, or failing, on the training.
    """
    try:
        info = compiled_router(profile).scorer.info
    except PackError:
        return None
    except ModelPending:
        return ScorerDefaults(0.0, False, None, training=True)
    margin = info.details.get("fitted_margin")
    return ScorerDefaults(
        info.floor or 0.0,
        info.details.get("fitted_floor") is not None,
        margin if isinstance(margin, float) else None,
        learns_meaning=info.details.get("semantic_weight") is not None,
        fitted_on=_count_or_none(info.details.get("fitted_on")),
    )


def _count_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _router(pack: Pack) -> Router:
    try:
        return Router(pack)
    except PackError as exc:  # load_pack accepted the pack: only its scorer can fail here
        raise ScorerUnavailable(exc.errors) from exc


def _fresh(key: _Key) -> Compiled | None:
    """The cached router for this revision, unless the model it waited for has finished since."""
    with _lock:
        hit = _cache.get(key[0])
        if hit is None or hit[0] != key:
            return None
        _cache.move_to_end(key[0])
    compiled = hit[1]
    pending = compiled.scoring.pending
    if pending is None:
        return compiled
    now = TrainedModel.objects.defer("source_json", "pack_json").filter(pk=pending.pk).first()
    if now is None or now.status not in ACTIVE:
        return None  # finished (or failed, or pruned): build again
    return replace(compiled, scoring=replace(compiled.scoring, pending=now))


def clear_cache() -> None:
    """Forget every compiled router (tests and benchmarks measure a cold start with it)."""
    with _lock:
        _cache.clear()


def model_note(compiled: Compiled | None) -> dict[str, Any] | None:
    """What the playground says about its model: None when it scores with the exact one."""
    if compiled is None or compiled.scoring.exact:
        return None
    pending = compiled.training
    source = compiled.scoring.source
    return {
        "text": training_note(pending, source),
        "percent": pending.percent if pending else 0,
        "scored": compiled.router is not None,
    }
