"""Models of publishing: immutable versions, their compressed encodings, environments, tokens."""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.db import models

from studio.models.profiles import Editable, Profile


class VersionImmutable(Exception):
    """A published version was about to be changed or deleted; the database refuses it too."""


class Version(models.Model):
    """One published pack: immutable once written (model, and database triggers, refuse edits).

    `published_by` is a name, not a foreign key: deleting a user must never touch a version.
    """

    profile = models.ForeignKey(Profile, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    pack_json = models.TextField()
    checksum = models.CharField(max_length=80)
    published_by = models.CharField(max_length=150, blank=True)
    published_at = models.DateTimeField()
    note = models.TextField(blank=True)
    # One {"message", "incumbent", "expected", "actual", "verdict", "passed"} per test case.
    test_results = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["profile", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["profile", "number"], name="version_number_unique")
        ]

    def __str__(self) -> str:
        return f"{self.profile_id} v{self.number}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise VersionImmutable(f"version {self.number} is published and cannot change")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise VersionImmutable(f"version {self.number} is published and cannot be deleted")

    @property
    def filename(self) -> str:
        return f"{self.profile.slug}-v{self.number}.json"

    @property
    def tests_passed(self) -> int:
        return sum(1 for r in self.test_results if r.get("passed"))


class PackEncoding(models.Model):
    """A version's pack JSON compressed for the wire (studio/encodings), made once at publish.

    Beside the version, not in it: versions are immutable rows, and these are derived bytes.
    """

    version = models.ForeignKey(Version, on_delete=models.CASCADE, related_name="encodings")
    coding = models.CharField(max_length=16)  # an HTTP content-coding: "gzip", "zstd"
    body = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["version", "coding"], name="one_body_per_coding")
        ]

    def __str__(self) -> str:
        return f"{self.version_id} {self.coding}"


def new_stamp() -> int:
    """A fresh `Environment.served_stamp`."""
    return secrets.randbits(63)


class EnvironmentName(models.TextChoices):
    STAGING = "staging"
    PRODUCTION = "production"


class Environment(Editable):
    """Where agents pull from: each environment of a profile points at one version (or none)."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="environments")
    name = models.CharField(max_length=16, choices=EnvironmentName.choices)
    version = models.ForeignKey(
        Version, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Drawn anew at every change to what a pull is answered with (the version, a rollout
    # beside it), so a pull reads it in its one query and answers from its process's copy of
    # the rest while it is unchanged (studio.agents.pulls). Random rather than counted, so
    # that another database (a restored one, a test's) cannot repeat a stamp with other
    # contents; only ever set in the database (`served_changed`), never from an instance, so
    # that saving a stale instance cannot set an old one back.
    served_stamp = models.PositiveBigIntegerField(default=new_stamp, editable=False)

    class Meta:
        ordering = ["profile", "name"]
        constraints = [
            models.UniqueConstraint(fields=["profile", "name"], name="environment_unique")
        ]

    def __str__(self) -> str:
        # The history shows this beside the versions moved between: "production (v1 → v2)".
        return str(self.name)

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Save every field but `served_stamp`, then draw it anew: a save may change the version."""
        if (
            self.pk is not None
            and not kwargs.get("force_insert")
            and not kwargs.get("update_fields")
        ):
            kwargs["update_fields"] = [
                f.name
                for f in self._meta.concrete_fields
                if not f.primary_key and f.name != "served_stamp"
            ]
        super().save(*args, **kwargs)
        served_changed(self.pk)


def served_changed(environment_id: int) -> None:
    """Draw the environment's `served_stamp` anew: what its pulls answer changed (or may have).

    Every write that changes an environment's version or one of its rollouts goes through a
    model's `save` or `delete`, which calls this; a queryset `update()` of those fields must too.
    """
    Environment.objects.filter(pk=environment_id).update(served_stamp=new_stamp())


class TokenBase(models.Model):
    """A bearer secret stored as its sha256: the secret itself is shown once, then forgotten."""

    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16)  # enough of the secret to tell tokens apart
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class TokenScope(models.TextChoices):
    PULL = "pull", "pull packs"
    EVENTS = "events", "send decision events"


class ReadToken(TokenBase):
    """Lets an agent pull one profile's packs (scope pull) or send its events (scope events)."""

    scope = models.CharField(max_length=16, choices=TokenScope.choices, default=TokenScope.PULL)
    # Scope events: the turns the agent's reporter last said it dropped (its queue was full).
    events_dropped = models.PositiveBigIntegerField(default=0)
    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="read_tokens")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )


class ApiToken(TokenBase):
    """Lets a script act as its user through the API, with the user's roles."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
