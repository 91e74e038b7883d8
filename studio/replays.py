"""Replay stored events against the draft or a version, as a background job.

The report is routing_core.replay's, computed in chunks so that the job's row shows progress;
each group keeps at most `TURNS_KEPT` messages (its count stays exact) so that a replay of
100,000 turns stores a readable report, not a copy of the traffic.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.utils import timezone

from routing_core import PackError, Router
from routing_core.replay import PartialReplay, replay_turns, summarise
from studio.models import JobStatus, Profile
from studio.publishing import pack_at
from studio.suites import STALE_AFTER, _signed_in, finish, launch, progress_writer
from studio.traffic_models import Event, ReplayRun

log = logging.getLogger(__name__)

MAX_TURNS = 100_000
CHUNK = 2000
TURNS_KEPT = 100


def start_replay(profile: Profile, target: str, *, user: Any) -> ReplayRun:
    """Create a replay of the profile's latest stored turns (up to 100,000) and start it."""
    total = min(MAX_TURNS, Event.objects.filter(profile=profile).count())
    run = ReplayRun.objects.create(
        profile=profile,
        target=target,
        started_by=_signed_in(user),
        total=total,
        draft_revision=profile.draft_revision,
    )
    launch(execute_replay, run.pk)
    run.refresh_from_db()
    return run


def execute_replay(pk: int) -> None:
    """Run a replay in this thread and store its outcome on the row (see `replay_work`)."""
    run = ReplayRun.objects.select_related("profile").get(pk=pk)
    try:
        fields = replay_work(run, progress_writer(ReplayRun, run.pk))
    except PackError as exc:
        finish(run, error=f"The draft is not a valid pack: {exc}")
        return
    except Exception as exc:  # a replay must end, whatever happened; the log has the trace
        log.exception("replay %s failed", pk)
        finish(run, error=f"The replay failed: {exc}")
        return
    finish(run, **fields)


def replay_work(run: ReplayRun, progress: Callable[[int, int], None]) -> dict[str, Any]:
    """The replay itself: route every stored turn again on the run's target; the fields to store.

    Shaped as a job's work (row and progress in, fields out) so that a task queue can run it.

    Raises:
        PackError: the target (the draft) is not a valid pack.
    """
    router = Router(pack_at(run.profile, run.target))
    stored = summarise(_parts(router, run, progress)).to_dict()
    for group in stored["groups"]:
        group["turns"] = group["turns"][:TURNS_KEPT]
    return {"done": run.total, "report": stored}


def _parts(
    router: Router, run: ReplayRun, progress: Callable[[int, int], None]
) -> list[PartialReplay]:
    rows = (
        Event.objects.filter(profile_id=run.profile_id)
        .order_by("-received", "-pk")
        .values("message", "event")[: run.total]
    )
    parts, chunk = [], []
    for row in rows.iterator(chunk_size=CHUNK):
        chunk.append(row)
        if len(chunk) == CHUNK:
            parts.append(replay_turns(router, chunk))
            progress(sum(p.replayed + p.skipped for p in parts), run.total)
            chunk = []
    parts.append(replay_turns(router, chunk))
    return parts


def interrupt_stale_replays(profile: Profile) -> int:
    """Mark replays silent for STALE_AFTER as interrupted (their process died), as suites does."""
    now = timezone.now()
    error = "Interrupted: the studio was probably restarted. Run the replay again."
    return ReplayRun.objects.filter(
        profile=profile, status=JobStatus.RUNNING, updated_at__lt=now - STALE_AFTER
    ).update(status=JobStatus.INTERRUPTED, finished_at=now, error=error)
