"""What changes between two packs: a field-by-field diff, and the test cases whose verdict flips.

Routes and tools are matched by name, rules by their route and match (a rule has no name), the
profile's settings by key. A verdict flip is a saved test case whose route, verdict kind or kept
tools differ when routed on the old pack and on the new one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from routing_core import DEFAULT_ACTION_VERBS, DEFAULT_KNOWLEDGE_VERBS, Pack, Router
from studio.models import TestCase

ChangeKind = Literal["added", "removed", "changed"]
SECTIONS = ("profile", "routes", "rules", "tools", "policy", "scorer", "triage", "lexicons")
_DEFAULT_LEXICONS = {
    "action_verbs": DEFAULT_ACTION_VERBS,
    "knowledge_verbs": DEFAULT_KNOWLEDGE_VERBS,
}


@dataclass(frozen=True)
class Change:
    """One difference: a whole object added or removed, or one field of it changed."""

    section: str
    name: str
    kind: ChangeKind
    field: str = ""
    old: str = ""
    new: str = ""
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """What a pack does with one test case."""

    route: str | None
    verdict: str
    tools: tuple[str, ...]

    def __str__(self) -> str:
        tools = ", ".join(self.tools) or "none"
        return f"{self.route or '(no route)'} · {self.verdict} · tools: {tools}"


@dataclass(frozen=True)
class Flip:
    message: str
    incumbent: str
    old: Outcome
    new: Outcome

    @property
    def what(self) -> list[str]:
        """Which parts flipped: route, verdict, tools."""
        parts = ("route", "verdict", "tools")
        return [p for p in parts if getattr(self.old, p) != getattr(self.new, p)]


@dataclass(frozen=True)
class PackDiff:
    changes: list[Change] = field(default_factory=list)
    flips: list[Flip] = field(default_factory=list)
    cases: int = 0

    @property
    def sections(self) -> list[tuple[str, list[Change]]]:
        """The changes grouped by section, in a fixed order, empty sections left out."""
        grouped = [(s, [c for c in self.changes if c.section == s]) for s in SECTIONS]
        return [(s, changes) for s, changes in grouped if changes]

    @property
    def is_empty(self) -> bool:
        return not self.changes and not self.flips

    def to_dict(self) -> dict[str, Any]:
        """The JSON form the API returns."""
        return {
            "changes": [asdict(c) for c in self.changes],
            "flips": [asdict(f) for f in self.flips],
            "cases": self.cases,
        }


def diff_packs(old: Pack | None, new: Pack, cases: Iterable[TestCase] = ()) -> PackDiff:
    """Every difference from `old` (None: nothing yet, so everything is added) to `new`."""
    before = old.model_dump(mode="json") if old is not None else _EMPTY
    after = new.model_dump(mode="json")
    changes = [
        *_settings("profile", before["profile"], after["profile"], skip={"slug"}),
        *_named("routes", before["routes"], after["routes"], lambda r: r["name"]),
        *_named("rules", before["rules"], after["rules"], _rule_key),
        *_named("tools", before["tools"], after["tools"], lambda t: t["name"]),
        *_settings("policy", _policy(before), _policy(after)),
        *_out_of_scope(before, after),
        # The kind is a policy row; a lexical model is relearned from the routes on every edit.
        *_settings("scorer", before["scorer"], after["scorer"], skip={"kind", "model"}),
        *_settings("triage", before["triage"], after["triage"], skip=set(_DEFAULT_LEXICONS)),
        *_lexicons(before["triage"], after["triage"]),
    ]
    cases = list(cases)
    flips = verdict_flips(old, new, cases) if old is not None else []
    return PackDiff(changes, flips, len(cases))


_EMPTY: dict[str, Any] = {
    "profile": {},
    "routes": [],
    "rules": [],
    "tools": [],
    "policy": {},
    "scorer": {},
    "default_route": None,
    "triage": {},
}


def verdict_flips(old: Pack, new: Pack, cases: Iterable[TestCase]) -> list[Flip]:
    """The test cases whose route, verdict kind or kept tools differ between the two packs."""
    old_router, new_router = Router(old), Router(new)
    flips = []
    for case in cases:
        before = _outcome(old_router, case)
        after = _outcome(new_router, case)
        if before != after:
            flips.append(Flip(case.message, case.incumbent, before, after))
    return flips


def _outcome(router: Router, case: TestCase) -> Outcome:
    decision = router.route(case.message, case.incumbent or None)
    return Outcome(decision.route, decision.verdict, tuple(decision.kept_tools))


def _named(
    section: str, old: list[dict[str, Any]], new: list[dict[str, Any]], key: Any
) -> list[Change]:
    before, after = _keyed(old, key), _keyed(new, key)
    changes = [
        Change(section, k, "removed", old=_text(v), removed=_lines(v))
        for k, v in before.items()
        if k not in after
    ]
    changes += [
        Change(section, k, "added", new=_text(v), added=_lines(v))
        for k, v in after.items()
        if k not in before
    ]
    for name in (k for k in after if k in before):
        changes += _fields(section, name, before[name], after[name])
    old_order = [k for k in before if k in after]
    new_order = [k for k in after if k in before]
    if old_order != new_order:
        changes.append(
            Change(
                section, "(order)", "changed", "order", "\n".join(old_order), "\n".join(new_order)
            )
        )
    return changes


def _keyed(items: list[dict[str, Any]], key: Any) -> dict[str, dict[str, Any]]:
    keyed: dict[str, dict[str, Any]] = {}
    for item in items:
        name = base = str(key(item))
        n = 1
        while name in keyed:  # identical rules: tell them apart by position
            n += 1
            name = f"{base} #{n}"
        keyed[name] = item
    return keyed


def _fields(section: str, name: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    changes = []
    for key in (k for k in new if old.get(k) != new.get(k)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, list) and isinstance(b, list) and key != "match":
            changes.append(_list_change(section, name, key, a, b))
        elif key == "match" and isinstance(a, dict) and isinstance(b, dict):
            changes.append(Change(section, name, "changed", key, _match_text(a), _match_text(b)))
        else:
            changes.append(Change(section, name, "changed", key, _text(a), _text(b)))
    return changes


def _list_change(section: str, name: str, key: str, old: list[Any], new: list[Any]) -> Change:
    added = tuple(str(x) for x in new if x not in old)
    removed = tuple(str(x) for x in old if x not in new)
    return Change(
        section,
        name,
        "changed",
        key,
        "\n".join(str(x) for x in old),
        "\n".join(str(x) for x in new),
        added,
        removed,
    )


def _settings(
    section: str, old: dict[str, Any], new: dict[str, Any], skip: set[str] | None = None
) -> list[Change]:
    keys = [k for k in {**old, **new} if k not in (skip or set())]
    return [
        Change(section, key, "changed", key, _text(old.get(key)), _text(new.get(key)))
        for key in keys
        if old and old.get(key) != new.get(key)
    ]


def _policy(document: dict[str, Any]) -> dict[str, Any]:
    if not document["policy"]:
        return {}
    return {
        **document["policy"],
        "default_route": document["default_route"],
        "scorer": document["scorer"].get("kind"),
    }


def _out_of_scope(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """The out-of-scope examples as one policy row, listing what was added and removed."""
    a, b = old.get("out_of_scope", []), new.get("out_of_scope", [])
    if not old["policy"] or a == b:
        return []
    return [_list_change("policy", "out_of_scope", "out_of_scope", a, b)]


def _lexicons(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    if not old:
        return []
    changes = []
    for key, default in _DEFAULT_LEXICONS.items():
        a = old.get(key) or sorted(default)
        b = new.get(key) or sorted(default)
        if a != b or (old.get(key) is None) != (new.get(key) is None):
            changes.append(_list_change("lexicons", key, key, a, b))
    return changes


def _rule_key(rule: dict[str, Any]) -> str:
    return f"{rule['route']} ← {_match_text(rule['match'])}"


def _match_text(match: dict[str, Any]) -> str:
    if "keywords" in match:
        return "keywords: " + ", ".join(match["keywords"])
    if "regex" in match:
        return f"regex: {match['regex']}"
    return "all of (" + "; ".join(_match_text(m) for m in match["all"]) + ")"


# What one element of a list field is called, so each line reads "example: …", not "examples: …".
_ONE = {
    "examples": "example",
    "keywords": "keyword",
    "never": "never",
    "trigger_keywords": "trigger keyword",
}


def _lines(item: dict[str, Any]) -> tuple[str, ...]:
    """An added or removed route, rule or tool as lines a person reads: one per example, etc.

    Empty fields are left out; "name" is the row's title already.
    """
    lines: list[str] = []
    for key, value in item.items():
        if key == "name" or value in (None, "", [], {}):
            continue
        label = _ONE.get(key, key.replace("_", " "))
        if isinstance(value, list):
            lines += [f"{label}: {_text(v)}" for v in value]
        elif key == "match" and isinstance(value, dict):
            lines.append(f"match: {_match_text(value)}")
        else:
            lines.append(f"{label}: {_text(value)}")
    return tuple(lines)


def _text(value: Any) -> str:
    """A value as a person reads it in a diff cell: never a JSON document."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value)
    if isinstance(value, dict):
        shown = {k: v for k, v in value.items() if v not in (None, "", [], {})}
        return "; ".join(f"{k.replace('_', ' ')}: {_text(v)}" for k, v in shown.items()) or "—"
    return json.dumps(value, ensure_ascii=False)
