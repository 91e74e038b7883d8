"""A trained model per profile: learned on the queue, used at once by whoever needs scores.

Only the route texts (names, descriptions, examples, keywords) are learned from, so a model is
keyed by their fingerprint (`routing_core.scorers.stored.fingerprint`): rule, tool, policy and
lexicon edits keep the model; an example edit queues a new one. Meanwhile the playground scores
the new draft with the newest model that finished (`scoring`), and says so; work that must use
the model of exactly its draft (runs, checkups, publishing) runs on a worker and trains there
when the model is not ready yet (`exact_pack`).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from routing_core import LexicalScorerSettings, Pack, PackError, dump_pack, load_pack
from routing_core.scorers import route_texts, stored
from studio.jobs import queue
from studio.jobs.kinds import JobFailed
from studio.jobs.progress import PER_MILLE, Reporter
from studio.jobs.sqlite import retry_locked
from studio.models import ACTIVE, JobStatus, Profile, TrainedModel
from studio.shared.packs import build_pack

log = logging.getLogger(__name__)

KEEP_MODELS = 3  # finished models kept per profile (versions keep their own copy)


@dataclass(frozen=True)
class Scoring:
    """What the draft can be scored with right now, and where that comes from."""

    pack: Pack | None  # the draft with a model: exact or older; None: no model to score with yet
    exact: bool  # the model was learned from exactly this draft's route texts
    source: TrainedModel | None  # the finished model the scores come from (None: nothing learned)
    pending: TrainedModel | None  # the model training for this draft, when not exact


def needs_model(pack: Pack) -> bool:
    """Only the lexical scorer learns from the routes (the others load or call a model)."""
    return isinstance(pack.scorer, LexicalScorerSettings)


def texts_fingerprint(pack: Pack) -> str:
    return stored.fingerprint(route_texts(pack))


def scoring(profile: Profile) -> Scoring:
    """The draft's scoring without waiting: exact, an older model's, or none yet (queued).

    Raises:
        PackError: the draft is not a valid pack.
    """
    pack = build_pack(profile)
    if not needs_model(pack):
        return Scoring(pack, True, None, None)
    row = request_model(profile, pack)
    if row.status == JobStatus.DONE:
        return Scoring(with_trained(pack, row), True, row, None)
    last = latest_model(profile)
    if last is not None:
        stale = stale_pack(pack, trained_pack(last))
        if stale is not None:
            return Scoring(stale, False, last, row)
    return Scoring(None, False, None, row)


def request_model(profile: Profile, pack: Pack) -> TrainedModel:
    """The model row for the draft's route texts: finished, training, or queued now."""
    fingerprint = texts_fingerprint(pack)
    row = profile.trained_models.filter(fingerprint=fingerprint).first()
    if row is not None and (row.status == JobStatus.DONE or row.status in ACTIVE):
        return row
    if row is None:
        try:
            with transaction.atomic():
                row = TrainedModel.objects.create(
                    profile=profile,
                    fingerprint=fingerprint,
                    source_json=dump_pack(pack),
                    draft_revision=profile.draft_revision,
                    total=PER_MILLE,
                )
        except IntegrityError:  # another request queued the same texts a moment ago
            return profile.trained_models.get(fingerprint=fingerprint)
        _prune(profile)
    else:  # it failed or was cancelled before: try again
        retry_locked(
            lambda: TrainedModel.objects.filter(pk=row.pk).update(
                status=JobStatus.QUEUED,
                done=0,
                error="",
                cancel_requested=False,
                started_at=timezone.now(),
                finished_at=None,
                attempts=0,
            )
        )
    return queue.start(row)


def request_model_safely(profile_pk: int) -> None:
    """Queue the model for a profile's new draft after an edit (a broken draft queues nothing)."""
    try:
        profile = Profile.objects.get(pk=profile_pk)
        request_model(profile, build_pack(profile))
    except Exception as exc:  # the edit is saved; the playground will say what is wrong
        log.info("no model queued for profile %s: %s", profile_pk, exc)


def latest_model(profile: Profile) -> TrainedModel | None:
    return (
        profile.trained_models.filter(status=JobStatus.DONE)
        .defer("source_json")
        .order_by("-finished_at", "-pk")
        .first()
    )


def exact_pack(profile: Profile, progress: Reporter | None = None) -> Pack:
    """The draft with the model of exactly its route texts; trains here when none is ready.

    For workers only: training can take minutes on a large profile.

    Raises:
        PackError: the draft is not a valid pack.
    """
    pack = build_pack(profile)
    if not needs_model(pack):
        return pack
    fingerprint = texts_fingerprint(pack)
    row = profile.trained_models.filter(fingerprint=fingerprint, status=JobStatus.DONE).first()
    if row is not None:
        return with_trained(pack, row)
    last = latest_model(profile)
    trained = learn(
        pack,
        previous=trained_pack(last) if last else None,
        progress=progress.fraction if progress else None,
    )
    _keep(profile, fingerprint, pack, trained)
    return trained


def job_pack(profile: Profile) -> Pack:
    """`exact_pack` for a job's work: an invalid draft fails the job, saying why."""
    try:
        return exact_pack(profile, None)
    except PackError as exc:
        raise JobFailed(f"The draft is not a valid pack: {exc}") from exc


def model_for(profile: Profile, draft: Pack, trained: Pack | None = None) -> Pack:
    """The draft with the model of exactly its route texts: `trained`'s, a stored one, or learned."""
    if not needs_model(draft):
        return draft
    fingerprint = texts_fingerprint(draft)
    if trained is not None and needs_model(trained) and texts_fingerprint(trained) == fingerprint:
        model = trained.scorer.model  # type: ignore[union-attr]
        return draft.model_copy(update={"scorer": draft.scorer.model_copy(update={"model": model})})
    row = profile.trained_models.filter(fingerprint=fingerprint, status=JobStatus.DONE).first()
    if row is not None:
        return with_trained(draft, row)
    return learn(draft, previous=None, progress=None)


def train(job: TrainedModel, progress: Reporter) -> dict[str, Any]:
    """The training job's work: learn the queued draft's model, warm-started from the last one."""
    pack = load_pack(job.source_json)
    last = latest_model(job.profile)
    trained = learn(pack, previous=trained_pack(last) if last else None, progress=progress.fraction)
    return {"pack_json": dump_pack(trained), "done": PER_MILLE, "total": PER_MILLE}


def learn(pack: Pack, *, previous: Pack | None, progress: Callable[[float], None] | None) -> Pack:
    """routing_core's `with_model`, warm-started from the profile's last model, with progress.

    Whatever `progress` raises aborts the learning: that is how a cancel stops a training job.
    """
    return stored.with_model(pack, previous=previous, progress=progress)


def with_trained(pack: Pack, row: TrainedModel) -> Pack:
    """The draft with the row's model (learned from the same route texts)."""
    model = trained_pack(row).scorer.model  # type: ignore[union-attr]
    return pack.model_copy(update={"scorer": pack.scorer.model_copy(update={"model": model})})


def stale_pack(draft: Pack, trained: Pack) -> Pack | None:
    """The draft scored with an older model, no retraining; None when that model cannot serve.

    routing_core's `with_stale_model` carries the older weights over by route name (a new
    route gets a plain naive-Bayes column). When it cannot carry them it hands the draft back
    without a model, whose Router would learn at load: that must not happen in a request.
    """
    result = stored.with_stale_model(draft, trained)
    return result if getattr(result.scorer, "model", None) is not None else None


_parsed: OrderedDict[int, Pack] = OrderedDict()
_parsed_lock = threading.Lock()


def trained_pack(row: TrainedModel) -> Pack:
    """The row's trained pack, parsed once per process (a CLINC-size model is megabytes)."""
    with _parsed_lock:
        hit = _parsed.get(row.pk)
        if hit is not None:
            _parsed.move_to_end(row.pk)
            return hit
    if not row.pack_json:
        row.refresh_from_db(fields=["pack_json"])
    pack = load_pack(row.pack_json)
    with _parsed_lock:
        _parsed[row.pk] = pack
        while len(_parsed) > 8:
            _parsed.popitem(last=False)
    return pack


def _keep(profile: Profile, fingerprint: str, pack: Pack, trained: Pack) -> None:
    """Store a model trained outside a training job, so the playground and others reuse it."""
    now = timezone.now()
    fields = {
        "status": JobStatus.DONE,
        "source_json": dump_pack(pack),
        "pack_json": dump_pack(trained),
        "draft_revision": profile.draft_revision,
        "done": PER_MILLE,
        "total": PER_MILLE,
        "finished_at": now,  # a training job queued for the same texts now finds it done
    }
    try:
        retry_locked(
            lambda: TrainedModel.objects.update_or_create(
                profile=profile, fingerprint=fingerprint, defaults=fields
            )
        )
    except IntegrityError:
        log.info("model of profile %s stored by another worker meanwhile", profile.pk)


def _prune(profile: Profile) -> None:
    """Forget all but the newest finished models of the profile (each can be megabytes)."""
    keep = list(
        profile.trained_models.filter(status=JobStatus.DONE)
        .order_by("-finished_at", "-pk")
        .values_list("pk", flat=True)[:KEEP_MODELS]
    )
    profile.trained_models.exclude(pk__in=keep).exclude(status__in=ACTIVE).delete()
