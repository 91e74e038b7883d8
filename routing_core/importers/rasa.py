"""Rasa 3.x: NLU YAML files, or a whole project folder (data/*.yml, domain.yml), as routes.

- `intent` + `examples` → a route and its examples. Entity annotations (`[Berlin](city)`,
  `[Berlin](city:berlin)`, `[LA]{"entity": "city", "role": "to"}`) are stripped to their
  text and counted in the report; the entity names are remembered so that lexicons find
  the routes that use them.
- `out_of_scope` (Rasa's name for messages the assistant does not handle, also written
  `out-of-scope`, as retrieval intents `out_of_scope/<kind>`, or `nlu_fallback`, the
  fallback classifier's intent) → the pack's out-of-scope examples, as Dialogflow's fallback
  intent does, not a route.
- `synonym` and `lookup` → lexicons: keywords of the one route whose examples mark that
  entity (a synonym's words also count for the entity whose value it names); a lexicon
  that several intents mark, or none, is kept aside (`Collector._attach_lexicons`).
- `regex` → a rule when it is named after an intent, or after an entity that exactly one
  intent marks (the rule sends a matching message to it); otherwise kept aside.
- Stories, rules, the domain's responses, slots, forms and actions have no equivalent and
  are listed as left out; intents the domain declares without examples are reported.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from routing_core.errors import PackError
from routing_core.importers.files import ExportFiles, Source, items, read_export
from routing_core.importers.result import MAX_IMPORT_ITEMS, Collector, ImportResult

FORMAT = "rasa"
# [text](entity) / [text](entity:value) / [text]{"entity": …} / [text][{…}, {…}]
ANNOTATION = re.compile(
    r"\[(?P<text>[^\]\n]+)\]"
    r"(?:\((?P<plain>[^)\n]+)\)|(?P<json>\{[^}\n]*\})|(?P<list>\[\{[^\]\n]*\}\]))"
)
_LEFT_OUT_KEYS = {
    "stories": "stories (conversation paths) have no equivalent in a pack",
    "rules": "Rasa rules (dialogue policies) have no equivalent in a pack",
    "responses": "responses are the agent's answers, not routing: not imported",
    "slots": "slots have no equivalent in a pack",
    "forms": "forms have no equivalent in a pack",
    "actions": "custom actions have no equivalent in a pack",
    "entities": "entities have no equivalent in a pack (their lexicons are imported)",
    "session_config": "session settings have no equivalent in a pack",
    "e2e_actions": "end-to-end actions have no equivalent in a pack",
}
_QUIET_KEYS = {"version", "nlu", "intents"}
# Intent names Rasa's documentation and sample bots give out-of-scope messages (the part
# before a retrieval intent's "/"), written with "-", " " or "_": compared as below.
_OUT_OF_SCOPE = {"out_of_scope", "outofscope", "oos", "nlu_fallback"}
_CONFIG_KEYS = {"recipe", "language", "pipeline", "policies", "assistant_id"}


def import_rasa(source: Source, *, language: str | None = None) -> ImportResult:
    """Routes from a Rasa NLU YAML file, a project folder or a zip of one.

    Args:
        language: not used (a Rasa project has one language); accepted for a uniform call.

    Raises:
        PackError: no YAML training data, unreadable YAML, or nothing with examples.
    """
    files = read_export(source)
    collect = Collector(FORMAT)
    yaml_paths = [p for p in files.paths() if p.endswith((".yml", ".yaml"))]
    if not yaml_paths:
        raise PackError([("$", "no Rasa YAML file (.yml) was found")])
    entity_regexes: list[tuple[str, str, str]] = []
    domain_intents: list[tuple[str, str]] = []
    for path in yaml_paths:
        _read_document(files, path, collect, entity_regexes, domain_intents)
    _regex_rules(collect, entity_regexes)
    for path, intent in domain_intents:
        if collect.find(intent) is None and not is_out_of_scope(intent):
            collect.left_out(path, f"intent {intent!r} is declared but has no examples")
    return collect.finish()


def _read_document(
    files: ExportFiles,
    path: str,
    collect: Collector,
    regexes: list[tuple[str, str, str]],
    domain_intents: list[tuple[str, str]],
) -> None:
    document = files.yaml(path)
    if document is None:
        return
    if not isinstance(document, dict):
        collect.left_out(path, "not a Rasa file (its top level is not a mapping)")
        return
    nlu = document.get("nlu")
    if nlu is not None:
        _read_nlu(nlu, path, collect, regexes)
    for i, intent in enumerate(items(document.get("intents"))):
        name = next(iter(intent), None) if isinstance(intent, dict) else intent
        if isinstance(name, str):
            domain_intents.append((f"{path}: intents[{i}]", name))
    config = sorted(_CONFIG_KEYS & set(document))
    if config:
        collect.left_out(
            f"{path}: {', '.join(config)}", "the model configuration has no equivalent"
        )
    for key in document:
        if key in _CONFIG_KEYS:
            continue
        if key in _LEFT_OUT_KEYS and document[key]:
            collect.left_out(f"{path}: {key}", _LEFT_OUT_KEYS[key])
        elif key not in _LEFT_OUT_KEYS and key not in _QUIET_KEYS:
            collect.left_out(f"{path}: {key}", "not part of Rasa's NLU data: not imported")


def _read_nlu(nlu: Any, path: str, collect: Collector, regexes: list[tuple[str, str, str]]) -> None:
    if not isinstance(nlu, list):
        collect.left_out(f"{path}: nlu", "expected a list of intents, synonyms, regexes, lookups")
        return
    for i, item in enumerate(nlu):
        where = f"{path}: nlu[{i}]"
        kind = (
            next((k for k in ("intent", "synonym", "regex", "lookup") if k in item), None)
            if isinstance(item, dict)
            else None
        )
        if kind is None or not isinstance(item[kind], str):
            collect.left_out(where, "not an intent, synonym, regex or lookup entry")
            continue
        name, lines = item[kind], _examples(item.get("examples"), where, collect)
        if kind == "intent" and is_out_of_scope(name):
            _read_out_of_scope(name, lines, where, collect)
        elif kind == "intent":
            _read_intent(name, lines, where, collect)
        elif kind == "regex":
            regexes += [(name, line, f"{where}.examples[{n}]") for n, line in enumerate(lines)]
        else:
            words = [strip_annotations(line)[0] for line in lines]
            collect.add_lexicon(name, [name, *words] if kind == "synonym" else words)
        for extra in sorted(map(str, set(item) - {kind, "examples"})):
            collect.left_out(f"{where}.{extra}", f"{extra} has no equivalent in a pack")


def _examples(value: Any, where: str, collect: Collector) -> list[str]:
    """The examples of an entry: a `- ` list in one block string, or a list of `text:` items."""
    if value is None:
        return []
    if isinstance(value, list):
        texts = []
        for n, entry in enumerate(value):
            text = entry.get("text") if isinstance(entry, dict) else entry
            if isinstance(text, str):
                texts.append(text.strip())
                if isinstance(entry, dict) and entry.get("metadata"):
                    collect.left_out(f"{where}.examples[{n}].metadata", "metadata not imported")
            else:
                collect.left_out(f"{where}.examples[{n}]", "not a text example")
        return texts
    if not isinstance(value, str):
        collect.left_out(f"{where}.examples", "expected a block of '- ' lines")
        return []
    if value.count("\n") > MAX_IMPORT_ITEMS:  # before splitting it into millions of strings
        raise PackError([(f"{where}.examples", f"more than {MAX_IMPORT_ITEMS:,} lines")])
    lines = []
    for n, line in enumerate(value.splitlines()):
        line = line.strip()
        if line.startswith("- "):
            lines.append(line[2:].strip())
        elif line:
            collect.left_out(f"{where}.examples line {n + 1}", "not a '- ' list item")
    return lines


def is_out_of_scope(intent: str) -> bool:
    """Whether a Rasa intent holds the messages the assistant does not handle."""
    base = intent.partition("/")[0].strip().lower()
    return re.sub(r"[\s-]+", "_", base) in _OUT_OF_SCOPE


def _read_out_of_scope(name: str, lines: list[str], where: str, collect: Collector) -> None:
    before = len(collect.out_of_scope)
    for n, line in enumerate(lines):
        collect.add_out_of_scope(strip_annotations(line)[0], f"{where}.examples[{n}]")
    collect.came_over_as_out_of_scope(where, f"intent {name!r}", before)


def _read_intent(name: str, lines: list[str], where: str, collect: Collector) -> None:
    route = collect.route(name, where)
    stripped: dict[str, int] = {}
    for n, line in enumerate(lines):
        text, marks = strip_annotations(line)
        for mark in marks:
            stripped[mark.entity] = stripped.get(mark.entity, 0) + 1
            # a lexicon finds the route by entity, by value or by the marked text itself
            # (a synonym named "margherita" serves `[margherita](pizza_type)`)
            route.entities |= {mark.entity, mark.value, mark.text} - {""}
        collect.add_example(route, text, f"{where}.examples[{n}]")
    if stripped:
        counts = ", ".join(f"{e} ×{c}" for e, c in sorted(stripped.items()))
        collect.changed(
            f"{where}.examples",
            f"entity annotations kept as plain text (entities have no equivalent): {counts}",
        )


class Mark(NamedTuple):
    """One entity annotation: the marked text, the entity's name and its value if given."""

    text: str
    entity: str
    value: str = ""


def strip_annotations(line: str) -> tuple[str, list[Mark]]:
    """The example's text without its entity markup, and the annotations that were removed."""
    marks: list[Mark] = []

    def plain(match: re.Match[str]) -> str:
        marks.extend(_marks(match))
        return match["text"]

    return ANNOTATION.sub(plain, line), marks


def _marks(match: re.Match[str]) -> list[Mark]:
    text = match["text"]
    if match["plain"]:
        entity, _, value = match["plain"].partition(":")
        return [Mark(text, entity.strip(), value.strip())]
    try:
        parsed = json.loads(match["json"] or match["list"])
    except json.JSONDecodeError:
        return [Mark(text, "(unreadable annotation)")]
    found = parsed if isinstance(parsed, list) else [parsed]
    return [
        Mark(text, str(m.get("entity", "")), str(m.get("value", "")))
        for m in found
        if isinstance(m, dict)
    ]


def _regex_rules(collect: Collector, regexes: list[tuple[str, str, str]]) -> None:
    for name, pattern, where in regexes:
        route = collect.find(name)
        if route is None:
            users = [r for r in collect.routes.values() if name in r.entities]
            if len(users) != 1:
                who = "no intent marks" if not users else f"{len(users)} intents mark"
                collect.kept_aside(where, f"regex {name!r}: {who} this entity, so no rule")
                continue
            route = users[0]
            collect.changed(
                where, f"regex {name!r} became a rule for {route.name!r}, the one intent marking it"
            )
        collect.add_regex_rule(route, pattern, where)
