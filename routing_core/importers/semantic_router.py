"""semantic-router: a route layer's config (JSON or YAML) as routes.

`name`, `utterances` and `description` come over. `score_threshold` does not: it is a
cosine for the config's own encoder, while the pack's lexical scorer judges probabilities
with the policy's floor, and the pack's embedding scorer scores calibrated probabilities
with a floor it fits itself; the report gives each threshold so that a person sees it. `function_schemas`, `llm` and `metadata` are left out
(the config names Python modules to import for its LLM: never followed here).
"""

from __future__ import annotations

from typing import Any

from routing_core.errors import PackError
from routing_core.importers.files import Source, read_export
from routing_core.importers.result import Collector, ImportResult

FORMAT = "semantic-router"
_LEFT_OUT = {
    "function_schemas": "function schemas have no equivalent in a route (tools are separate)",
    "llm": "the route's LLM is not imported (the pack's LLM tier is set per profile)",
    "metadata": "metadata has no equivalent in a pack",
}


def import_semantic_router(source: Source, *, language: str | None = None) -> ImportResult:
    """Routes from a semantic-router config: `{"routes": [...]}` or a bare list of routes.

    Args:
        language: not used (a config has no languages); accepted for a uniform call.

    Raises:
        PackError: unreadable, not a route config, or no route with utterances.
    """
    files = read_export(source)
    paths = [p for p in files.paths() if p.endswith((".json", ".yaml", ".yml"))]
    if len(paths) != 1:
        raise PackError([("$", "expected one semantic-router config (.json, .yaml or .yml)")])
    path = paths[0]
    document = files.json(path) if path.endswith(".json") else files.yaml(path)
    routes = document.get("routes") if isinstance(document, dict) else document
    if not isinstance(routes, list):
        raise PackError([(path, "expected a config with a 'routes' list")])
    collect = Collector(FORMAT)
    encoder = _encoder(document)
    if encoder:
        collect.left_out(
            f"{path}: encoder", f"{encoder} is not used: routes are scored by the pack's scorer"
        )
    for i, route in enumerate(routes):
        _read_route(route, f"{path}: routes[{i}]", encoder, collect)
    return collect.finish()


def _encoder(document: Any) -> str:
    if not isinstance(document, dict):
        return ""
    kind, name = document.get("encoder_type"), document.get("encoder_name")
    return " / ".join(str(x) for x in (kind, name) if x)


def _read_route(entry: Any, where: str, encoder: str, collect: Collector) -> None:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        collect.left_out(where, "not a route (no name)")
        return
    route = collect.route(entry["name"], where)
    if isinstance(entry.get("description"), str):
        collect.describe(route, entry["description"], f"{where}.description")
    utterances = entry.get("utterances") or []
    if not isinstance(utterances, list):
        collect.left_out(f"{where}.utterances", "expected a list of texts")
        utterances = []
    for n, text in enumerate(utterances):
        if isinstance(text, str):
            collect.add_example(route, text, f"{where}.utterances[{n}]")
        else:
            collect.left_out(f"{where}.utterances[{n}]", "not a text utterance")
    threshold = entry.get("score_threshold")
    if isinstance(threshold, int | float) and not isinstance(threshold, bool):
        of = f" of {encoder}" if encoder else ""
        collect.left_out(
            f"{where}.score_threshold",
            f"{threshold} is a cosine{of}: not the lexical scorer's probabilities, so not "
            "carried over (the embedding and hybrid scorers fit their own floor)",
        )
    for key, reason in _LEFT_OUT.items():
        if entry.get(key):
            collect.left_out(f"{where}.{key}", reason)
