"""How much analysis one person, or one profile, may have on the job queue at once.

Suite runs, overlap checkups and replays can each hold a worker for minutes; without a bound
one viewer could queue dozens of them. A request that would start one more than its share
gets `QueueFull` (a 429 with `Retry-After`, on the API as a rate limit is), and a request
for the same work as a job still waiting in the queue gets that job back instead of a second.
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.conf import settings

from studio.models import ACTIVE, Job, OverlapCheck, Profile, ReplayRun, TestRun
from studio.shared.ratelimits import RateLimited

J = TypeVar("J", bound=Job)

# The kinds the limits count: what people start to look at, not what publishing needs.
LIMITED: tuple[type[Job], ...] = (TestRun, OverlapCheck, ReplayRun)
RETRY_AFTER_S = 30


class QueueFull(RateLimited):
    """One more analysis job than the person's or the profile's share: the reason in words."""

    def __init__(self, message: str) -> None:
        Exception.__init__(self, message)
        self.retry_after = RETRY_AFTER_S


def queued_twin(model: type[J], **same: Any) -> J | None:
    """A job of this kind with these fields still waiting in the queue, to reuse."""
    found: J | None = model._default_manager.filter(status="queued", **same).first()
    return found


def make_room(profile: Profile, user: Any) -> None:
    """Refuse one more analysis job past the person's or the profile's share.

    Raises:
        QueueFull: the person, or the profile, has its share unfinished already.
    """
    person_id = getattr(user, "pk", None)
    if (
        person_id is not None
        and _unfinished(started_by_id=person_id) >= settings.STUDIO_JOBS_PER_PERSON
    ):
        raise QueueFull(
            f"you have {settings.STUDIO_JOBS_PER_PERSON} runs, checkups or replays waiting or "
            "running: wait for one to end (or cancel one) before starting another"
        )
    if _unfinished(profile_id=profile.pk) >= settings.STUDIO_JOBS_PER_PROFILE:
        raise QueueFull(
            f"'{profile.slug}' has {settings.STUDIO_JOBS_PER_PROFILE} runs, checkups or replays "
            "waiting or running: wait for one to end before starting another"
        )


def _unfinished(**who: Any) -> int:
    return sum(model._default_manager.filter(status__in=ACTIVE, **who).count() for model in LIMITED)
