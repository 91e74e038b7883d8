"""Decision events from agents: validate a batch, store it in one bulk insert, expire old ones.

The event itself is routing_core's `route-decision/1` (docs/event-schema.md); the few columns the
Traffic page charts and the review queue filters on are copied out of it on the way in. Message
text is redacted again here (an agent may have turned its redactor off) and dropped altogether
when the profile keeps none; so are the words of it that the event's evidence quotes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from django.db import IntegrityError, transaction
from django.utils import timezone
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from routing_core import redact, scrub_evidence
from studio.agents.reasks import mark_reasks
from studio.models import (
    Event,
    EventBatch,
    Profile,
    ReadToken,
    Rollout,
    TokenScope,
    TrafficSettings,
)
from studio.publishing import queue_checks
from studio.shared import languages
from studio.shared.schemas import clean_text
from studio.traffic import count_turns, forget_before

MAX_BATCH = 500
MAX_MESSAGE = 4000
# An event is a few levels deep (docs/event-schema.md); far deeper is no event, and past a few
# hundred levels the JSON encoder gives up on storing it.
MAX_DEPTH = 32
MAX_KEY = 128  # a batch id's length
# How far an agent's clock (`at`) may stray from the studio's: behind by the longest retention
# (older turns would be deleted at once), ahead by a day of clock skew.
MAX_AGE = timedelta(days=366)
MAX_AHEAD = timedelta(days=1)
Name = Annotated[str, Field(max_length=64)]


class DecisionIn(BaseModel):
    """The parts of a decision event the studio reads; every other key is kept as sent."""

    model_config = ConfigDict(extra="allow")

    schema_: Literal["route-decision/1"] = Field(alias="schema")
    route: Name | None = None
    verdict: Literal["move", "stay", "menu", "unmatched"]
    by: Literal["rule", "scorer", "continuity", "menu", "decider", "default", "none"]
    from_route: Name | None = None
    decisive: bool = True
    pack: dict[str, Any] = Field(default_factory=dict)
    ranked: list[dict[str, Any]] = Field(default_factory=list, max_length=2000)
    runner_up: dict[str, Any] | None = None
    tiers: list[dict[str, Any]] = Field(default_factory=list, max_length=8)


class TurnShadowIn(BaseModel):
    """The candidate's decision on a shadow turn."""

    route: Name | None = None
    verdict: Literal["move", "stay", "menu", "unmatched"]


class TurnRolloutIn(BaseModel):
    """Which pack of a rollout served the turn (`routing_core.rollout.rollout_record`)."""

    model_config = ConfigDict(extra="ignore")  # keys are only ever added

    id: Annotated[int, Field(ge=1, le=2**62)]
    mode: Literal["shadow", "canary"]
    arm: Literal["live", "candidate"]
    shadow: TurnShadowIn | None = None


class EventIn(BaseModel):
    """One turn as `routing_core.reporting.EventReporter` sends it."""

    model_config = ConfigDict(extra="forbid")

    at: datetime | None = None
    conversation: Annotated[str, Field(max_length=128)] | None = None
    # Strict: `true` is not turn 1.
    turn: Annotated[int, Field(ge=0, le=1_000_000, strict=True)] | None = None
    message: Annotated[str, Field(max_length=MAX_MESSAGE)] | None = None
    event: DecisionIn
    rollout: TurnRolloutIn | None = None

    @model_validator(mode="before")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        """Refuse what no database stores: a NUL, a lone surrogate, nesting past MAX_DEPTH."""
        check_storable(value)
        return value

    @field_validator("at")
    @classmethod
    def _near_now(cls, at: datetime | None) -> datetime | None:
        return None if at is None else near_now(at)


def check_storable(value: Any) -> None:
    """Walk a JSON value (without recursion, whatever its depth) for what cannot be stored.

    Raises:
        ValueError: a string or key with a NUL or a lone surrogate, or nesting past MAX_DEPTH.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"the event is nested more than {MAX_DEPTH} levels deep")
        if isinstance(item, str):
            clean_text(item)
        elif isinstance(item, dict):
            for key, child in item.items():
                clean_text(str(key))
                stack.append((child, depth + 1))
        elif isinstance(item, list | tuple):
            stack.extend((child, depth + 1) for child in item)


def near_now(at: datetime) -> datetime:
    """`at` when it is within the window around the studio's clock (naive `at` is UTC).

    Raises:
        ValueError: outside the window, said with the studio's clock.
    """
    at = at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    now = timezone.now()
    try:
        inside = now - MAX_AGE <= at <= now + MAX_AHEAD
    except OverflowError:  # a date at the calendar's edge, in a far time zone
        inside = False
    if not inside:
        raise ValueError(
            f"must be at most {MAX_AGE.days} days before and 1 day after the studio's clock "
            f"(it reads {now:%Y-%m-%d %H:%M} UTC)"
        )
    return at


class EventBatchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # The same batch sent again (a retry after a lost answer) is stored once: the `batch` id,
    # or the request's `Idempotency-Key` header.
    batch: Annotated[str, Field(min_length=1, max_length=MAX_KEY, pattern=r"^[ -~]+$")] | None = (
        None
    )
    events: list[EventIn] = Field(max_length=MAX_BATCH)
    # How many turns the agent's reporter dropped so far (its queue was full): shown on Traffic.
    dropped: Annotated[int, Field(ge=0, le=2**62)] | None = None


def traffic_settings(profile: Profile) -> TrafficSettings:
    """The profile's settings, the defaults when it never changed them."""
    found = TrafficSettings.objects.filter(profile=profile).first()
    return found or TrafficSettings(profile=profile)


def ingest(profile: Profile, batch: EventBatchIn, token: ReadToken | None = None) -> int:
    """Store a validated batch in one INSERT; returns how many events were stored.

    A batch whose id was stored before is not stored again: the answer is the first one's
    count, so that a retried send reads as the success it was. With the sending `token`, also
    records the reporter's dropped count when it changed.
    """
    keep_text = traffic_settings(profile).keep_message_text
    now = timezone.now()
    rollouts = _rollouts_of(profile, batch)
    rows = [_row(profile, e, now, keep_text, rollouts) for e in batch.events]
    try:
        with transaction.atomic():
            if batch.batch is not None:  # the key's unique row: of two racing sends, one stores
                EventBatch.objects.create(
                    profile=profile, key=batch.batch, accepted=len(rows), received=now
                )
            Event.objects.bulk_create(rows, batch_size=MAX_BATCH)
            count_turns(rows)  # the Traffic page's hourly counts, in the same transaction
    except IntegrityError:
        seen = EventBatch.objects.filter(profile=profile, key=batch.batch).first()
        if seen is None:
            raise
        return seen.accepted
    mark_reasks(profile, rows)
    if rollouts:
        queue_checks(rollouts)
    if token is not None and batch.dropped is not None and batch.dropped != token.events_dropped:
        ReadToken.objects.filter(pk=token.pk).update(events_dropped=batch.dropped)
    return len(rows)


def dropped_by_agents(profile: Profile) -> int:
    """Turns the profile's active event tokens' reporters say they dropped (queue full)."""
    counts = profile.read_tokens.filter(scope=TokenScope.EVENTS, revoked_at=None)
    return sum(counts.values_list("events_dropped", flat=True))


def _rollouts_of(profile: Profile, batch: EventBatchIn) -> set[int]:
    """The batch's rollout ids that are this profile's (another's id is dropped, not trusted)."""
    named = {e.rollout.id for e in batch.events if e.rollout is not None}
    if not named:
        return set()
    return set(Rollout.objects.filter(profile=profile, pk__in=named).values_list("pk", flat=True))


def _row(
    profile: Profile, item: EventIn, now: datetime, keep_text: bool, rollouts: set[int]
) -> Event:
    d = item.event
    trial = item.rollout if item.rollout is not None and item.rollout.id in rollouts else None
    shadow = trial.shadow if trial is not None else None
    top = d.ranked[0].get("score") if d.ranked else None
    gap = d.runner_up.get("gap") if d.runner_up else None
    version = d.pack.get("version")
    message = redact(item.message) if keep_text and item.message is not None else None
    return Event(
        profile=profile,
        received=now,
        at=item.at,
        conversation=item.conversation or "",
        turn=item.turn,
        pack_version=version if isinstance(version, int) and 0 <= version < 2**31 else None,
        from_route=d.from_route or "",
        route=d.route or "",
        verdict=d.verdict,
        by=d.by,
        tier=_decided_tier(d.tiers),
        top_score=_number(top),
        gap=_number(gap),
        decisive=d.decisive,
        message=message,
        # The evidence quotes the message (a rule's match, a scorer's words): what the
        # message does not keep, it does not keep either.
        event=scrub_evidence(d.model_dump(by_alias=True, mode="json"), message),
        rollout_id=trial.id if trial is not None else None,
        arm=trial.arm if trial is not None else "",
        shadow_route=(shadow.route or "") if shadow is not None else "",
        shadow_verdict=shadow.verdict if shadow is not None else "",
        # Read from the text as sent, even when it is not kept: a language is not the words.
        language=languages.detect(item.message) if item.message else "",
    )


def _decided_tier(tiers: list[dict[str, Any]]) -> str:
    return next((str(t.get("name", ""))[:16] for t in tiers if t.get("decided")), "")


def _number(value: Any) -> float | None:
    """A finite float from the event (it writes non-finite numbers as strings), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if abs(value) < 1e300 else None


def expire_events(now: datetime | None = None) -> int:
    """Delete every profile's events older than its retention period; returns how many."""
    now = now or timezone.now()
    days = dict(TrafficSettings.objects.values_list("profile_id", "retention_days"))
    deleted = 0
    for profile_id in Event.objects.values_list("profile_id", flat=True).distinct().order_by():
        keep = timedelta(days=days.get(profile_id, TrafficSettings().retention_days))
        cutoff = now - keep
        with transaction.atomic():  # the rollups lose exactly the turns deleted
            forget_before(profile_id, cutoff)
            deleted += Event.objects.filter(profile_id=profile_id, received__lt=cutoff).delete()[0]
    # A batch id guards against a retry within minutes; a day is plenty, and keeps the table small.
    EventBatch.objects.filter(received__lt=now - timedelta(days=1)).delete()
    return deleted
