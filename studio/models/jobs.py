"""Models of background jobs: one row per job, with its status and progress, of every kind."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from studio.models.profiles import Profile, Route, TestCase
from studio.models.publishing import Version


class JobStatus(models.TextChoices):
    QUEUED = "queued"  # waiting for a worker (studio/jobs)
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"  # rows from before the queue, whose thread died mid-way


ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING)


class Job(models.Model):
    """Work run by a queue worker (studio/jobs); the row is its progress, which the page polls."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    draft_revision = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    started_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The queue's side (studio/jobs): which task runs it, on which worker, how often it was tried.
    task_id = models.CharField(max_length=64, blank=True)
    worker = models.CharField(max_length=200, blank=True)  # host:pid of the worker running it
    attempts = models.PositiveSmallIntegerField(default=0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    cancel_requested = models.BooleanField(default=False)

    class Meta:
        abstract = True
        ordering = ["-started_at", "-pk"]

    @property
    def is_running(self) -> bool:
        """Still to finish (queued or running): its page keeps polling."""
        return self.status in ACTIVE

    @property
    def is_queued(self) -> bool:
        return self.status == JobStatus.QUEUED

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0

    @property
    def seconds(self) -> float | None:
        if self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()


class TestRun(Job):
    """One run of a profile's test suite: the figures and one result per case, as JSON."""

    __test__ = False  # not a pytest test class

    passed = models.PositiveIntegerField(default=0)
    pass_rate = models.FloatField(null=True, blank=True)
    # routing_core's EvalReport.to_dict(): the very figures `routing-core eval --json` prints.
    figures = models.JSONField(default=dict, blank=True)
    # One {"id", "text", "expected", "predicted", "verdict", "by", "failures", "us", ...} per case.
    results = models.JSONField(default=list, blank=True)

    class Meta(Job.Meta):
        default_related_name = "test_runs"

    def __str__(self) -> str:
        return f"{self.profile_id} run {self.pk}"


class OverlapCheck(Job):
    """One overlap checkup (leave-one-out over the examples) and what it found."""

    findings = models.JSONField(default=list, blank=True)

    class Meta(Job.Meta):
        default_related_name = "overlap_checks"

    def __str__(self) -> str:
        return f"{self.profile_id} overlap {self.pk}"

    @property
    def outcome_counts(self) -> dict[str, int]:
        """Findings by outcome: landing on another route is not the same news as a near-tie."""
        counts = {"elsewhere": 0, "near_tie": 0, "unmatched": 0}
        for finding in self.findings:
            key = str(finding.get("outcome", "")).replace("-", "_")
            counts[key] = counts.get(key, 0) + 1
        return counts


class TrainedModel(Job):
    """The lexical model learned from one state of a profile's route texts (studio/jobs/training.py).

    Keyed by the texts' fingerprint, not the revision: rule, tool, policy and lexicon edits
    leave the fingerprint, and so the model, unchanged. `pack_json` is the draft it learned
    from with `scorer.model` filled in; the playground scores a newer draft with the newest
    finished one while the next trains.
    """

    fingerprint = models.CharField(max_length=80)
    source_json = models.TextField()  # the draft pack (no model) as queued
    pack_json = models.TextField(blank=True)  # the same pack with its model, once trained

    class Meta(Job.Meta):
        default_related_name = "trained_models"
        constraints = [
            models.UniqueConstraint(fields=["profile", "fingerprint"], name="one_model_per_texts")
        ]

    def __str__(self) -> str:
        return f"{self.profile_id} model {self.fingerprint[:15]}"


class TuningRun(Job):
    """One floor × margin sweep over the test cases (studio/authoring), for one state of them."""

    key = models.CharField(max_length=64)  # sha256 of what the sweep depends on
    result = models.JSONField(null=True, blank=True)  # the Tuning, as authoring stores it

    class Meta(Job.Meta):
        default_related_name = "tuning_runs"

    def __str__(self) -> str:
        return f"{self.profile_id} tuning {self.pk}"


class Publication(Job):
    """One publish, run as a job: it waits for the model of exactly its revision, then stores it."""

    note = models.TextField(blank=True)
    environment = models.CharField(max_length=16, blank=True)
    expected_draft_revision = models.PositiveIntegerField(null=True, blank=True)
    version = models.ForeignKey(
        Version, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta(Job.Meta):
        default_related_name = "publications"

    def __str__(self) -> str:
        return f"{self.profile_id} publication {self.pk}"


class ImportJob(Job):
    """One import (a pack file, or another tool's export), run as a job.

    The upload waits here for a worker and is emptied when the job ends. `profile` is the
    profile whose draft it replaces, or, for a new profile, the one it created (None until
    then). A refused import keeps its problems, as `[path, message]` pairs, and `refusal`
    says how the API answers them: "pack" and "refused" 422, "conflict" 409.
    """

    profile = models.ForeignKey(  # type: ignore[assignment]  # nullable here, unlike Job's
        Profile, null=True, blank=True, on_delete=models.CASCADE, related_name="import_jobs"
    )
    into_draft = models.BooleanField(default=False)
    format = models.CharField(max_length=32)  # "pack", or an importer of routing_core.importers
    filename = models.CharField(max_length=255, blank=True)
    upload = models.BinaryField(blank=True)
    language = models.CharField(max_length=20, blank=True)
    slug = models.CharField(max_length=64, blank=True)
    name = models.CharField(max_length=200, blank=True)
    report = models.JSONField(default=dict, blank=True)
    problems = models.JSONField(default=list, blank=True)
    refusal = models.CharField(max_length=16, blank=True)

    class Meta(Job.Meta):
        default_related_name = "import_jobs"

    def __str__(self) -> str:
        return f"import {self.pk} ({self.format})"


class RepairJob(Job):
    """One search for a failing test case's smallest fix ("find a fix"), run as a job.

    It searched the draft at `draft_revision` against the suite whose cases hash to
    `suite_fingerprint`: the same case, revision and suite reuse it, and its fix may be applied
    only while both are unchanged (then the suite need not be run again in the request).
    `done` of `total` counts the candidates tried; `tried` says each one in plain words, and
    `fix` is the edit found (`routing_core.repair.Edit` fields), None when there is none.
    """

    test_case = models.ForeignKey(TestCase, on_delete=models.CASCADE)
    suite_fingerprint = models.CharField(max_length=64)
    fix = models.JSONField(null=True, blank=True)
    tried = models.JSONField(default=list, blank=True)
    misses = models.JSONField(default=list, blank=True)  # what the case missed before any edit
    reason = models.TextField(blank=True)  # why there is no fix
    note = models.TextField(blank=True)  # e.g. the language model did not answer

    class Meta(Job.Meta):
        default_related_name = "repair_jobs"
        # Two people (or a script's retry) pressing "Find a fix" at once share one search:
        # reuse in `request_repair` is a read, so only the database can rule out a second.
        constraints = [
            models.UniqueConstraint(
                fields=["test_case", "draft_revision", "suite_fingerprint"],
                condition=models.Q(status__in=ACTIVE),
                name="one_active_search_per_case",
            )
        ]

    def __str__(self) -> str:
        return f"fix {self.pk} for case {self.test_case_id}"


class ConversationDraft(Job):
    """Test conversations a language model drafted for one route, waiting for a person.

    `conversations` holds them as drafted and routed on the draft at `draft_revision`
    (`routing_core.suggest.DraftConversation` as JSON: each turn's text, part, expected route,
    and where the draft sent it). A person accepts some as multi-turn test cases and rejects
    the rest once (`reviewed_at`); the choice is audited like suggestions.
    """

    route = models.ForeignKey(Route, on_delete=models.CASCADE)
    conversations = models.JSONField(default=list, blank=True)
    dropped = models.PositiveIntegerField(default=0)  # drafted, but unusable (unknown routes)
    note = models.TextField(blank=True)  # why there is nothing to review, in words
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta(Job.Meta):
        default_related_name = "conversation_drafts"

    def __str__(self) -> str:
        return f"conversation draft {self.pk} for route {self.route_id}"
