"""Replay stored events against the draft or a version, as a job on the task queue.

The report is routing_core.replay's, computed in chunks so that the job's row shows progress;
each group keeps at most `TURNS_KEPT` messages (its count stays exact) so that a replay of
100,000 turns stores a readable report, not a copy of the traffic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from routing_core import Pack, Router, load_pack
from routing_core.replay import PartialReplay, replay_turns, summarise
from studio.jobs import JobFailed, job_pack, make_room, queued_twin, start_job
from studio.models import Event, Profile, ReplayRun
from studio.shared.audit import signed_in

MAX_TURNS = 100_000
CHUNK = 2000
TURNS_KEPT = 100


def start_replay(profile: Profile, target: str, *, user: Any) -> ReplayRun:
    """Queue a replay of the profile's latest stored turns (up to 100,000), or reuse the same
    replay still waiting in the queue.

    Raises:
        QueueFull: over the person's or the profile's share of the queue.
    """
    same = {"profile": profile, "target": target, "draft_revision": profile.draft_revision}
    twin = queued_twin(ReplayRun, **same)
    if twin is not None:
        return twin
    make_room(profile, user)
    total = min(MAX_TURNS, Event.objects.filter(profile=profile).count())
    run = ReplayRun.objects.create(
        profile=profile,
        target=target,
        started_by=signed_in(user),
        total=total,
        draft_revision=profile.draft_revision,
    )
    return start_job(run)


def execute_replay(run: ReplayRun, progress: Callable[[int, int], None]) -> dict[str, Any]:
    """The replay's work (on a worker): route every stored turn again; the fields to store."""
    router = Router(_target_pack(run))
    stored = summarise(_parts(router, run, progress)).to_dict()
    for group in stored["groups"]:
        group["turns"] = group["turns"][:TURNS_KEPT]
    return {"done": run.total, "report": stored}


def _target_pack(run: ReplayRun) -> Pack:
    profile = Profile.objects.get(pk=run.profile_id)
    if run.target != "draft":
        version = profile.versions.filter(number=int(run.target)).first()
        if version is None:
            raise JobFailed(f"Version {run.target} does not exist.")
        return load_pack(version.pack_json)
    return job_pack(profile)  # the draft with its own model (trained here if needed)


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
