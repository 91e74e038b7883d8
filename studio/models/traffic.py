"""Models of what comes back from production: agents that pull packs, decision events, replays.

Kept apart from `studio.models` (which imports them at its end) so that the traffic loop reads
as one piece: who pulls, what they decided, what a person said about it, what a replay found.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from studio.models.jobs import Job
from studio.models.profiles import Profile
from studio.models.publishing import ReadToken
from studio.models.rollouts import Rollout


class TrafficSettings(models.Model):
    """A profile's choices about personal data in decision events (absent = the defaults)."""

    profile = models.OneToOneField(Profile, on_delete=models.CASCADE, related_name="traffic")
    # Messages arrive redacted (e-mails, phones, long numbers); off = no message text is stored.
    keep_message_text = models.BooleanField(default=True)
    retention_days = models.PositiveSmallIntegerField(default=30)

    def __str__(self) -> str:
        return f"{self.profile_id} traffic settings"


class Agent(models.Model):
    """One agent as the studio last saw it: a pull token on one environment, upserted per pull."""

    token = models.ForeignKey(ReadToken, on_delete=models.CASCADE, related_name="agents")
    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="agents")
    environment = models.CharField(max_length=16)
    user_agent = models.CharField(max_length=200, blank=True)
    engine_version = models.CharField(max_length=40, blank=True)  # its routing_core, "" unknown
    served_version = models.PositiveIntegerField(null=True, blank=True)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    # What the agent said of itself on its last pull (`Route-Agent-Status`; routing_core's
    # fleet_status). `reported` false: it sent nothing (an older routing_core), the rest is blank.
    reported = models.BooleanField(default=False)
    running_version = models.PositiveIntegerField(null=True, blank=True)
    running_checksum = models.CharField(max_length=80, blank=True)
    verified_by = models.CharField(max_length=80, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    events_dropped = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["-last_seen", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["token", "environment"], name="agent_token_env_unique")
        ]

    def __str__(self) -> str:
        return f"{self.token_id}/{self.environment}"


class Event(models.Model):
    """One turn an agent routed in production: the decision event and a few columns to chart."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="events")
    received = models.DateTimeField(db_index=True)
    at = models.DateTimeField(null=True, blank=True)  # the agent's clock
    conversation = models.CharField(max_length=128, blank=True)
    turn = models.PositiveIntegerField(null=True, blank=True)
    pack_version = models.PositiveIntegerField(null=True, blank=True)
    from_route = models.CharField(max_length=64, blank=True)
    route = models.CharField(max_length=64, blank=True)
    verdict = models.CharField(max_length=16)
    by = models.CharField(max_length=16)
    tier = models.CharField(max_length=16, blank=True)  # the scoring tier whose verdict stood
    top_score = models.FloatField(null=True, blank=True)
    gap = models.FloatField(null=True, blank=True)
    decisive = models.BooleanField(default=True)
    # None: no text kept (the profile keeps none, or the agent sent none); "" is an empty message.
    message = models.TextField(null=True, blank=True)  # noqa: DJ001
    event = models.JSONField()
    # A person's answer from the review queue: the right route ("" = none fits).
    reviewed_at = models.DateTimeField(null=True, blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    right_route = models.CharField(max_length=64, blank=True)
    # "Dismiss" in the review inbox: off the inbox without an answer (not counted as reviewed).
    dismissed_at = models.DateTimeField(null=True, blank=True)
    # During a rollout: which pack served the turn ("live" or "candidate"), and in shadow the
    # candidate's route and verdict on the same turn (docs/event-schema.md).
    rollout = models.ForeignKey(
        Rollout, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    arm = models.CharField(max_length=9, blank=True)
    shadow_route = models.CharField(max_length=64, blank=True)
    shadow_verdict = models.CharField(max_length=16, blank=True)
    # The user's next turn in the conversation repeated or corrected this one (routing_core.reasks).
    reasked = models.BooleanField(default=False)
    # The message's language (routing_core.languages, at ingest); "" when unclear, when the agent
    # sent no text, or for turns stored before languages were detected.
    language = models.CharField(max_length=8, blank=True, default="")

    class Meta:
        ordering = ["-received", "-pk"]
        indexes = [
            models.Index(fields=["profile", "received"], name="event_profile_received"),
            models.Index(fields=["profile", "conversation", "turn"], name="event_conversation"),
            # The review inbox and the scrub read only some of a profile's turns: partial
            # indexes keep those reads as long as the rows they return, not as the table
            # (docs/decisions.md, "Traffic rollups").
            models.Index(
                fields=["profile", "received"],
                name="event_with_text",
                condition=models.Q(message__isnull=False),
            ),
            models.Index(
                fields=["profile", "route", "received"],
                name="event_open",
                condition=models.Q(
                    message__isnull=False, reviewed_at__isnull=True, dismissed_at__isnull=True
                ),
            ),
            models.Index(
                fields=["profile"],
                name="event_reviewed",
                condition=models.Q(reviewed_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.profile_id} {self.received:%Y-%m-%d %H:%M} {self.verdict} {self.route}"


class TrafficHour(models.Model):
    """Turns of one UTC hour with one outcome: what the Traffic page counts, kept as events
    arrive so that the page reads hours, not turns (studio.traffic.rollups)."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="+")
    hour = models.DateTimeField()  # its start, a whole UTC hour
    verdict = models.CharField(max_length=16)
    by = models.CharField(max_length=16)
    route = models.CharField(max_length=64, blank=True)
    tier = models.CharField(max_length=16, blank=True)
    language = models.CharField(max_length=8, blank=True)
    turns = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["profile", "hour", "verdict", "by", "route", "tier", "language"],
                name="traffic_hour_unique",
            )
        ]

    def __str__(self) -> str:
        return (
            f"{self.profile_id} {self.hour:%Y-%m-%d %H}h {self.verdict} {self.route}: {self.turns}"
        )


class EventBatch(models.Model):
    """A batch of events stored under its id, so that the same batch sent again is stored once."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=128)
    accepted = models.PositiveIntegerField()
    received = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["profile", "key"], name="one_batch_per_key")]

    def __str__(self) -> str:
        return f"{self.profile_id} batch {self.key}"


class ScrubRun(Job):
    """Removing the message texts (and the evidence quoting them) already stored for a profile
    that stopped keeping text: run as a job, since a profile may hold millions of turns."""

    class Meta(Job.Meta):
        default_related_name = "scrub_runs"

    def __str__(self) -> str:
        return f"{self.profile_id} scrub {self.pk}"


class ReplayRun(Job):
    """A replay of a profile's stored events against its draft or a version: the flip report."""

    target = models.CharField(max_length=16)  # "draft" or a version number
    # routing_core.replay.ReplayReport.to_dict(): what `routing-core replay --json` prints.
    report = models.JSONField(default=dict, blank=True)

    class Meta(Job.Meta):
        default_related_name = "replay_runs"

    def __str__(self) -> str:
        return f"{self.profile_id} replay {self.pk} on {self.target}"


class ReplayChange(models.Model):
    """One turn whose outcome a replay changed. The run's `report` keeps only the counts; the
    turns are rows, read a page at a time, and name their event rather than copy its text."""

    run = models.ForeignKey(ReplayRun, on_delete=models.CASCADE, related_name="changes")
    # Not a foreign key: retention deletes events in bulk, and a change outlives its turn
    # (the page then says the turn was deleted).
    event_id = models.BigIntegerField()
    old = models.CharField(max_length=64)  # a route, (menu) or (unmatched)
    new = models.CharField(max_length=64)
    incumbent = models.CharField(max_length=64, blank=True)
    old_verdict = models.CharField(max_length=16)
    new_verdict = models.CharField(max_length=16)
    old_tools = models.JSONField(default=list)
    new_tools = models.JSONField(default=list)
    changed = models.CharField(max_length=32)  # route, verdict, tools: those that differ

    class Meta:
        indexes = [models.Index(fields=["run", "old", "new", "id"], name="replay_change_group")]

    def __str__(self) -> str:
        return f"replay {self.run_id}: {self.old} → {self.new}"
