"""Remove the message texts already stored when a profile stops keeping text, on the job queue.

Turning "keep message text" off stops new texts at once (studio.agents.events drops them on
ingest); the texts stored before would otherwise stay until retention deletes their turns.
Each turn loses its message and the words of it its evidence quotes, as ingest would have
stored it (routing_core's `scrub_evidence`); its route, verdict and scores stay.
"""

from __future__ import annotations

from typing import Any

from routing_core import scrub_evidence
from studio.agents import traffic_settings
from studio.jobs import JobFailed, Reporter, start_job
from studio.models import ACTIVE, Event, Profile, ScrubRun
from studio.shared.audit import audit, signed_in

CHUNK = 2000


def has_stored_texts(profile: Profile) -> bool:
    """Whether any stored turn of the profile still holds its message text."""
    return Event.objects.filter(profile=profile, message__isnull=False).exists()


def start_scrub(profile: Profile, *, user: Any) -> ScrubRun:
    """Queue the removal of the profile's stored texts (or return the one already under way)."""
    running = ScrubRun.objects.filter(profile=profile, status__in=ACTIVE).first()
    if running is not None:
        return running
    total = Event.objects.filter(profile=profile, message__isnull=False).count()
    run = ScrubRun.objects.create(profile=profile, started_by=signed_in(user), total=total)
    audit(user, profile, "traffic.scrub", profile, None, {"texts": total})
    return start_job(run)


def execute_scrub(run: ScrubRun, progress: Reporter) -> dict[str, Any]:
    """The job's work: empty the texts chunk by chunk, unless text is kept again meanwhile."""
    profile = Profile.objects.get(pk=run.profile_id)
    if traffic_settings(profile).keep_message_text:
        raise JobFailed("Message text is kept again, so the stored texts were left as they are.")
    done = 0
    while chunk := list(_with_text(profile)[:CHUNK]):
        for event in chunk:
            event.message = None
            event.event = scrub_evidence(event.event, None)
        Event.objects.bulk_update(chunk, ["message", "event"])
        done += len(chunk)
        progress(min(done, run.total), max(run.total, done))
    return {"done": done, "total": max(run.total, done)}


def _with_text(profile: Profile) -> Any:
    return Event.objects.filter(profile=profile, message__isnull=False).order_by("pk")
