"""Template filters that name things as a person sees them (see `studio.shared.labels`)."""

from __future__ import annotations

import re
from typing import Any

from django import template

from studio.shared import labels, languages

register = template.Library()


@register.filter
def place(path: str, pack: Any = None) -> str:
    """`routes[0].examples[1]` → "billing → example 2 ‘…’" (numbered without a pack)."""
    return labels.place(str(path), pack)


@register.filter
def plain_message(message: str, path: str = "") -> str:
    """A pydantic message in plain words."""
    return labels.plain_message(str(message), str(path))


@register.filter
def action_label(action: str) -> str:
    return labels.action_label(str(action))


@register.filter
def item_number(path: str) -> str:
    """The last index of a path, counted from 1: `routes[2].examples[4]` → "5"."""
    found = re.findall(r"\[(\d+)\]", str(path))
    return str(int(found[-1]) + 1) if found else ""


@register.filter
def language_name(code: str | None) -> str:
    """A stored language code in plain words: "es" → "Spanish" ("" for none)."""
    return languages.name(str(code or ""))


@register.filter
def message_language(text: str | None) -> str:
    """A message's language in plain words, detected on display ("" when unsure): for pages of
    at most a hundred messages (~50 µs each, docs/decisions.md)."""
    return languages.name_of(str(text or ""))
