"""Plain labels for what a person sees: pack paths, pydantic messages and audit actions in words.

routing_core speaks in JSON paths (`routes[0].examples[0]`) and pydantic messages ("List should
have at least 1 item after validation, not 0"), which are right for a CLI and a log but not for a
product person. Every studio message that names a place or a problem goes through here — lint,
overlap, the pack badge, form errors and the history — so the same thing reads the same way on
every page: "billing → example 1 ‘why was I charged…’".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from studio.shared.cosine_thresholds import CLEARED_ACTION, NOTICE_KEY

_STEP = re.compile(r"([A-Za-z_]+)|\[(\d+)\]")
_QUOTE_AT = 40

# Pack field names and studio model field names, as a person calls them.
FIELDS: dict[str, str] = {
    "profile": "profile",
    "slug": "agent id",
    "name": "name",
    "description": "description",
    "routes": "routes",
    "rules": "rules",
    "tools": "tools",
    "examples": "examples",
    "keywords": "keywords",
    "never": "never-phrases",
    "action": "action",
    "agent": "agent to delegate to",
    "delegate_agent": "agent to delegate to",
    "action_kind": "action",
    "message": "message",
    "stuck_message": "message when stuck",
    "route": "route",
    "route_name": "route",
    "match": "match",
    "match_kind": "match",
    "regex": "pattern",
    "all": "all of",
    "all_of": "all of",
    "default_route": "default route",
    "policy": "policy",
    "floor": "floor",
    "near_tie_margin": "near-tie margin",
    "menu_size": "menu size",
    "strictness": "strictness",
    "scorer": "scorer",
    "scorer_kind": "scorer",
    "triage": "triage",
    "mode": "triage mode",
    "triage_mode": "triage mode",
    "action_verbs": "action verbs",
    "knowledge_verbs": "knowledge verbs",
    "question_pattern": "question pattern",
    "ambiguity_confidence_floor": "ambiguity confidence floor",
    "min_action_signals": "fewest action signals",
    "version": "version",
    "order": "position",
    "text": "message",
    "margin": "near-tie margin",
    "expected_route": "expected route",
    "expected_verdict": "expected verdict",
    "expected_triage": "expected triage",
    "expected_tools": "expected tools",
    "format_version": "format version",
    "checksum": "checksum",
}
_ITEMS = {"routes": "route", "rules": "rule", "tools": "tool"}
_ENTRIES = {
    "examples": "example",
    "keywords": "keyword",
    "never": "never-phrase",
    "all": "condition",
}


def field_label(name: str) -> str:
    """A field's name in words: `near_tie_margin` → "near-tie margin"."""
    return FIELDS.get(name, name.replace("_", " "))


def quote(text: str) -> str:
    """A person's text in typographic quotes, clipped so a label stays on one line."""
    text = " ".join(str(text).split())
    if len(text) <= _QUOTE_AT:
        return f"‘{text}’"
    clipped = text[:_QUOTE_AT]
    return f"‘{clipped.rsplit(' ', 1)[0] if ' ' in clipped else clipped}…’"  # at a word


def place(path: str, pack: Any = None) -> str:
    """Where a pack path points, as a person sees it.

    Args:
        path: a routing_core JSON path such as `routes[0].examples[2]` or `policy.floor`.
        pack: the pack (a dict or a `Pack`) the path points into; names and texts come from it.
            Without one, items are numbered ("route 1 → example 3").

    Returns:
        "billing → example 3 ‘why was I charged…’", "rule 2 (to refunds) → pattern",
        "policy → floor", "the pack" for `$`.
    """
    steps = [(name, int(index) if index else None) for name, index in _STEP.findall(path)]
    if not steps:
        return "the pack"
    parts: list[str] = []
    owner = ""  # the pack key of the list an index picks from
    node: Any = pack
    for key, index in steps:
        if index is None:
            node, owner = _get(node, key), key
            parts.append(field_label(key))
        else:
            node = _at(node, index)
            if parts:
                parts.pop()
            parts.append(_item(owner, index, node))
    return " → ".join(parts)


def _item(key: str, index: int, node: Any) -> str:
    if key in _ITEMS:
        if key == "rules":
            route = _get(node, "route")
            return f"rule {index + 1}" + (f" (to {route})" if route else "")
        name = _get(node, "name")
        return str(name) if name else f"{_ITEMS[key]} {index + 1}"
    noun = _ENTRIES.get(key, field_label(key).rstrip("s") or "item")
    label = f"{noun} {index + 1}"
    return f"{label} {quote(node)}" if isinstance(node, str) and node else label


def _get(node: Any, key: str) -> Any:
    if isinstance(node, Mapping):
        return node.get(key)
    return getattr(node, key, None)


def _at(node: Any, index: int) -> Any:
    if isinstance(node, Sequence) and not isinstance(node, str) and 0 <= index < len(node):
        return node[index]
    return None


def match_text(kind: str, keywords: Sequence[str], regex: str, all_of: Any) -> str:
    """A rule's match in words: "any of ‘refund’, ‘money back’", "all of: …; …"."""
    if kind == "keywords":
        return "any of " + ", ".join(quote(k) for k in keywords) if keywords else "no keywords yet"
    if kind == "regex":
        return f"the pattern {regex}" if regex else "no pattern yet"
    parts = [_condition_text(c) for c in all_of or [] if isinstance(c, Mapping)]
    return "all of: " + "; ".join(parts) if parts else "no conditions yet"


def _condition_text(condition: Mapping[str, Any]) -> str:
    if "keywords" in condition:
        return "any of " + ", ".join(quote(k) for k in condition["keywords"] or [])
    if "regex" in condition:
        return f"the pattern {condition['regex']}"
    if "all" in condition:
        return match_text("all", [], "", condition["all"])
    return ", ".join(f"{field_label(str(k))} {value_text(v)}" for k, v in condition.items())


# -- messages ---------------------------------------------------------------------------------------

_MESSAGES: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"List should have at least (\d+) items? after validation, not 0"),
        "add at least {0}",
    ),
    (
        re.compile(r"List should have at least (\d+) items? after validation, not \d+"),
        "needs at least {0}",
    ),
    (
        re.compile(r"List should have at most (\d+) items? after validation, not \d+"),
        "at most {0} allowed",
    ),
    (re.compile(r"String should have at least 1 character"), "cannot be empty"),
    (re.compile(r"String should have at least (\d+) characters"), "needs at least {0} characters"),
    (re.compile(r"String should have at most (\d+) characters"), "at most {0} characters"),
    (re.compile(r"Field required"), "is required"),
    (re.compile(r"Extra inputs are not permitted"), "is not a setting this pack format knows"),
    (re.compile(r"Input should be greater than or equal to (\S+)"), "must be {0} or more"),
    (re.compile(r"Input should be greater than (\S+)"), "must be more than {0}"),
    (re.compile(r"Input should be less than or equal to (\S+)"), "must be {0} or less"),
    (re.compile(r"Input should be less than (\S+)"), "must be less than {0}"),
    (re.compile(r"Input should be a valid (?:number|integer|float).*"), "must be a number"),
    (re.compile(r"Input should be a valid string"), "must be text"),
    (re.compile(r"Input should be a valid (?:list|array|tuple)"), "must be a list"),
    (re.compile(r"Input should be a valid dictionary.*"), "is missing or malformed"),
    (re.compile(r"Input should be (.+)"), "must be {0}"),
]
_NOUN_COUNTS = {"routes": "one route", "examples": "one example", "rules": "one rule"}


def plain_message(message: str, path: str = "") -> str:
    """A pydantic message in plain words; routing_core's own messages are already plain."""
    message = message.removeprefix("Value error, ").replace("Tuple should", "List should")
    for pattern, words in _MESSAGES:
        found = pattern.fullmatch(message.strip())
        if found:
            text = words.format(*found.groups())
            last = _STEP.findall(path)[-1][0] if _STEP.findall(path) else ""
            if text == "add at least 1" and last:
                return f"add at least {_NOUN_COUNTS.get(last, 'one')}"
            return text
    return message


def plain_problem(path: str, message: str, pack: Any = None) -> str:
    """One problem as one line: "billing → example 2 ‘…’: cannot be empty"."""
    return f"{place(path, pack)}: {plain_message(message, path)}"


_INDEXED = re.compile(r"([A-Za-z_]+)\[(\d+)\]")
_STEP_DOT = re.compile(r"(?<=\])\.|\.(?=[A-Za-z_]+\[)")  # a dot between steps, not in "nlu.yml"


def source_line(path: str, message: str) -> str:
    """An importer's note or problem in words, its places counted from 1.

    `data/nlu.yml: nlu[6].examples[26]` → "data/nlu.yml, nlu entry 7 → example 27: …"; a
    problem of the whole upload (`$`) is just its message.
    """
    file, sep, inner = path.rpartition(": ")
    if not sep:
        file, inner = "", path
    inner = "" if inner == "$" else _INDEXED.sub(_source_step, _STEP_DOT.sub(" → ", inner))
    where = ", ".join(part for part in (file, inner) if part)
    return f"{where}: {message}" if where else message[:1].upper() + message[1:]


def _source_step(found: re.Match[str]) -> str:
    name, index = found.group(1), int(found.group(2)) + 1
    noun = _SOURCE_NOUNS.get(name, name.rstrip("s").replace("_", " ") or "item")
    return f"{noun} {index}"


# The lists importers number, as a person names one of their items.
_SOURCE_NOUNS = {"nlu": "nlu entry", "entities": "entity"}


# -- the history ------------------------------------------------------------------------------------

_NOUNS = {
    "route": "route",
    "rule": "rule",
    "tool": "tool",
    "testcase": "test case",
    "profile": "profile",
    "version": "",  # the object says "version 3"
    "environment": "",  # the object says which: "production (v1 → v2)"
    "token": "read token",
    "api_token": "API token",
    "user": "person",
    "readtoken": "read token",
    "apitoken": "API token",
}
_VERBS = {
    "create": "added",
    "update": "edited",
    "delete": "deleted",
    "move": "moved",
    "restore": "restored",
    "import": "imported",
    "publish": "published",
    "promote": "promoted",
    "rollback": "rolled back",
    "revoke": "revoked",
    "load_demo": "loaded the demo into",
    "roles": "changed the roles of",
    "deactivate": "deactivated",
    "activate": "reactivated",
    "password_link": "sent a set-password link to",
    "accept-repair": "applied a found fix to",
}
_SPECIAL = {
    "testcase.import": "imported test cases into",
    "route.review-conversations": "reviewed drafted test conversations for",
    "profile.update": "changed the settings of",
    CLEARED_ACTION: "cleared thresholds set in the old unit (cosine similarity) of",
}


def action_label(action: str, after: Any = None) -> str:
    """`environment.promote` → "promoted environment"; `route.update` → "edited route".

    A profile's token is named as its tokens page names it: a read token, or an event token
    (the entry's `scope`).
    """
    if action in _SPECIAL:
        return _SPECIAL[action]
    noun, _, verb = action.partition(".")
    words = _VERBS.get(verb, verb.replace("_", " "))
    if noun == "token" and _get(after or {}, "scope") == "events":
        return f"{words} event token"
    return f"{words} {_NOUNS.get(noun, noun.replace('_', ' '))}".strip()


def object_label(object_type: str, object_repr: str, after: Any, before: Any) -> str:
    """What an entry acted on; an environment names the versions it moved between."""
    if object_type == "environment":
        name = object_repr.rpartition("/")[2]
        old, new = _get(before or {}, "version"), _get(after or {}, "version")
        moved = f"v{old} → v{new}" if old else f"v{new}"
        return f"{name} ({moved})" if new else name
    if object_type == "version":
        number = _get(after or {}, "number")
        return f"version {number}" if number else object_repr.rpartition(" ")[2]
    return object_repr


@dataclass(frozen=True)
class Change:
    field: str
    before: str
    after: str
    added: tuple[str, ...] = ()  # for lists (examples, keywords): what came and went
    removed: tuple[str, ...] = ()


_HIDDEN = {"revision", "draft_revision", "updated_at", "created_at", NOTICE_KEY}


def changes(before: Any, after: Any) -> list[Change]:
    """The fields an audit entry changed, each in words (all fields for a create or delete)."""
    old = before if isinstance(before, Mapping) else {}
    new = after if isinstance(after, Mapping) else {}
    keys = [k for k in {**old, **new} if k not in _HIDDEN]
    found = [_change(k, old.get(k), new.get(k)) for k in keys if old.get(k) != new.get(k)]
    return [c for c in found if c.before != c.after or c.added or c.removed]  # None vs ""


def _change(key: str, old: Any, new: Any) -> Change:
    change = Change(field_label(key), value_text(old), value_text(new))
    if isinstance(old, list) and isinstance(new, list):
        added = tuple(value_text(v) for v in new if v not in old)
        removed = tuple(value_text(v) for v in old if v not in new)
        return Change(change.field, change.before, change.after, added, removed)
    return change


@dataclass(frozen=True)
class HistoryLine:
    action: str
    target: str
    changes: list[Change]
    notice: str = ""  # why the studio itself made the change (a migration), in words


def history_line(entry: Any) -> HistoryLine:
    """An audit entry in words: what was done, to what, and which fields changed how."""
    return HistoryLine(
        action_label(entry.action, entry.after),
        object_label(entry.object_type, entry.object_repr, entry.after, entry.before),
        changes(entry.before, entry.after),
        entry.after.get(NOTICE_KEY, "") if isinstance(entry.after, Mapping) else "",
    )


def value_text(value: Any) -> str:
    """A stored value as a person reads it: lists joined, nothing as a dash, JSON never."""
    if value is None or value == "" or value == []:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return "; ".join(f"{field_label(str(k))} {value_text(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(value_text(v) for v in value)
    return str(value)


# How a turn was decided (a Decision's `by`), as a person says it: the playground's transcript
# and the wrong turns of a suite run read alike.
DECIDED_BY = {
    "rule": "a rule decided",
    "scorer": "the scores decided",
    "continuity": "too close to call, so the conversation stayed where it was",
    "conversation": "the conversation decided",
    "default": "nothing matched, so the default route took it",
    "menu": "too close to call: the agent asks which one",
    "decider": "the menu decider picked it",
    "none": "nothing decided",
}
