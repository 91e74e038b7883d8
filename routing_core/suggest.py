"""Suggested examples and never-phrases for a route: the model writes, the router judges.

An OpenAI-compatible model (the LLM tier's `ChatClient`) proposes wording only. Its answer
is read strictly — a JSON array of strings, or else a bulleted or numbered list; prose
holds no suggestion — then every proposal is normalised, deduplicated against every
route's examples and never-phrases, and routed by the current router, so that a suggested
example that would land on another route (or a never-phrase that lands here today) is
flagged before a person decides. Nothing here saves anything.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from routing_core.pack import Route
from routing_core.router import Router
from routing_core.scorers.base import NO_USAGE, Usage
from routing_core.scorers.llm import ChatClient
from routing_core.text import words

Kind = Literal["examples", "never"]
MAX_SUGGESTION_CHARS = 200
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+(?P<text>.+?)\s*$")
_QUOTES = "\"'`“”‘’"


@dataclass(frozen=True)
class Suggestion:
    """One proposal and where the current router sends it (`lands_on` None: no route)."""

    text: str
    lands_on: str | None
    verdict: str
    fits: bool  # an example that lands on its route; a never-phrase that does not
    offered: tuple[str, ...] = ()  # the menu's routes when the router could not decide


@dataclass(frozen=True)
class SuggestionBatch:
    """What one request gave: fresh suggestions, the repeats dropped, and the tokens spent."""

    route: str
    kind: Kind
    suggestions: tuple[Suggestion, ...]
    repeats: tuple[str, ...] = ()
    answer_was_unreadable: bool = False
    usage: Usage = NO_USAGE


def suggest(
    client: ChatClient, router: Router, route: str, kind: Kind, count: int = 8
) -> SuggestionBatch:
    """Ask the model for `count` examples (or never-phrases) of `route`, then judge them.

    Raises:
        KeyError: no such route in the router's pack.
        ScorerFailure: the endpoint failed or did not answer with a chat completion.
    """
    routes = {r.name: r for r in router.pack.routes}
    target = routes[route]
    messages = [
        {"role": "system", "content": _SYSTEM},
        {"role": "user", "content": _request(target, list(routes.values()), kind, count)},
    ]
    answer, usage = client.complete(messages)
    proposals = parse_suggestions(answer)
    if proposals is None:
        return SuggestionBatch(route, kind, (), answer_was_unreadable=True, usage=usage)
    fresh, repeats = _dedupe(proposals[: count * 2], list(routes.values()))
    judged = tuple(_judge(router, route, kind, text) for text in fresh[:count])
    return SuggestionBatch(route, kind, judged, tuple(repeats), usage=usage)


_SYSTEM = (
    "You help product people write training messages for an intent router. "
    "Answer with a JSON array of strings and nothing else."
)


def _request(target: Route, routes: list[Route], kind: Kind, count: int) -> str:
    lines = [f"Route: {target.name}", f"Description: {target.description or target.name}"]
    lines += ["Existing examples:", *(f"- {e}" for e in target.examples[:12])]
    others = [r for r in routes if r.name != target.name][:40]
    lines += ["Other routes:", *(f"- {r.name}: {r.description or r.name}" for r in others)]
    if kind == "examples":
        lines.append(
            f"Write {count} new messages a user might send that belong to {target.name}. "
            "Vary the wording, the length and the register (casual, formal, terse). "
            "Do not repeat or lightly reword the existing examples."
        )
    else:
        lines.append(
            f"Write {count} messages that sound close to {target.name} but must not go there: "
            "they belong to one of the other routes, or to none. They mark its boundary."
        )
    return "\n".join(lines)


def parse_suggestions(answer: str) -> list[str] | None:
    """The proposals in an answer: a JSON array of strings, else list items; None for prose."""
    start, end = answer.find("["), answer.rfind("]")
    if 0 <= start < end:
        try:
            items = json.loads(answer[start : end + 1])
        except ValueError:
            items = None
        if isinstance(items, list) and all(isinstance(i, str) for i in items):
            return [t for t in (_clean(i) for i in items) if t]
    listed = [m["text"] for line in answer.splitlines() if (m := _LIST_ITEM.match(line))]
    return [t for t in (_clean(i) for i in listed) if t] or None


def _clean(text: str) -> str:
    text = " ".join(text.split()).strip(_QUOTES).strip()
    return text if len(text) <= MAX_SUGGESTION_CHARS else ""


def _key(text: str) -> tuple[str, ...]:
    """Two texts with the same words, case and punctuation aside, are the same suggestion."""
    return tuple(words(text))


def _dedupe(proposals: list[str], routes: list[Route]) -> tuple[list[str], list[str]]:
    known = {_key(t) for r in routes for t in (*r.examples, *r.never)}
    fresh: list[str] = []
    repeats: list[str] = []
    for text in proposals:
        key = _key(text)
        if not key or key in known:
            repeats.append(text)
        else:
            known.add(key)
            fresh.append(text)
    return fresh, repeats


def _judge(router: Router, route: str, kind: Kind, text: str) -> Suggestion:
    decision = router.route(text)
    lands_on = decision.route if decision.verdict in ("move", "stay") else None
    fits = lands_on == route if kind == "examples" else lands_on != route
    return Suggestion(text, lands_on, decision.verdict, fits, tuple(decision.offered))
