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
        ]

    def __str__(self) -> str:
        return f"{self.profile_id} {self.received:%Y-%m-%d %H:%M} {self.verdict} {self.route}"


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
