"""Azure AI Language CLU: a conversation project's JSON export as routes.

`assets.intents` become routes with their training utterances in one language (the one
asked for, else the project's); the `None` intent's utterances are what the agent must not
take (the pack's out-of-scope examples). List entities' synonyms become lexicons; an entity's
regex becomes a rule when exactly one intent marks that entity. Test-set utterances,
prebuilt components and the confidence threshold are reported, not imported.
"""

from __future__ import annotations

from typing import Any

from routing_core.errors import PackError
from routing_core.importers.files import Source, chosen_language, fields, items, read_export
from routing_core.importers.result import Collector, ImportResult

FORMAT = "azure-clu"
NONE_INTENT = "None"


def import_azure_clu(source: Source, *, language: str | None = None) -> ImportResult:
    """Routes from a CLU project file (`projectKind: Conversation`).

    Args:
        language: the language code to import (`en-us`, …); the project's when None.

    Raises:
        PackError: not a CLU conversation project, an unknown language, nothing to import.
    """
    files = read_export(source)
    paths = [p for p in files.paths() if p.endswith(".json")]
    if len(paths) != 1:
        raise PackError([("$", "expected one CLU project file (.json)")])
    path = paths[0]
    project = files.json(path)
    metadata = project.get("metadata") if isinstance(project, dict) else None
    assets = project.get("assets") if isinstance(project, dict) else None
    if not isinstance(metadata, dict) or not isinstance(assets, dict):
        raise PackError([(path, "not a CLU project export (no 'metadata' and 'assets')")])
    if metadata.get("projectKind", assets.get("projectKind")) != "Conversation":
        raise PackError(
            [(f"{path}: metadata.projectKind", "only Conversation projects hold intents")]
        )
    collect = Collector(FORMAT)
    collect.name = str(metadata.get("projectName") or "")
    collect.description = str(metadata.get("description") or "")
    default = str(metadata.get("language") or "en-us").lower()
    utterances = [u for u in items(assets.get("utterances")) if isinstance(u, dict)]
    lang = collect.language = _language(utterances, default, language, path)
    for i, intent in enumerate(items(assets.get("intents"))):
        name = intent.get("category") if isinstance(intent, dict) else None
        if isinstance(name, str) and name != NONE_INTENT:
            collect.route(name, f"{path}: assets.intents[{i}]")
    _read_utterances(utterances, lang, default, path, collect)
    _read_entities(items(assets.get("entities")), lang, path, collect)
    threshold = fields(metadata.get("settings")).get("confidenceThreshold")
    if isinstance(threshold, int | float) and threshold:
        collect.left_out(
            f"{path}: metadata.settings.confidenceThreshold",
            f"{threshold} is CLU's confidence, not carried over (the pack's policy sets the floor)",
        )
    return collect.finish()


def _language(utterances: list[dict[str, Any]], default: str, asked: str | None, path: str) -> str:
    found = {str(u.get("language") or default).lower() for u in utterances}
    return chosen_language((asked or default).lower(), found | {default}, "project", "utterances")


def _read_utterances(
    utterances: list[dict[str, Any]], lang: str, default: str, path: str, collect: Collector
) -> None:
    skipped: dict[str, int] = {}
    tests = 0
    marked: dict[str, dict[str, int]] = {}
    before = len(collect.out_of_scope)
    for i, utterance in enumerate(utterances):
        where = f"{path}: assets.utterances[{i}]"
        text, intent = utterance.get("text"), utterance.get("intent")
        if str(utterance.get("language") or default).lower() != lang:
            key = str(utterance.get("language"))
            skipped[key] = skipped.get(key, 0) + 1
        elif str(utterance.get("dataset", "Train")).lower() == "test":
            tests += 1
        elif not isinstance(text, str) or not isinstance(intent, str):
            collect.left_out(where, "an utterance needs a text and an intent")
        elif intent == NONE_INTENT:
            collect.add_out_of_scope(text, where)
        else:
            route = collect.route(intent, where)
            for entity in items(utterance.get("entities")):
                if isinstance(entity, dict) and isinstance(entity.get("category"), str):
                    route.entities.add(entity["category"])
                    tally = marked.setdefault(route.name, {})
                    tally[entity["category"]] = tally.get(entity["category"], 0) + 1
            collect.add_example(route, text, where)
    for route_name, counts in marked.items():
        listed = ", ".join(f"{e} ×{c}" for e, c in sorted(counts.items()))
        collect.changed(f"route {route_name!r}", f"entity labels dropped, text kept: {listed}")
    if tests:
        collect.left_out(
            f"{path}: assets.utterances", f"{tests} test-set utterance(s) not used as examples"
        )
    for other, count in sorted(skipped.items()):
        collect.left_out(
            f"language {other!r}", f"{count} utterance(s) not imported (importing {lang!r})"
        )
    if len(collect.out_of_scope) > before:
        collect.came_over_as_out_of_scope(f"intent {NONE_INTENT!r}", "its utterances", before)


def _read_entities(entities: list[Any], lang: str, path: str, collect: Collector) -> None:
    for i, entity in enumerate(entities):
        if not isinstance(entity, dict) or not isinstance(entity.get("category"), str):
            continue
        name, where = entity["category"], f"{path}: assets.entities[{i}]"
        words: list[str] = []
        for sublist in map(fields, items(fields(entity.get("list")).get("sublists"))):
            words.append(str(sublist.get("listKey", "")))
            for synonyms in map(fields, items(sublist.get("synonyms"))):
                if str(synonyms.get("language", lang)).lower() == lang:
                    words += [str(v) for v in items(synonyms.get("values"))]
        if words:
            collect.add_lexicon(name, words)
        for n, expression in enumerate(items(fields(entity.get("regex")).get("expressions"))):
            pattern = expression.get("regexPattern") if isinstance(expression, dict) else None
            if isinstance(pattern, str):
                _regex_rule(name, pattern, f"{where}.regex.expressions[{n}]", collect)
        if entity.get("prebuilts"):
            collect.left_out(f"{where}.prebuilts", "prebuilt components have no equivalent")


def _regex_rule(entity: str, pattern: str, where: str, collect: Collector) -> None:
    users = [r for r in collect.routes.values() if entity in r.entities]
    if len(users) != 1:
        who = "no intent marks" if not users else f"{len(users)} intents mark"
        collect.kept_aside(where, f"regex of {entity!r}: {who} this entity, so no rule")
        return
    collect.changed(
        where, f"regex of {entity!r} became a rule for {users[0].name!r}, the one intent marking it"
    )
    collect.add_regex_rule(users[0], pattern, where)
