"""Replay stored events against the draft or a version, as a background job.

The report is routing_core.replay's, computed in chunks so that the job's row shows progress;
each group keeps at most `TURNS_KEPT` messages (its count stays exact) so that a replay of
100,000 turns stores a readable report, not a copy of the traffic.
"""

from __future__ import annotations

import logging
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
    """Route every stored turn again on the run's target and store the flip report."""
    run = ReplayRun.objects.select_related("profile").get(pk=pk)
    try:
        router = Router(pack_at(run.profile, run.target))
        report = summarise(_parts(router, run))
    except PackError as exc:
        finish(run, error=f"The draft is not a valid pack: {exc}")
        return
    except Exception as exc:  # a replay must end, whatever happened; the log has the trace
        log.exception("replay %s failed", pk)
        finish(run, error=f"The replay failed: {exc}")
        return
    stored = report.to_dict()
    for group in stored["groups"]:
        group["turns"] = group["turns"][:TURNS_KEPT]
    finish(run, done=run.total, report=stored)


def _parts(router: Router, run: ReplayRun) -> list[PartialReplay]:
    rows = (
        Event.objects.filter(profile_id=run.profile_id)
        .order_by("-received", "-pk")
        .values("message", "event")[: run.total]
    )
    write = progress_writer(ReplayRun, run.pk)
    parts, chunk = [], []
    for row in rows.iterator(chunk_size=CHUNK):
        chunk.append(row)
        if len(chunk) == CHUNK:
            parts.append(replay_turns(router, chunk))
            write(sum(p.replayed + p.skipped for p in parts), run.total)
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
