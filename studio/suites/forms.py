"""Forms of the test-suite pages: one test case, a bulk import, a threshold to apply."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings

from studio.models import Profile, TestCase

UNMATCHED_CHOICE = ("", "(unmatched) — no route may take it")


# What a person types for "the turn keeps no tool at all". A tool's name has no space
# (routing_core.pack.TOOL_NAME_PATTERN), so it cannot be a tool; "[]", the CSV files' way of
# saying it, is taken too.
NO_TOOLS = "no tools"


class ToolsField(forms.CharField):
    """Blank: tools not checked; "no tools": none kept; else comma-separated tool names."""

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list):
            return ", ".join(value) if value else NO_TOOLS
        return value

    def to_python(self, value: Any) -> list[str] | None:  # type: ignore[override]
        text = (value or "").strip()
        if not text:
            return None
        if " ".join(text.lower().split()) in (NO_TOOLS, "[]"):
            return []
        return [name.strip() for name in text.split(",") if name.strip()]


class TestCaseForm(forms.ModelForm):  # type: ignore[type-arg]
    __test__ = False  # not a pytest test class

    revision = forms.IntegerField(widget=forms.HiddenInput, required=False)
    expected_tools = ToolsField(
        required=False,
        label="Tools it must keep",
        help_text="Comma-separated; other tools may be kept too. Blank: not checked; "
        f"“{NO_TOOLS}”: the turn must keep none at all.",
    )
    dropped_tools = ToolsField(
        required=False,
        label="Tools it must drop",
        help_text="Comma-separated tools the turn must not keep. Blank: not checked.",
    )

    class Meta:
        model = TestCase
        fields = [
            "message",
            "expected_route",
            "incumbent",
            "expected_verdict",
            "expected_triage",
            "expected_tools",
            "exact_tools",
            "dropped_tools",
            "conversation",
            "turn",
        ]
        widgets = {"message": forms.Textarea(attrs={"rows": 2})}
        labels = {"exact_tools": "Exactly these tools, no others"}
        help_texts = {
            "incumbent": "The route the conversation is in (the first turn's, in a conversation).",
            "conversation": "Turns with the same label run in order; each starts where the "
            "previous turn landed.",
            "turn": "Order within the conversation.",
        }

    def __init__(self, *args: Any, profile: Profile, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk and not self.is_bound:
            self.initial["revision"] = self.instance.revision
        for field in ("expected_verdict", "expected_triage"):
            choices = list(self.fields[field].choices)  # type: ignore[attr-defined]
            self.fields[field].choices = [("", "not checked"), *choices[1:]]  # type: ignore[attr-defined]
        names = list(profile.routes.values_list("name", flat=True))
        for field, first in (("expected_route", UNMATCHED_CHOICE), ("incumbent", ("", "none"))):
            current = getattr(self.instance, field) or ""
            extra = [current] if current and current not in names else []
            self.fields[field] = forms.ChoiceField(
                choices=[first, *((n, n) for n in names + extra)],
                required=False,
                label=self.fields[field].label,
                help_text=self.fields[field].help_text,
            )


class ImportForm(forms.Form):
    FORMATS = [("auto", "detect"), ("csv", "CSV"), ("jsonl", "JSONL")]

    text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
        required=False,
        strip=False,  # a leading blank line is a line: reported line numbers must match the file
        label="Paste cases",
    )
    upload = forms.FileField(required=False, label="…or upload a .csv / .jsonl file")
    format = forms.ChoiceField(choices=FORMATS, initial="auto", required=False)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        upload = data.get("upload")
        limit = settings.STUDIO_MAX_IMPORT_BYTES
        if upload is not None and upload.size > limit:
            # Only the size is used: the uploaded file's name never becomes a path.
            raise forms.ValidationError(f"The file is larger than the {limit // 1024} KB limit.")
        if len(data.get("text") or "") > limit:
            raise forms.ValidationError(f"The text is longer than the {limit // 1024} KB limit.")
        if upload is not None:
            try:
                data["text"] = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise forms.ValidationError("The file is not UTF-8 text.") from None
        if not (data.get("text") or "").strip():
            raise forms.ValidationError("Paste some cases or choose a file.")
        return data


class ApplyThresholdsForm(forms.Form):
    floor = forms.CharField(required=False)  # blank: the scorer's own floor
    margin = forms.FloatField(min_value=0, max_value=1)
    revision = forms.IntegerField(widget=forms.HiddenInput)

    def clean_floor(self) -> float | None:
        text = (self.cleaned_data.get("floor") or "").strip()
        if not text or text == "none":
            return None
        try:
            return float(text)
        except ValueError:
            raise forms.ValidationError("The floor is a number or blank.") from None
