"""A route's identifier, made from the name people read when they leave it to the studio.

The pack keeps identifiers strict (docs/pack-format.md, Names): agents key on them, in code
and logs, so they are a–z, 0–9, `_` and `-`. People name routes in their own language and
script; the display name keeps that ("Réclamations", "Жалобы"), and the identifier is
transliterated from it (python-slugify: `reclamations`, `zhaloby`).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from slugify import slugify

from routing_core import ROUTE_NAME_PATTERN

MAX_IDENTIFIER = 64  # docs/pack-format.md, Names
IDENTIFIER_RULE = (
    "the letters a to z without accents, digits, _ or -, no spaces, starting with a letter or"
    " a digit"
)


def is_identifier(name: str) -> bool:
    """Whether the pack accepts `name` as a route identifier."""
    return len(name) <= MAX_IDENTIFIER and re.match(ROUTE_NAME_PATTERN, name) is not None


def suggest_identifier(name: str, taken: Collection[str] = ()) -> str:
    """An identifier for a route named `name` in any language, not one of `taken`."""
    base = slugify(name, separator="_", max_length=MAX_IDENTIFIER - 4, word_boundary=True)
    base = base or "route"  # a name of emoji or punctuation only
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}_{n}", n + 1
    return candidate
