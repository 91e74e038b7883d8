"""Every limit on a pack, in one place: the schema, the builder, the studio and the fetcher read them.

docs/pack-format.md, Limits, states them; docs/reliability.md, "Pack limits", measures what a
pack at each of them, and at all of them at once, costs to validate, build, ship and load.

The per-item limits (routes, items of one list, characters of one text) say what one field may
hold; the per-pack totals (`MAX_PACK_TEXTS`, `MAX_PACK_CHARS`, `MAX_PACK_REGEX_CHARS`) bound
what they multiply to. Without the totals, 2,000 routes of 5,000 examples each were within the
limits, and such a pack could not be learned in bounded time and memory, nor shipped. With them
every pack within the limits builds in bounded time and memory, and its size is bounded by
construction (`max_pack_bytes`) below what `PackFetcher` accepts (`MAX_PACK_BYTES`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# One field.
MAX_ROUTES = 2_000
MAX_ITEMS = 5_000  # examples, keywords, never-phrases of one route; rules; tools; lexicon words
MAX_TEXT = 2_000  # one example, keyword, phrase or regex
MAX_DESCRIPTION = 8_000  # one description (route, tool, profile) or stuck message
MAX_ALL_MATCHES = 64  # matches inside one `all`
MAX_NAME = 64  # a route name or profile slug
MAX_TOOL_NAME = 128  # a tool name or an agent id
MAX_DISPLAY_NAME = 200
MAX_LEXICON_WORD = 64

# The whole pack. A "text" is one item of a list of texts: a route's example, keyword or
# never-phrase, an out-of-scope example, a rule's keyword or example, a tool's trigger keyword.
# 50,000 texts is 2,000 routes of 25 examples, the scale the lexical scorer is measured at
# (docs/benchmarks.md, Scale).
MAX_PACK_TEXTS = 50_000
# Characters of all texts, descriptions, stuck messages and regexes together (names and
# lexicon words aside): about 50 characters a text at MAX_PACK_TEXTS.
MAX_PACK_CHARS = 2_500_000
# Characters of all regexes together (rules and the question pattern): each is compiled and
# checked for catastrophic backtracking when the pack is validated, at every save.
MAX_PACK_REGEX_CHARS = 100_000

# The stored lexical model (docs/pack-format.md, Lexical scorer). Its learner keeps what it
# stores within these by construction (`scorers/_encoding.within_budget`), and a pack whose
# model exceeds them is refused. A pack of 2,000 routes of 25 examples stores about 2.8 M
# cells, 250 k terms and 3.2 M characters of terms (docs/reliability.md, "Pack limits").
MAX_MODEL_TERMS = 500_000
MAX_MODEL_CELLS = 4_000_000
MAX_MODEL_TERM_CHARS = 4_000_000  # all of its terms' characters together
# The semantic view's table: at most this many dimensions, at most this many routes.
MAX_SEMANTIC_DIMS = 512
MAX_SEMANTIC_ROUTES = 200

# A message, as routed: its first MAX_MESSAGE_CHARS characters (the rest is ignored).
MAX_MESSAGE_CHARS = 16_384

# Bytes of JSON outside texts, per route (name, display name, action, keys), per rule (its
# route, the keys of up to MAX_ALL_MATCHES matches) and per tool (its name, keys, flag).
_ROUTE_BYTES = 2_048
_RULE_BYTES = 2_048
_TOOL_BYTES = 512


def _base64(n_bytes: int) -> int:
    return 4 * ((n_bytes + 2) // 3)


def max_pack_bytes() -> int:
    """An upper bound on the JSON bytes of any pack within the limits, its stored model included.

    Every character of text is at most 6 bytes of JSON (a `\\u00XX` escape; UTF-8 is at most
    4), every text at most 8 more (quotes, comma, a key's share); routes, rules and tools
    their fixed share above; lexicon words are letters (4 bytes a character at most). The
    model's terms are words (4 bytes a character at most, 3 more each for quotes and comma);
    its `cells` (uint32) and `weights` (float16), `idf` (float16 a term), `bias` (float16 a
    route) and the semantic view (float16) are base64, 4 bytes per 3.
    """
    text = 6 * MAX_PACK_CHARS + 8 * MAX_PACK_TEXTS
    structure = _ROUTE_BYTES * MAX_ROUTES + (_RULE_BYTES + _TOOL_BYTES) * MAX_ITEMS + 65_536
    lexicons = 2 * MAX_ITEMS * (4 * MAX_LEXICON_WORD + 3)
    terms = 4 * MAX_MODEL_TERM_CHARS + 3 * MAX_MODEL_TERMS + _base64(2 * MAX_MODEL_TERMS)
    cells = 2 * _base64(MAX_MODEL_CELLS * 3)  # 4 + 2 bytes a cell, in two base64 strings
    routes = _base64(2 * (MAX_ROUTES + 1))
    semantic = _base64(2 * (MAX_SEMANTIC_DIMS + 1) * MAX_SEMANTIC_ROUTES)
    return text + structure + lexicons + terms + cells + routes + semantic + 4_096


# What `PackFetcher` and the route server accept as one pack document (bytes of JSON, after
# any Content-Encoding is undone): the bound above, rounded up to whole MiB, so that every
# pack the studio can publish is one an agent can pull (a test holds them together).
MAX_PACK_BYTES = -(-max_pack_bytes() // 2**20) * 2**20


def total_errors(
    document: Any, kinds: tuple[str, ...] = ("texts", "chars", "regex")
) -> list[tuple[str, str]]:
    """Where a pack document goes past a per-pack total, as `(json path, reason)` pairs.

    Reads the raw document (mappings and lists) or the pack's own models alike, in time linear
    in its size, so the schema can refuse the regex total before any regex is compiled. The
    path is the field where the total is first crossed, so that an editor sees the refusal
    next to a field that crossed it. `kinds`: which totals to check ("texts", "chars",
    "regex").
    """
    counter = _Totals()
    _count_pack(document, counter)
    totals = {"texts": counter.texts, "chars": counter.chars, "regex": counter.regex_chars}
    return [
        (path, _SAYS[kind].format(total=totals[kind], limit=_LIMITS[kind]))
        for kind, path in counter.crossed.items()
        if kind in kinds
    ]


def total_kind(message: str) -> str | None:
    """Which per-pack total a problem's message is about ("texts", "chars", "regex"), or None.

    An editor that compares a pack's problems before and after an edit uses it: the totals'
    messages carry the count, so the same total past its limit reads differently as it moves.
    """
    return next((kind for kind, said in _SAID.items() if said.fullmatch(message)), None)


# The per-pack totals, in the order `pack_totals` gives them.
TOTAL_KINDS = ("texts", "chars", "regex")


def pack_totals(document: Any) -> tuple[int, int, int]:
    """A pack document's texts, characters and regex characters (TOTAL_KINDS), as counted."""
    counter = _Totals()
    _count_pack(document, counter)
    return counter.texts, counter.chars, counter.regex_chars


_LIMITS = {"texts": MAX_PACK_TEXTS, "chars": MAX_PACK_CHARS, "regex": MAX_PACK_REGEX_CHARS}
_SAYS = {
    "texts": (
        "the pack would hold {total:,} texts in all (examples, keywords, never-phrases,"
        " out-of-scope examples, rule keywords and examples, trigger keywords); a pack holds"
        " at most {limit:,}"
    ),
    "chars": (
        "the pack's texts, descriptions, stuck messages and regexes would hold {total:,}"
        " characters in all; a pack holds at most {limit:,}"
    ),
    "regex": (
        "the pack's regexes would hold {total:,} characters in all; a pack holds at most {limit:,}"
    ),
}


# Each total's message as a pattern, any count in it.
_SAID = {
    kind: re.compile(
        re.escape(says)
        .replace(re.escape("{total:,}"), "[0-9,]+")
        .replace(re.escape("{limit:,}"), re.escape(f"{_LIMITS[kind]:,}"))
    )
    for kind, says in _SAYS.items()
}


class _Totals:
    """Running totals of a pack's texts, characters and regex characters, and the path where
    each first went past its limit."""

    def __init__(self) -> None:
        self.texts = 0
        self.chars = 0
        self.regex_chars = 0
        self.crossed: dict[str, str] = {}

    def texts_in(self, items: Any, path: str) -> None:
        """A list of texts (examples, keywords, ...)."""
        if not isinstance(items, (list, tuple)):
            return
        self.texts += len(items)
        self.chars += sum(len(t) for t in items if isinstance(t, str))
        self._check(path)

    def text(self, value: Any, path: str, *, regex: bool = False) -> None:
        """One text outside a list (a description, a stuck message, a regex)."""
        if not isinstance(value, str):
            return
        self.chars += len(value)
        if regex:
            self.regex_chars += len(value)
        self._check(path)

    def _check(self, path: str) -> None:
        for kind, total in (("texts", self.texts), ("chars", self.chars)):
            if total > _LIMITS[kind]:
                self.crossed.setdefault(kind, path)
        if self.regex_chars > MAX_PACK_REGEX_CHARS:
            self.crossed.setdefault("regex", path)


def _get(item: Any, key: str) -> Any:
    """A field of a raw mapping or of a pack model alike (None when absent)."""
    if isinstance(item, Mapping):
        return item.get(key)
    return getattr(item, key, None)


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def _count_pack(document: Any, counter: _Totals) -> None:
    counter.text(_get(_get(document, "profile"), "description"), "profile.description")
    for i, route in enumerate(_items(_get(document, "routes"))):
        where = f"routes[{i}]"
        counter.text(_get(route, "description"), f"{where}.description")
        for field in ("examples", "keywords", "never"):
            counter.texts_in(_get(route, field), f"{where}.{field}")
        counter.text(_get(_get(route, "action"), "message"), f"{where}.action.message")
    counter.texts_in(_get(document, "out_of_scope"), "out_of_scope")
    for i, rule in enumerate(_items(_get(document, "rules"))):
        counter.texts_in(_get(rule, "examples"), f"rules[{i}].examples")
        _count_match(_get(rule, "match"), f"rules[{i}].match", counter, depth=0)
    for i, tool in enumerate(_items(_get(document, "tools"))):
        counter.text(_get(tool, "description"), f"tools[{i}].description")
        counter.texts_in(_get(tool, "trigger_keywords"), f"tools[{i}].trigger_keywords")
    pattern = _get(_get(document, "triage"), "question_pattern")
    counter.text(pattern, "triage.question_pattern", regex=True)


def _count_match(match: Any, where: str, counter: _Totals, depth: int) -> None:
    if depth > MAX_ALL_MATCHES:  # deeper than any valid pack nests: the schema refuses it
        return
    counter.texts_in(_get(match, "keywords"), f"{where}.keywords")
    counter.text(_get(match, "regex"), f"{where}.regex", regex=True)
    for j, inner in enumerate(_items(_get(match, "all"))[: MAX_ALL_MATCHES + 1]):
        _count_match(inner, f"{where}.all[{j}]", counter, depth + 1)
