"""Models of rollouts: a candidate version beside an environment's live one, and its guards.

A rollout is shadow (every turn served by the live pack, the candidate scored too) or canary
(a share of conversations served by the candidate). Its conditions are checked on the job
queue as agents report turns (`RolloutCheck`); every step is in the audit trail with the figures
that decided it (docs/pack-format.md, "Rollouts over HTTP").
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from studio.models.jobs import Job
from studio.models.profiles import Profile
from studio.models.publishing import Environment, Version, served_changed


class RolloutMode(models.TextChoices):
    SHADOW = "shadow"
    CANARY = "canary"


class RolloutStatus(models.TextChoices):
    RUNNING = "running"  # agents are told of the candidate
    WAITING = "waiting"  # conditions held; a person is asked to promote (agents still told)
    HALTED = "halted"  # a condition broke; agents are back on live at their next pull
    PROMOTED = "promoted"  # the candidate is the environment's live version
    STOPPED = "stopped"  # a person ended it without promoting


SERVED = (RolloutStatus.RUNNING, RolloutStatus.WAITING)


class OnHold(models.TextChoices):
    PROMOTE = "promote", "promote the candidate"
    ASK = "ask", "ask a publisher to promote"


class Rollout(models.Model):
    """A candidate version on an environment, its mode and share, and the conditions guarding it."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="rollouts")
    environment = models.ForeignKey(Environment, on_delete=models.CASCADE, related_name="rollouts")
    candidate = models.ForeignKey(Version, on_delete=models.PROTECT, related_name="+")
    live = models.ForeignKey(Version, on_delete=models.PROTECT, related_name="+")
    mode = models.CharField(max_length=8, choices=RolloutMode.choices)
    share = models.PositiveSmallIntegerField(default=0)  # percent of conversations (canary)
    status = models.CharField(
        max_length=8, choices=RolloutStatus.choices, default=RolloutStatus.RUNNING
    )
    # Conditions, in points of percentage (None: not checked), and the turns that must pass.
    max_unmatched_rise = models.FloatField(null=True, blank=True)
    max_reask_rise = models.FloatField(null=True, blank=True)
    min_turns = models.PositiveIntegerField(default=500)
    on_hold = models.CharField(max_length=8, choices=OnHold.choices, default=OnHold.ASK)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    started_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(blank=True)  # why it ended, in words
    figures = models.JSONField(default=dict, blank=True)  # the last check's figures

    class Meta:
        ordering = ["-started_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["environment"],
                condition=models.Q(status__in=["running", "waiting"]),
                name="one_served_rollout_per_environment",
            )
        ]

    def __str__(self) -> str:
        return f"{self.environment_id} {self.mode} v{self.candidate_id} ({self.status})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Save, and tell pulls of the environment: its rollout header may have changed."""
        super().save(*args, **kwargs)
        served_changed(self.environment_id)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        environment_id = self.environment_id
        deleted = super().delete(*args, **kwargs)
        served_changed(environment_id)
        return deleted

    @property
    def is_served(self) -> bool:
        """Agents are told of the candidate."""
        return self.status in SERVED


class RolloutCheck(Job):
    """One check of a rollout's conditions on the turns reported so far (queued on ingest)."""

    rollout = models.ForeignKey(Rollout, on_delete=models.CASCADE, related_name="checks")
    outcome = models.CharField(max_length=16, blank=True)  # "holding", "halted", "promoted", …
    figures = models.JSONField(default=dict, blank=True)

    class Meta(Job.Meta):
        default_related_name = "rollout_checks"
        constraints = [
            models.UniqueConstraint(
                fields=["rollout"],
                condition=models.Q(status="queued"),
                name="one_queued_check_per_rollout",
            )
        ]

    def __str__(self) -> str:
        return f"check of rollout {self.rollout_id}: {self.outcome or self.status}"
