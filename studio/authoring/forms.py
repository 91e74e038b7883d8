"""Forms: text in, lists out. They check types only; routing_core judges the pack."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from django import forms
from django.forms.renderers import TemplatesSetting

from routing_core.scorers.embedding import encoder_installed
from studio.authoring.conflicts import base_json
from studio.authoring.identifiers import IDENTIFIER_RULE, is_identifier, suggest_identifier
from studio.models import Profile, Route, Rule, Tool
from studio.shared.edits import path_tokens
from studio.shared.errors import Problem
from studio.shared.labels import plain_message, plain_problem
from studio.shared.packs import DEFAULT_ENCODER, scorer_encoder, with_encoder


class StudioFormRenderer(TemplatesSetting):
    """Wraps each field group in one element so that grids lay fields out, not their parts."""

    field_template_name = "studio/shared/_field.html"


class LinesField(forms.CharField):
    """One item per line (examples, never-phrases); blank lines dropped."""

    widget: type[forms.Widget] | forms.Widget = forms.Textarea(attrs={"rows": 6})

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        super().__init__(strip=False, **kwargs)

    def prepare_value(self, value: Any) -> Any:
        return "\n".join(value) if isinstance(value, list) else value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = value if isinstance(value, str) else ""
        return [line.strip() for line in text.splitlines() if line.strip()]


class CommaListField(LinesField):
    """Comma- or newline-separated items (keywords may be phrases: "real person")."""

    widget = forms.TextInput()

    def prepare_value(self, value: Any) -> Any:
        return ", ".join(value) if isinstance(value, list) else value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = value if isinstance(value, str) else ""
        return [item.strip() for item in re.split(r"[,\n]", text) if item.strip()]


class WordsField(LinesField):
    """A lexicon: words separated by spaces, commas or new lines."""

    def prepare_value(self, value: Any) -> Any:
        return " ".join(value) if isinstance(value, list) else value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = value if isinstance(value, str) else ""
        return [w for w in re.split(r"[\s,]+", text) if w]


class PackForm(forms.ModelForm):  # type: ignore[type-arg]
    """A form whose fields map onto pack paths, so routing_core's errors land on the right field.

    `pack_fields` maps a path token (indices dropped) to a form field; tokens are tried from the
    innermost outwards, so `routes[2].action.agent` lands on the field mapped to `agent`.
    """

    pack_fields: ClassVar[dict[str, str]] = {}
    revision = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk and not self.is_bound:
            self.initial["revision"] = self.instance.revision

    @property
    def edit_base(self) -> str:
        """The values this edit started from, carried in the form to tell an edit conflict's
        other side from yours (studio.authoring.conflicts)."""
        return base_json(self)

    def field_for(self, tokens: list[str]) -> str | None:
        for token in reversed(tokens):
            if token in self.pack_fields and self.pack_fields[token] in self.fields:
                return self.pack_fields[token]
        return None

    def add_pack_errors(self, errors: list[Problem], prefix: str = "") -> None:
        """Attach routing_core's (path, message) pairs to fields; the rest to the whole form."""
        for path, message in errors:
            if prefix and not path.startswith(prefix):
                self.add_error(None, plain_problem(path, message))
                continue
            field = self.field_for(path_tokens(path[len(prefix) :]))
            plain = plain_message(message, path)
            self.add_error(field, plain if field else plain_problem(path, message))


class ProfileCreateForm(PackForm):
    pack_fields = {"slug": "slug", "name": "name", "description": "description"}

    class Meta:
        model = Profile
        fields = ["slug", "name", "description"]
        help_texts = {
            "slug": "The agent id: lowercase letters, digits, '-' and '_'. Fixed once created."
        }
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}


class ProfileForm(PackForm):
    pack_fields = {"name": "name", "description": "description", "default_route": "default_route"}

    class Meta:
        model = Profile
        fields = ["name", "description", "default_route"]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        names = (
            list(self.instance.routes.values_list("name", flat=True)) if self.instance.pk else []
        )
        current = self.instance.default_route
        choices = [("", "— none: unmatched turns get the full menu —")] + [(n, n) for n in names]
        if current and current not in names:
            choices.append((current, f"{current} (missing)"))
        self.fields["default_route"] = forms.ChoiceField(
            choices=choices,
            required=False,
            help_text="Where a turn goes when no route scores above the floor.",
        )


# The sentence encoders a person can pick for the embedding, hybrid and cascade scorers, in words
# people know: what each reads (the models' names are in the field's help, so that a label
# fits the list's width; docs/product/profiles.md).
ENCODERS = {
    DEFAULT_ENCODER: "English",
    "multilingual-e5-small": "About 100 languages",
    "universal-sentence-encoder-multilingual-3": "16 languages, quicker",
}


def encoder_choices() -> list[tuple[str, str]]:
    """The encoders, each said to be missing where this studio could not build with it
    ("here": the help beside the list says who else needs it)."""
    return [
        (name, label if encoder_installed(name) else f"{label} (not installed here)")
        for name, label in ENCODERS.items()
    ]


class PolicyForm(PackForm):
    pack_fields = {
        "model": "encoder",
        "near_tie_margin": "near_tie_margin",
        "menu_size": "menu_size",
        "floor": "floor",
        "strictness": "strictness",
        "kind": "scorer_kind",
        "mode": "triage_mode",
        "ambiguity_confidence_floor": "ambiguity_confidence_floor",
        "min_action_signals": "min_action_signals",
        "out_of_scope": "out_of_scope",
        "no_background": "no_background",
    }
    out_of_scope = LinesField(
        label="Out-of-scope examples",
        help_text=(
            "Messages no route is for, one per line (small talk, other products' questions)."
            " The scorer learns them, so messages like them stay unmatched."
        ),
        widget=forms.Textarea(attrs={"rows": 4}),
    )
    encoder = forms.ChoiceField(
        label="Sentence encoder",
        required=False,
        # The page shows it only while a kind that reads with an encoder is chosen
        # (static/studio/policy.js); without script it always shows.
        widget=forms.Select(attrs={"data-for-kinds": "embedding hybrid cascade"}),
        help_text=(
            "Which model reads messages for the embedding, hybrid and cascade scorers (the lexical"
            " scorer needs none). Choose one that knows many languages when your users write in"
            " languages your examples are not written in: it places a message by what it"
            " means, in any of them. The models: all-MiniLM-L6-v2 (English),"
            " multilingual-e5-small (about 100 languages) and Google's Universal Sentence"
            " Encoder, multilingual (16 languages). The studio and every agent that routes with"
            " the pack need it installed."
        ),
    )
    field_order = ["scorer_kind", "encoder"]
    # The built-in default of each field that is no column of the profile.
    defaults: ClassVar[dict[str, str]] = {"encoder": ENCODERS[DEFAULT_ENCODER]}

    class Meta:
        model = Profile
        fields = [
            "scorer_kind",
            "floor",
            "out_of_scope",
            "no_background",
            "near_tie_margin",
            "menu_size",
            "strictness",
            "triage_mode",
            "ambiguity_confidence_floor",
            "min_action_signals",
        ]
        labels = {
            "no_background": "Leave out the built-in off-topic examples",
            "near_tie_margin": "Near-tie margin",
        }
        help_texts = {
            "no_background": "Until this profile has 20 out-of-scope examples of its own, routing also learns a built-in set of everyday off-topic messages (weather, jokes, sports and the like), so that such messages stay unmatched. Tick this to count only your own examples: for an agent that answers small talk itself, say.",
            "scorer_kind": "Which scorer ranks the routes when no rule decides. Lexical needs no model; embedding and hybrid read messages with the sentence encoder below (the hybrid with the lexical scorer beside it); a cascade asks the lexical scorer first and the hybrid only when it is unsure or the message is written in a language your examples lack, so most messages cost what a lexical one does.",
            "floor": "How sure the scorer must be before a route counts at all. A turn where no route clears it is unmatched: it goes to the default route, or the agent asks. Leave empty for the scorer's own: for lexical, the one fitted on the examples, shown below.",
            "near_tie_margin": "How far ahead the best route must be to win on its own: a lead of about twice this in score (0.15 asks for 0.30). With a smaller lead the turn is too close to call: the conversation stays where it is, or the agent offers a menu. Larger means more menus.",
            "menu_size": "The most routes a menu offers when the top scores are too close to call (at least 2).",
            "strictness": "Whether the agent may switch routes on its own: assist any route, guard only one from an offered menu, rails never.",
            "triage_mode": "Whether tool narrowing is off, only recorded for review (shadow), or applied (enforce).",
            "ambiguity_confidence_floor": "A triage label less confident than this becomes 'ambiguous', and every tool stays bound.",
            "min_action_signals": "How many signals (an action verb, an action verb first, a tool keyword) a turn needs to count as an action.",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["encoder"].choices = encoder_choices()  # type: ignore[attr-defined]
        self.initial.setdefault("encoder", scorer_encoder(self.instance))

    def clean(self) -> dict[str, Any]:
        data: dict[str, Any] = super().clean() or self.cleaned_data
        # The encoder goes into the posted kind's settings, a field this form does not list
        # (so the instance keeps it: the pack is judged on the instance, with it, next).
        kind = data.get("scorer_kind") or self.instance.scorer_kind
        encoder = data.get("encoder") or DEFAULT_ENCODER
        self.instance.scorer_settings = with_encoder(self.instance, encoder, kind)
        return data

    # The arithmetic behind the plain help, for whoever wants it (shown behind a disclosure).
    formulas: ClassVar[dict[str, str]] = {
        "floor": "A route is alive when its score is strictly above the floor. Lexical scores are probabilities from 0 to 1.",
        "near_tie_margin": "gap = tanh((top score − runner-up score) / 2); the turn is a near-tie when gap < margin. In score units: the top needs a lead of 2·atanh(margin) over the runner-up (0.30 for 0.15), the lead the playground shows. A margin of 0 never calls a near-tie.",
        "menu_size": "The menu lists the routes within the margin of the top, best first, cut at this many; its order is the tie-break.",
        "ambiguity_confidence_floor": "Triage confidence is the leading lane's share of the signals; below this floor the label is 'ambiguous'.",
    }


class LexiconForm(PackForm):
    """The triage lexicons and question pattern. Leaving a box empty means the built-in default."""

    pack_fields = {
        "action_verbs": "action_verbs",
        "knowledge_verbs": "knowledge_verbs",
        "question_pattern": "question_pattern",
    }
    action_verbs = WordsField(widget=forms.Textarea(attrs={"rows": 5}))
    knowledge_verbs = WordsField(widget=forms.Textarea(attrs={"rows": 5}))

    class Meta:
        model = Profile
        fields = ["action_verbs", "knowledge_verbs", "question_pattern"]
        widgets = {"question_pattern": forms.TextInput()}

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for name in ("action_verbs", "knowledge_verbs"):
            if not data.get(name):
                data[name] = None  # empty = use routing_core's default
        return data


# The lexical scorer learns a route's identifier as one of its texts (docs/decisions.md):
# the form says so, in words a product person uses.
NAME_HELP = (
    f"What agents receive: {IDENTIFIER_RULE} (refund_request). Leave it blank to make one from"
    " the name. Routing also learns from its words, so name the route for what customers ask"
    " about."
)
DISPLAY_NAME_HELP = "What people read, in any language (Réclamations, Änderung, 払い戻し)."


class _Identified(PackForm):
    """A route form: the display name in any language, and the identifier made from it.

    A blank identifier is made from the display name. On a new route, a name that is no
    identifier ("réclamations") becomes the display name and the identifier is made from it;
    an existing route's identifier is never changed behind the person's back, so there the
    form says why it is refused and suggests one.
    """

    is_new = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["name"].required = False

    def clean(self) -> dict[str, Any]:
        data: dict[str, Any] = super().clean() or self.cleaned_data
        name, shown = data.get("name") or "", (data.get("display_name") or "").strip()
        taken = self._taken()
        if not name and not shown:
            self.add_error("name", "Give the route a name.")
        elif not name:
            data["name"] = self.instance.name = suggest_identifier(shown, taken)
        elif not is_identifier(name) and self.is_new and not shown:
            data["display_name"] = self.instance.display_name = name
            data["name"] = self.instance.name = suggest_identifier(name, taken)
        elif not is_identifier(name):
            suggestion = suggest_identifier(shown or name, taken)
            self.add_error(
                "name",
                f"“{name}” cannot be an identifier: use {IDENTIFIER_RULE}. Try “{suggestion}”;"
                " the name people read goes in the Name field.",
            )
        if (data.get("display_name") or "").strip() == data.get("name"):
            data["display_name"] = self.instance.display_name = ""  # nothing more to read
        return data

    def _taken(self) -> set[str]:
        routes = Route.objects.filter(profile_id=self.instance.profile_id)
        return set(routes.exclude(pk=self.instance.pk).values_list("name", flat=True))


class RouteForm(_Identified):
    pack_fields = {
        "display_name": "display_name",
        "name": "name",
        "description": "description",
        "examples": "examples",
        "keywords": "keywords",
        "never": "never",
        "action": "action_kind",
        "kind": "action_kind",
        "agent": "delegate_agent",
        "message": "stuck_message",
    }
    examples = LinesField(help_text="One per line; paste many at once.")
    keywords = CommaListField(help_text="Comma-separated; phrases allowed.")
    never = LinesField(
        help_text="Phrases that must not route here (checked by test runs).",
        widget=forms.Textarea(attrs={"rows": 2}),
    )

    class Meta:
        model = Route
        fields = [
            "display_name",
            "name",
            "description",
            "examples",
            "keywords",
            "never",
            "action_kind",
            "delegate_agent",
            "stuck_message",
        ]
        labels = {
            "display_name": "Name",
            "name": "Identifier",
            "action_kind": "Action",
            "delegate_agent": "Delegate to agent",
        }
        help_texts = {
            "display_name": DISPLAY_NAME_HELP,
            "name": NAME_HELP,
            "delegate_agent": "Only for delegate: the agent id (e.g. order-agent).",
            "stuck_message": "Only for stuck: what the customer reads (defaults to the description).",
        }
        widgets = {
            "description": forms.TextInput(),
            "stuck_message": forms.TextInput(),
        }


class RouteAddForm(_Identified):
    is_new = True
    pack_fields = {
        "display_name": "display_name",
        "name": "name",
        "description": "description",
        "examples": "examples",
    }
    examples = LinesField(help_text="One per line.", widget=forms.Textarea(attrs={"rows": 3}))

    class Meta:
        model = Route
        fields = ["display_name", "name", "description", "examples"]
        labels = {"display_name": "Name", "name": "Identifier"}
        help_texts = {"display_name": DISPLAY_NAME_HELP, "name": NAME_HELP}
        widgets = {"description": forms.TextInput()}


CONDITIONS = [
    ("", "—"),
    ("keywords", "has any of the keywords"),
    ("regex", "matches the pattern"),
]
_CONDITION = re.compile(r"\.all\[(\d+)\]")


class RuleForm(PackForm):
    """A rule built from parts: keywords, a pattern, or "all of" several such conditions.

    "All of" is a list of condition rows (a kind and its text), never JSON typed by hand; an
    imported nested `all` is flattened into rows, as routing_core flattens it when compiling.
    """

    pack_fields = {
        "route": "route_name",
        "match": "match_kind",
        "keywords": "keywords",
        "regex": "regex",
        "examples": "examples",
    }
    keywords = CommaListField(
        label="Any of these keywords", help_text="Comma-separated; phrases allowed."
    )
    examples = LinesField(
        help_text="Messages this rule must match, one per line: ticked below as you type.",
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    try_message = forms.CharField(
        required=False,
        label="Try a message",
        help_text="Not saved: see whether the rule would catch it.",
    )

    class Meta:
        model = Rule
        fields = ["route_name", "match_kind", "keywords", "regex", "examples"]
        labels = {"route_name": "Route", "match_kind": "Match", "regex": "Pattern"}
        help_texts = {"regex": "A regular expression searched in the message."}
        widgets = {"regex": forms.TextInput(attrs={"class": "mono"})}

    def __init__(self, *args: Any, profile: Profile, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        names = list(profile.routes.values_list("name", flat=True))
        current = self.instance.route_name
        if current and current not in names:
            names.append(current)
        self.fields["route_name"] = forms.ChoiceField(
            choices=[(n, n) for n in names], label="Route"
        )
        rows = _condition_rows(self.instance.all_of)
        count = max(3, len(rows) + 1, self._posted_rows())
        for i in range(count):
            kind, text = rows[i] if i < len(rows) else ("", "")
            self.fields[f"cond_kind_{i}"] = forms.ChoiceField(
                choices=CONDITIONS, required=False, initial=kind, label=f"Condition {i + 1}"
            )
            self.fields[f"cond_value_{i}"] = forms.CharField(
                required=False, initial=text, label=f"Condition {i + 1} text"
            )
        self.condition_count = count

    def _posted_rows(self) -> int:
        found = [int(k.rpartition("_")[2]) for k in self.data if k.startswith("cond_kind_")]
        return max(found, default=-1) + 1

    def conditions(self) -> list[tuple[Any, Any]]:
        """The condition rows as (kind field, text field) pairs, for the template."""
        return [
            (self[f"cond_kind_{i}"], self[f"cond_value_{i}"]) for i in range(self.condition_count)
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        conditions: list[dict[str, Any]] = []
        for i in range(self.condition_count):
            kind, text = (
                data.get(f"cond_kind_{i}") or "",
                (data.get(f"cond_value_{i}") or "").strip(),
            )
            if kind == "keywords" and text:
                conditions.append({"keywords": CommaListField().to_python(text)})
            elif kind == "regex" and text:
                conditions.append({"regex": text})
            elif text and not kind:
                self.add_error(f"cond_kind_{i}", "Pick keywords or a pattern for this text.")
        self.instance.all_of = conditions if data.get("match_kind") == "all" else []
        return data

    def add_pack_errors(self, errors: list[Problem], prefix: str = "") -> None:
        """An "all of" condition's problem lands next to its row."""
        rest = []
        for path, message in errors:
            found = _CONDITION.search(path)
            if found and f"cond_value_{found.group(1)}" in self.fields:
                self.add_error(f"cond_value_{found.group(1)}", plain_message(message, path))
            elif path.endswith(".match.all"):
                self.add_error("match_kind", "Add at least one condition.")
            else:
                rest.append((path, message))
        super().add_pack_errors(rest, prefix)


def _condition_rows(all_of: Any) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for condition in all_of or []:
        if not isinstance(condition, dict):
            continue
        if "all" in condition:
            rows += _condition_rows(condition["all"])
        elif "keywords" in condition:
            rows.append(("keywords", ", ".join(condition["keywords"] or [])))
        elif "regex" in condition:
            rows.append(("regex", str(condition["regex"])))
    return rows


class ToolForm(PackForm):
    pack_fields = {
        "name": "name",
        "description": "description",
        "trigger_keywords": "trigger_keywords",
        "always_include": "always_include",
    }
    trigger_keywords = CommaListField(
        help_text="Comma-separated. Empty = bound on every action turn."
    )

    class Meta:
        model = Tool
        fields = ["name", "description", "trigger_keywords", "always_include"]
        widgets = {"description": forms.TextInput()}
