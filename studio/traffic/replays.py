"""Replay stored events against the draft or a version, as a job on the task queue.

The report is routing_core.replay's counts, computed in chunks so that the job's row shows
progress; the changed turns are `ReplayChange` rows naming their event (never a copy of its
text), read a page at a time by the replay page, so that a replay of 100,000 long turns stores
and shows what changed, not the traffic (docs/decisions.md, "Paged replay reports").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import batched
from typing import Any

from routing_core import Pack, Router, load_pack
from routing_core.replay import ReplayTally, TurnChange, replay_turns
from studio.jobs import JobFailed, job_pack, make_room, queued_twin, start_job
from studio.models import Event, Profile, ReplayChange, ReplayRun
from studio.shared.audit import signed_in

MAX_TURNS = 100_000
CHUNK = 2000
PAGE = 50  # changed turns a replay page shows


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
    total = Event.objects.filter(profile=profile)[:MAX_TURNS].count()  # counts at most that
    run = ReplayRun.objects.create(
        profile=profile,
        target=target,
        started_by=signed_in(user),
        total=total,
        draft_revision=profile.draft_revision,
    )
    return start_job(run)


def execute_replay(run: ReplayRun, progress: Callable[[int, int], None]) -> dict[str, Any]:
    """The replay's work (on a worker): route every stored turn again, a chunk at a time.

    Each chunk's changed turns are stored as rows naming their event and the chunk is
    dropped, so memory holds one chunk whatever the traffic; the stored report keeps the
    counts (routing_core.replay.ReplayTally), the page reads the rows a page at a time."""
    router = Router(_target_pack(run))
    ReplayChange.objects.filter(run=run).delete()  # a replay run again after its worker died
    tally = ReplayTally()
    rows = (
        Event.objects.filter(profile_id=run.profile_id)
        .order_by("-received", "-pk")
        .values("pk", "message", "event")[: run.total]
    )
    for chunk in batched(rows.iterator(chunk_size=CHUNK), CHUNK):
        part = replay_turns(router, chunk)
        ReplayChange.objects.bulk_create(_change_rows(run, chunk, part.changes))
        tally.add(part)
        progress(tally.replayed + tally.skipped, run.total)
        del chunk, part  # before the next chunk is read: one chunk in memory, not two
    return {"done": run.total, "report": tally.to_dict()}


def _change_rows(
    run: ReplayRun, chunk: Sequence[Mapping[str, Any]], changes: Iterable[TurnChange]
) -> list[ReplayChange]:
    return [
        ReplayChange(
            run=run,
            event_id=chunk[c.record]["pk"],
            old=c.old[:64],
            new=c.new[:64],
            incumbent=(c.incumbent or "")[:64],
            old_verdict=c.old_verdict[:16],
            new_verdict=c.new_verdict[:16],
            old_tools=list(c.old_tools),
            new_tools=list(c.new_tools),
            changed=", ".join(c.changed),
        )
        for c in changes
    ]


def _target_pack(run: ReplayRun) -> Pack:
    profile = Profile.objects.get(pk=run.profile_id)
    if run.target != "draft":
        version = profile.versions.filter(number=int(run.target)).first()
        if version is None:
            raise JobFailed(f"Version {run.target} does not exist.")
        return load_pack(version.pack_json)
    return job_pack(profile)  # the draft with its own model (trained here if needed)


def changes_page(
    run: ReplayRun, old: str, new: str, after: int = 0
) -> tuple[list[dict[str, Any]], int | None]:
    """One page of a group's changed turns (by the group's index, after the row `after`),
    each with its message as stored now; and the row to page after next, None at the end."""
    rows = list(
        ReplayChange.objects.filter(run=run, old=old, new=new, pk__gt=after).order_by("pk")[
            : PAGE + 1
        ]
    )
    more = rows[PAGE - 1].pk if len(rows) > PAGE else None
    rows = rows[:PAGE]
    texts = dict(
        Event.objects.filter(pk__in=[r.event_id for r in rows]).values_list("pk", "message")
    )
    turns = [
        {
            "message": texts.get(r.event_id),
            "gone": r.event_id not in texts,
            "changed": r.changed,
            "incumbent": r.incumbent,
        }
        for r in rows
    ]
    return turns, more
