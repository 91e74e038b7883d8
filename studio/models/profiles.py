"""Database models: profiles and everything a pack holds, test cases and the audit trail.

Names mirror the pack format (DESIGN §6). Route references (default route, rule route, test case
expectations) are stored by *name*, as in the pack, so that routing_core is the one judge of whether
they exist; renaming a route rewrites them in the same transaction (see services).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models


class Editable(models.Model):
    """Fields every editable object carries for optimistic locking and "changed by X at T"."""

    revision = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        abstract = True


class Strictness(models.TextChoices):
    ASSIST = "assist", "assist — the agent may switch to any route"
    GUARD = "guard", "guard — the agent may only pick from an offered menu"
    RAILS = "rails", "rails — the agent never switches on its own"


class TriageMode(models.TextChoices):
    OFF = "off", "off — no triage, every tool bound"
    SHADOW = "shadow", "shadow — compute and record, bind every tool"
    ENFORCE = "enforce", "enforce — bind only the narrowed tools"


class ScorerKind(models.TextChoices):
    LEXICAL = "lexical", "lexical (default, no model)"
    EMBEDDING = "embedding", "embedding"
    LLM = "llm", "LLM classifier"
    HYBRID = "hybrid", "hybrid (lexical + embedding)"
    CASCADE = "cascade", "cascade of tiers"


class Profile(Editable):
    """One agent profile: the unit that becomes a pack."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    default_route = models.CharField(max_length=64, blank=True)
    # Bumped by every edit of anything in the pack: the key for per-revision caches.
    draft_revision = models.PositiveIntegerField(default=1)

    # policy
    floor = models.FloatField(null=True, blank=True)
    # Messages that belong to no route (the pack's `out_of_scope`): the scorer learns them.
    out_of_scope = models.JSONField(default=list, blank=True)
    near_tie_margin = models.FloatField(default=0.15)
    menu_size = models.PositiveSmallIntegerField(default=3)
    strictness = models.CharField(
        max_length=16, choices=Strictness.choices, default=Strictness.ASSIST
    )
    scorer_kind = models.CharField(
        max_length=16, choices=ScorerKind.choices, default=ScorerKind.LEXICAL
    )
    # The pack's whole `scorer` object when it says more than its kind (an imported cascade, say),
    # used while `scorer_kind` still names its kind. Never the lexical `model`: weights are
    # relearned from the routes by studio.shared.packs.release_pack, so they cannot go stale here.
    scorer_settings = models.JSONField(null=True, blank=True)

    # triage; a None lexicon or a blank pattern means "routing_core's built-in default"
    triage_mode = models.CharField(
        max_length=16, choices=TriageMode.choices, default=TriageMode.ENFORCE
    )
    ambiguity_confidence_floor = models.FloatField(default=0.55)
    min_action_signals = models.PositiveSmallIntegerField(default=2)
    action_verbs = models.JSONField(null=True, blank=True)
    knowledge_verbs = models.JSONField(null=True, blank=True)
    question_pattern = models.TextField(blank=True)

    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "slug"]
        permissions = [
            ("edit_profile", "Can edit profiles, routes, rules, tools and test cases"),
            ("publish_profile", "Can publish packs and move environments"),
            ("administer_studio", "Can manage users, roles and tokens"),
        ]

    def __str__(self) -> str:
        return self.slug

    @property
    def active_scorer_settings(self) -> dict[str, Any] | None:
        """The stored scorer settings while `scorer_kind` is still their kind, else None."""
        stored = self.scorer_settings
        if isinstance(stored, dict) and stored.get("kind") == self.scorer_kind:
            return stored
        return None


class ProfileItem(Editable):
    """An ordered child of a profile (route, rule, tool, test case)."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE)
    order = models.PositiveIntegerField(default=0)

    class Meta:
        abstract = True
        ordering = ["order", "pk"]

    @property
    def dom_id(self) -> str:
        """The id of the object's row in the page, the target of its htmx swaps."""
        return f"{type(self).__name__.lower()}-{self.pk}"


class ActionKind(models.TextChoices):
    ANSWER = "answer", "answer"
    DELEGATE = "delegate", "delegate to another agent"
    STUCK = "stuck", "stuck — end the turn with a message"


class Route(ProfileItem):
    name = models.CharField(max_length=64)
    description = models.TextField(blank=True)
    examples = models.JSONField(default=list, blank=True)
    keywords = models.JSONField(default=list, blank=True)
    never = models.JSONField(default=list, blank=True)
    action_kind = models.CharField(
        max_length=16, choices=ActionKind.choices, default=ActionKind.ANSWER
    )
    delegate_agent = models.CharField(max_length=128, blank=True)
    stuck_message = models.TextField(blank=True)

    class Meta(ProfileItem.Meta):
        default_related_name = "routes"
        constraints = [
            models.UniqueConstraint(fields=["profile", "name"], name="route_name_unique_in_profile")
        ]

    def __str__(self) -> str:
        return self.name


class MatchKind(models.TextChoices):
    KEYWORDS = "keywords", "any of these keywords"
    REGEX = "regex", "regular expression"
    ALL = "all", "all of several conditions"


class Rule(ProfileItem):
    route_name = models.CharField(max_length=64)
    match_kind = models.CharField(
        max_length=16, choices=MatchKind.choices, default=MatchKind.KEYWORDS
    )
    keywords = models.JSONField(default=list, blank=True)
    regex = models.TextField(blank=True)
    # For match_kind=all: the pack's list of match objects, verbatim.
    all_of = models.JSONField(default=list, blank=True)
    examples = models.JSONField(default=list, blank=True)

    class Meta(ProfileItem.Meta):
        default_related_name = "rules"

    def __str__(self) -> str:
        return f"{self.match_kind} → {self.route_name}"

    @property
    def match_text(self) -> str:
        """The match in words, for the rules table and the route page (never a Python repr)."""
        from studio.labels import match_text

        return match_text(self.match_kind, self.keywords, self.regex, self.all_of)


class Tool(ProfileItem):
    name = models.CharField(max_length=128)
    description = models.TextField(blank=True)
    trigger_keywords = models.JSONField(default=list, blank=True)
    always_include = models.BooleanField(default=False)

    class Meta(ProfileItem.Meta):
        default_related_name = "tools"
        constraints = [
            models.UniqueConstraint(fields=["profile", "name"], name="tool_name_unique_in_profile")
        ]

    def __str__(self) -> str:
        return self.name


class VerdictKind(models.TextChoices):
    MOVE = "move"
    STAY = "stay"
    MENU = "menu"
    UNMATCHED = "unmatched"


class TriageLabel(models.TextChoices):
    ACTION = "action"
    KNOWLEDGE = "knowledge"
    AMBIGUOUS = "ambiguous"


class TestCase(ProfileItem):
    """A message and what the profile should do with it. Blank expected_route = unmatched."""

    __test__ = False  # not a pytest test class

    message = models.TextField()
    incumbent = models.CharField(max_length=64, blank=True)
    expected_route = models.CharField(max_length=64, blank=True)
    expected_verdict = models.CharField(max_length=16, choices=VerdictKind.choices, blank=True)
    expected_triage = models.CharField(max_length=16, choices=TriageLabel.choices, blank=True)
    # None = tools not checked; a list = tools the turn must keep (others may be kept too), and
    # exactly those with `exact_tools`; [] = no tool kept. `dropped_tools`: it must keep none of
    # these. routing_core.cases.Case holds the same three (docs/test-suites.md).
    expected_tools = models.JSONField(null=True, blank=True)
    dropped_tools = models.JSONField(null=True, blank=True)
    exact_tools = models.BooleanField(default=False)
    # Turns sharing a conversation label run in `turn` order; each turn's incumbent is where the
    # previous one landed (the first turn's `incumbent` starts the conversation). See suites.py.
    conversation = models.CharField(max_length=64, blank=True)
    turn = models.PositiveIntegerField(default=0)

    class Meta(ProfileItem.Meta):
        default_related_name = "test_cases"

    def __str__(self) -> str:
        return self.message[:60]


class AuditEntry(models.Model):
    """Who changed what and when, with the object before and after (None when created/deleted)."""

    profile = models.ForeignKey(
        Profile, null=True, blank=True, on_delete=models.SET_NULL, related_name="audit_entries"
    )
    profile_slug = models.CharField(max_length=64, blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    username = models.CharField(max_length=150, blank=True)
    at = models.DateTimeField(auto_now_add=True)
    action = models.CharField(max_length=64)
    object_type = models.CharField(max_length=32)
    object_repr = models.CharField(max_length=200)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-at", "-pk"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.username} {self.action} {self.object_repr}"


def snapshot(obj: models.Model) -> dict[str, Any]:
    """The editable fields of an object, JSON-safe, for the audit trail."""
    skip = {"id", "profile", "updated_at", "updated_by", "created_at"}
    return {
        f.name: f.value_from_object(obj)
        for f in obj._meta.concrete_fields
        if f.name not in skip and f.attname not in skip
    }


# -- publishing (issue 5) ---------------------------------------------------------------------------


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

    class Meta:
        ordering = ["profile", "name"]
        constraints = [
            models.UniqueConstraint(fields=["profile", "name"], name="environment_unique")
        ]

    def __str__(self) -> str:
        # The history shows this beside the versions moved between: "production (v1 → v2)".
        return str(self.name)


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


# -- test suites and authoring checks (issue 6) -----------------------------------------------------


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
    """The lexical model learned from one state of a profile's route texts (studio/jobs/training).

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
