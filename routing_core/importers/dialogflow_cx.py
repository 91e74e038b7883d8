"""Dialogflow CX: an agent's JSON package export (zip or folder) as routes.

`intents/<name>/<name>.json` + `trainingPhrases/<lang>.json` become routes (the intent's
description too); the Default Negative Intent's phrases are what the agent must not take
(the pack's out-of-scope examples). Entity types' entries and synonyms become lexicons.
Flows and pages have no equivalent: the report names each flow and the intents its
transitions use, and the intents that no flow uses.
"""

from __future__ import annotations

import re
from typing import Any

from routing_core.importers.files import ExportFiles, Source, chosen_language, items, read_agent
from routing_core.importers.result import Collector, ImportResult

FORMAT = "dialogflow-cx"
NEGATIVE_INTENT_ID = "00000000-0000-0000-0000-000000000002"
INTENT_FILE = re.compile(r"^intents/(?P<dir>[^/]+)/(?P=dir)\.json$")
FLOW_FILE = re.compile(r"^flows/(?P<dir>[^/]+)/(?P=dir)\.json$")


def import_dialogflow_cx(source: Source, *, language: str | None = None) -> ImportResult:
    """Routes from a Dialogflow CX agent exported as a JSON package.

    Args:
        language: the language tag to import; the agent's default language when None.

    Raises:
        PackError: no `agent.json`, an unknown language, or nothing with examples.
    """
    files, agent = read_agent(source, "Dialogflow CX JSON package")
    collect = Collector(FORMAT)
    collect.name = str(agent.get("displayName") or "")
    collect.description = str(agent.get("description") or "")
    lang = collect.language = _language(files, agent, language)
    intents = [m["dir"] for p in files.paths() if (m := INTENT_FILE.match(p))]
    for folder in intents:
        _read_intent(files, folder, lang, collect)
    _read_entity_types(files, lang, collect)
    _report_flows(files, collect)
    return collect.finish()


def _language(files: ExportFiles, agent: dict[str, Any], asked: str | None) -> str:
    default = str(agent.get("defaultLanguageCode") or "en")
    found = {
        p.rsplit("/", 1)[1].removesuffix(".json")
        for p in files.paths()
        if re.fullmatch(r"intents/[^/]+/trainingPhrases/[^/]+\.json", p)
    }
    known = {default, *map(str, items(agent.get("supportedLanguageCodes"))), *found}
    return chosen_language(asked or default, known, "agent", "phrases")


def _read_intent(files: ExportFiles, folder: str, lang: str, collect: Collector) -> None:
    path = f"intents/{folder}/{folder}.json"
    intent = files.json(path)
    if not isinstance(intent, dict):
        collect.left_out(path, "not an intent")
        return
    name = str(intent.get("displayName") or folder)
    phrases_path = f"intents/{folder}/trainingPhrases/{lang}.json"
    phrases = _phrases(files, phrases_path, collect)
    _count_other_languages(files, folder, lang, collect)
    if intent.get("name") == NEGATIVE_INTENT_ID or intent.get("isFallback"):
        before = len(collect.out_of_scope)
        for i, phrase in enumerate(phrases):
            collect.add_out_of_scope(_phrase_text(phrase, {})[0], f"{phrases_path}[{i}]")
        collect.came_over_as_out_of_scope(path, f"negative intent {name!r}", before)
        return
    route = collect.route(name, path)
    collect.describe(route, str(intent.get("description") or ""), f"{path}: description")
    parameters = {
        str(p.get("id")): str(p.get("entityType", "")).removeprefix("@")
        for p in items(intent.get("parameters"))
        if isinstance(p, dict)
    }
    marked: dict[str, int] = {}
    for i, phrase in enumerate(phrases):
        text, entities = _phrase_text(phrase, parameters)
        for entity in entities:
            marked[entity] = marked.get(entity, 0) + 1
        route.entities |= set(entities)
        collect.add_example(route, text, f"{phrases_path}[{i}]")
    if marked:
        counts = ", ".join(f"{e} ×{c}" for e, c in sorted(marked.items()))
        collect.changed(phrases_path, f"parameter parts kept as plain text: {counts}")
    if intent.get("labels"):
        collect.left_out(f"{path}: labels", "labels have no equivalent in a pack")


def _phrases(files: ExportFiles, path: str, collect: Collector) -> list[Any]:
    if path not in files:
        return []
    document = files.json(path)
    phrases = document.get("trainingPhrases") if isinstance(document, dict) else None
    if not isinstance(phrases, list):
        collect.left_out(path, 'expected {"trainingPhrases": [...]}')
        return []
    return phrases


def _phrase_text(phrase: Any, parameters: dict[str, str]) -> tuple[str, list[str]]:
    parts = phrase.get("parts") if isinstance(phrase, dict) else None
    if not isinstance(parts, list):
        return "", []
    text = "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    entities = [
        parameters.get(str(p["parameterId"]), str(p["parameterId"]))
        for p in parts
        if isinstance(p, dict) and p.get("parameterId")
    ]
    return text, entities


def _count_other_languages(files: ExportFiles, folder: str, lang: str, collect: Collector) -> None:
    prefix = f"intents/{folder}/trainingPhrases/"
    for path in files.paths():
        if path.startswith(prefix) and path != f"{prefix}{lang}.json":
            other = path[len(prefix) :].removesuffix(".json")
            count = len(_phrases(files, path, collect))
            collect.left_out(
                path, f"{count} phrase(s) in {other!r} not imported (importing {lang!r})"
            )


def _read_entity_types(files: ExportFiles, lang: str, collect: Collector) -> None:
    for path in files.paths():
        match = re.fullmatch(r"entityTypes/(?P<dir>[^/]+)/entities/(?P<lang>[^/]+)\.json", path)
        if not match or match["lang"] != lang:
            continue
        document = files.json(path)
        entries = document.get("entities") if isinstance(document, dict) else None
        words: list[str] = []
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict):
                words += [
                    w
                    for w in [entry.get("value"), *items(entry.get("synonyms"))]
                    if isinstance(w, str)
                ]
        collect.add_lexicon(match["dir"], words)


def _report_flows(files: ExportFiles, collect: Collector) -> None:
    used: set[str] = set()
    for path in files.paths():
        match = FLOW_FILE.match(path)
        if not match:
            continue
        flow_dir = f"flows/{match['dir']}/"
        intents: list[str] = []
        for page in [p for p in files.paths() if p.startswith(flow_dir) and p.endswith(".json")]:
            intents += _transition_intents(files.json(page))
        used |= set(intents)
        named = ", ".join(sorted(set(intents))) or "no intent"
        collect.left_out(
            path,
            f"flow {match['dir']!r} (its pages and transitions) has no equivalent; it uses {named}",
        )
    for route in collect.routes.values():
        if route.source not in used and used:
            collect.changed(f"intent {route.source!r}", "imported, though no flow uses it")


def _transition_intents(document: Any) -> list[str]:
    routes = document.get("transitionRoutes") if isinstance(document, dict) else None
    if not isinstance(routes, list):
        return []
    return [str(r["intent"]) for r in routes if isinstance(r, dict) and r.get("intent")]
