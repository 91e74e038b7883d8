"""Text a database can store: no NUL character, no unpaired surrogate.

JSON can spell both (`\\u0000`, `\\ud800`) and Python strings hold them, but PostgreSQL refuses
them (a NUL in text or JSON is a `DataError`, a lone surrogate cannot be encoded as UTF-8) and no
person means either. One rule, applied wherever text comes in: `load_pack` refuses a pack holding
them with the path of each string, and the studio's test-case import refuses such a cell with
its line, so nothing stored or routed from a pack ever trips over them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable_reason(text: str) -> str | None:
    """Why `text` cannot be stored, in words a person can act on, or None when it can."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return "contains a NUL character (\\u0000), which cannot be stored: remove it"
    return (
        "contains an unpaired surrogate (a broken emoji or character, e.g. \\ud83d alone), "
        "which cannot be stored: remove it or paste the character again"
    )


def unstorable_paths(document: Any) -> list[tuple[str, str]]:
    """`(json_path, reason)` for every key or string value of `document` that cannot be stored."""
    return [
        (path, f"a key {reason}" if is_key else reason)
        for path, text, is_key in _strings(document, "")
        if (reason := _why(text))
    ]


def _why(text: str) -> str | None:
    return unstorable_reason(text) if _has_unstorable(text) else None


def _has_unstorable(text: str) -> bool:
    # An ASCII string (a model's base64 arrays, most names) cannot hold a surrogate, and
    # CPython knows a string is ASCII without reading it: only NUL, a memchr, is left to find.
    return "\x00" in text if text.isascii() else _UNSTORABLE.search(text) is not None


def _strings(node: Any, path: str) -> Iterator[tuple[str, str, bool]]:
    """The strings under `node` with their paths (and whether each is a key of the object
    at that path); a list of strings is searched in one go."""
    stack: list[tuple[Any, str]] = [(node, path)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str):
            yield where or "$", value, False
        elif isinstance(value, dict):
            children = []
            for key, item in value.items():
                if isinstance(key, str) and _has_unstorable(key):
                    yield (where or "$"), key, True
                children.append((item, f"{where}.{key}" if where else str(key)))
            stack.extend(reversed(children))  # popped in document order
        elif isinstance(value, list):
            try:
                if not _has_unstorable("".join(value)):
                    continue  # the common case: a long list of clean strings (a model's terms)
            except TypeError:
                pass  # not only strings: look at each item
            stack.extend(reversed([(item, f"{where}[{i}]") for i, item in enumerate(value)]))
