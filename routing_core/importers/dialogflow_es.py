"""Dialogflow ES: an agent export zip (`agent.json`, `intents/*.json`, `*_usersays_<lang>.json`).

One language is imported: the one asked for, else the agent's default; the examples of the
others are counted in the report. An intent's training phrases become the route's examples
(entity parts kept as their text and reported); the fallback intent's phrases are examples
of what the agent must not take (the pack's out-of-scope examples). Entity entries and synonyms
become lexicons. Responses, contexts, events, parameters and webhooks are left out.
"""

from __future__ import annotations

import re
from typing import Any

from routing_core.importers.files import ExportFiles, Source, chosen_language, items, read_agent
from routing_core.importers.result import Collector, ImportResult

FORMAT = "dialogflow-es"
USERSAYS = re.compile(r"^intents/(?P<intent>.+)_usersays_(?P<lang>[A-Za-z-]+)\.json$")
ENTRIES = re.compile(r"^entities/(?P<entity>.+)_entries_(?P<lang>[A-Za-z-]+)\.json$")
_LEFT_OUT = {
    "responses": "responses (replies, actions, parameters) are the agent's, not routing",
    "contexts": "input contexts have no equivalent in a pack",
    "events": "events have no equivalent in a pack",
    "webhookUsed": "webhooks have no equivalent in a pack",
    "followUpIntents": "follow-up links have no equivalent (each follow-up is its own route)",
    "conditionalResponses": "conditional responses are the agent's, not routing",
}


def import_dialogflow_es(source: Source, *, language: str | None = None) -> ImportResult:
    """Routes from a Dialogflow ES agent export (a zip, or the folder unpacked from one).

    Args:
        language: the language tag to import (`en`, `de`, …); the agent's default when None.

    Raises:
        PackError: no `agent.json`, an unknown language, or nothing with examples.
    """
    files, agent = read_agent(source, "Dialogflow ES agent export")
    collect = Collector(FORMAT)
    collect.name = str(agent.get("displayName") or "")
    collect.description = str(agent.get("description") or "")
    lang = _language(files, agent, language)
    collect.language = lang
    for path in files.paths():
        if re.fullmatch(r"intents/[^/]+\.json", path) and not USERSAYS.match(path):
            _read_intent(files, path, lang, collect)
    _read_entities(files, lang, collect)
    _report_other_languages(files, lang, collect)
    return collect.finish()


def _language(files: ExportFiles, agent: dict[str, Any], asked: str | None) -> str:
    default = str(agent.get("language") or "en")
    found = {m["lang"] for p in files.paths() if (m := USERSAYS.match(p))}
    known = {default, *map(str, items(agent.get("supportedLanguages"))), *found}
    return chosen_language(asked or default, known, "agent", "examples")


def _read_intent(files: ExportFiles, path: str, lang: str, collect: Collector) -> None:
    intent = files.json(path)
    if not isinstance(intent, dict) or not isinstance(intent.get("name"), str):
        collect.left_out(path, "not an intent (no name)")
        return
    name = intent["name"]
    usersays = path[: -len(".json")] + f"_usersays_{lang}.json"
    phrases = files.json(usersays) if usersays in files else []
    if not isinstance(phrases, list):
        collect.left_out(usersays, "expected a list of training phrases")
        phrases = []
    if intent.get("fallbackIntent"):
        before = len(collect.out_of_scope)
        for i, phrase in enumerate(phrases):
            collect.add_out_of_scope(_phrase_text(phrase)[0], f"{usersays}[{i}]")
        collect.came_over_as_out_of_scope(path, f"fallback intent {name!r}", before)
        return
    route = collect.route(name, path)
    _read_phrases(phrases, usersays, route, collect)
    for key, reason in _LEFT_OUT.items():
        if intent.get(key) and not _only_trivial_responses(key, intent[key]):
            collect.left_out(f"{path}: {key}", reason)


def _only_trivial_responses(key: str, value: Any) -> bool:
    """Every ES intent has a `responses` block; only one that says something is worth a note."""
    if key != "responses" or not isinstance(value, list):
        return False
    return all(
        isinstance(r, dict)
        and not r.get("messages")
        and not r.get("parameters")
        and not r.get("action")
        for r in value
    )


def _read_phrases(phrases: list[Any], where: str, route: Any, collect: Collector) -> None:
    marked: dict[str, int] = {}
    for i, phrase in enumerate(phrases):
        if isinstance(phrase, dict) and phrase.get("isTemplate"):
            collect.left_out(f"{where}[{i}]", "a template phrase (@entity:name), not an example")
            continue
        text, entities = _phrase_text(phrase)
        for entity in entities:
            marked[entity] = marked.get(entity, 0) + 1
        route.entities |= set(entities)
        collect.add_example(route, text, f"{where}[{i}]")
    if marked:
        counts = ", ".join(f"{e} ×{c}" for e, c in sorted(marked.items()))
        collect.changed(
            where, f"entity parts kept as plain text (entities have no equivalent): {counts}"
        )


def _phrase_text(phrase: Any) -> tuple[str, list[str]]:
    """A training phrase's text (its parts joined) and the entity names its parts are marked with."""
    parts = phrase.get("data") if isinstance(phrase, dict) else None
    if not isinstance(parts, list):
        return "", []
    text = "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    entities = [
        str(p["meta"]).removeprefix("@")
        for p in parts
        if isinstance(p, dict) and isinstance(p.get("meta"), str)
    ]
    return text, entities


def _read_entities(files: ExportFiles, lang: str, collect: Collector) -> None:
    for path in files.paths():
        match = ENTRIES.match(path)
        if not match or match["lang"] != lang:
            continue
        entries = files.json(path)
        if not isinstance(entries, list):
            collect.left_out(path, "expected a list of entity entries")
            continue
        words = []
        for entry in entries:
            if isinstance(entry, dict):
                words += [entry.get("value", ""), *items(entry.get("synonyms"))]
        collect.add_lexicon(match["entity"], [w for w in words if isinstance(w, str)])


def _report_other_languages(files: ExportFiles, lang: str, collect: Collector) -> None:
    counts: dict[str, list[int]] = {}
    for path in files.paths():
        match = USERSAYS.match(path)
        if match and match["lang"] != lang:
            phrases = files.json(path)
            tally = counts.setdefault(match["lang"], [0, 0])
            tally[0] += 1
            tally[1] += len(phrases) if isinstance(phrases, list) else 0
    for other, (intents, phrases) in sorted(counts.items()):
        collect.left_out(
            f"language {other!r}",
            f"{phrases} phrase(s) in {intents} intent(s) not imported (importing {lang!r})",
        )
