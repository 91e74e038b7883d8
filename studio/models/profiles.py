"""Database models: profiles and everything a pack holds, test cases and the audit trail.

Names mirror the pack format (docs/pack-format.md). Route references (default route, rule route, test case
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
    # The pack's `no_background`: learn no built-in off-topic background (docs/pack-format.md).
    no_background = models.BooleanField(default=False)
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
    name = models.CharField(max_length=64)  # the identifier (docs/pack-format.md, Names)
    display_name = models.CharField(max_length=200, blank=True)  # what people read
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
        from studio.shared.labels import match_text

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
