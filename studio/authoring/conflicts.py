"""An edit that lost the race to someone else's save: theirs beside yours, field by field.

The edit form carries the values it was opened with (`base`), so a refused save can tell what
the other person changed from what you typed. A field only they changed takes their value (you
typed nothing there); a field you both changed asks which to keep, yours by default; a field
only you changed keeps yours. Saving again applies the choices on top of their version
(docs/product/profiles.md, "When someone else saved first"). Your text stays in the form
whatever you choose, until a save succeeds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django import forms
from django.http import QueryDict

BASE = "base"  # the hidden input holding the values the form was opened with
TAKE = "take_"  # take_<field>=theirs: on saving, this field takes the other person's value
THEIRS = "theirs"
_NOT_COMPARED = {"revision", "try_message"}  # the lock itself; a rule's not-saved try box


@dataclass(frozen=True)
class FieldClash:
    """One field the other person changed: their value and yours, as the form shows them."""

    name: str
    label: str
    theirs: str
    yours: str
    is_yours_too: bool  # you changed it as well: a choice to make

    @property
    def choice(self) -> str:
        return f"{TAKE}{self.name}"


@dataclass(frozen=True)
class EditConflict:
    """What the page shows: who saved first, when, and what they changed."""

    message: str
    clashes: list[FieldClash]

    @property
    def choices(self) -> list[FieldClash]:
        return [c for c in self.clashes if c.is_yours_too]


def form_texts(form: forms.BaseForm) -> dict[str, str]:
    """Each compared field as a form posts it: lists as their text, booleans "true"/"false"."""
    return {name: _text(form[name].value()) for name in form.fields if name not in _NOT_COMPARED}


def base_json(form: forms.BaseForm) -> str:
    """The hidden `base`: carried over while the form is re-shown, else the stored values."""
    if form.is_bound and BASE in form.data:
        return str(form.data[BASE])
    return json.dumps(form_texts(form), ensure_ascii=False)


def with_choices(data: QueryDict) -> QueryDict:
    """The posted edit with each field ticked "take theirs" set to their value (kept in `base`
    since the conflict was shown; the revision posted makes sure it is still theirs)."""
    base = _base(data)
    if not base:
        return data
    merged = data.copy()
    for key in data:
        name = key.removeprefix(TAKE)
        if key.startswith(TAKE) and data[key] == THEIRS and name in base:
            merged[name] = base[name]
    return merged


def compare(
    yours: forms.BaseForm, theirs: forms.BaseForm, message: str
) -> tuple[EditConflict, dict[str, str]]:
    """The conflict to show, and the values the re-shown form holds.

    Args:
        yours: the form bound to what was posted (your text, before any choice).
        theirs: an unbound form of the stored object.
        message: who saved first, and when.
    """
    base = _base(yours.data)
    typed, stored = form_texts(yours), form_texts(theirs)
    clashes, shown = [], dict(typed)
    for name, their_text in stored.items():
        field, your_text = theirs.fields[name], typed.get(name, "")
        start = base.get(name) if base is not None else None
        if _same(field, their_text, your_text) or (
            start is not None and _same(field, start, their_text)
        ):
            continue  # no difference, or a change only you made: yours stands
        yours_too = start is None or not _same(field, start, your_text)
        if not yours_too:
            shown[name] = their_text  # only they changed it: you typed nothing there
        label = str(field.label or name.replace("_", " ").capitalize())
        clashes.append(FieldClash(name, label, _shown(their_text), _shown(your_text), yours_too))
    shown[BASE] = json.dumps(stored, ensure_ascii=False)
    return EditConflict(message, clashes), shown


def reshown(
    posted: QueryDict, yours: forms.BaseForm, theirs: forms.BaseForm, exc: Exception, revision: int
) -> tuple[EditConflict, QueryDict]:
    """The conflict, and the data to re-show the form with: yours, with the fields only they
    changed taken from them, the revision moved to theirs and every choice asked afresh."""
    conflict, shown = compare(yours, theirs, str(exc).removesuffix(" — reload"))
    data = posted.copy()
    for key in [k for k in data if k.startswith(TAKE)]:
        del data[key]
    for key, value in {**shown, "revision": str(revision)}.items():
        data[key] = value  # QueryDict.update would add a second value, not replace the first
    return conflict, data


def _base(data: Any) -> dict[str, str] | None:
    try:
        base = json.loads(data.get(BASE) or "null")
    except ValueError:
        return None  # a tampered base: every difference becomes a choice
    if not isinstance(base, dict):
        return None
    return {str(k): str(v) for k, v in base.items()}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _same(field: forms.Field, a: str, b: str) -> bool:
    """Equal as the field reads them ("a, b" and "a,b" are the same keywords)."""
    return bool(_read(field, a) == _read(field, b))


def _read(field: forms.Field, text: str) -> Any:
    try:
        return field.to_python(text)
    except forms.ValidationError:
        return text


def _shown(text: str) -> str:
    return {"true": "yes", "false": "no"}.get(text, text) or "(empty)"
