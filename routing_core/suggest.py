"""Suggested examples, never-phrases and test conversations for a route: the model writes,
the router judges.

An OpenAI-compatible model (the LLM tier's `ChatClient`) proposes wording only. Its answer
is read strictly — a JSON array of strings, or else a bulleted or numbered list; prose
holds no suggestion — then every proposal is normalised, deduplicated against every
route's examples and never-phrases, and routed by the current router, so that a suggested
example that would land on another route (or a never-phrase that lands here today) is
flagged before a person decides. Drafted conversations (`draft_conversations`) are read
the same strict way and routed turn by turn as a conversation. Nothing here saves anything.
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
    request = _request(routes[route], list(routes.values()), kind, count)
    answer, usage = _ask(client, _SYSTEM, request)
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


def _ask(client: ChatClient, system: str, request: str) -> tuple[str, Usage]:
    return client.complete(
        [{"role": "system", "content": system}, {"role": "user", "content": request}]
    )


def _json_array(answer: str) -> list[object] | None:
    """The JSON array an answer holds, from its first `[` to its last `]`; None without one."""
    start, end = answer.find("["), answer.rfind("]")
    if not 0 <= start < end:
        return None
    try:
        items = json.loads(answer[start : end + 1])
    except ValueError:
        return None
    return items if isinstance(items, list) else None


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
    items = _json_array(answer)
    if items is not None and all(isinstance(i, str) for i in items):
        return [t for t in (_clean(str(i)) for i in items) if t]
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


# -- drafted conversations --------------------------------------------------------------------------

Part = Literal["opening", "answer", "confirmation", "new topic"]
_PARTS: dict[str, Part] = {p: p for p in ("opening", "answer", "confirmation", "new topic")}
MAX_DRAFT_TURNS = 8


@dataclass(frozen=True)
class DraftTurn:
    """A user's turn of a drafted conversation: what the model says it is, where it lands.

    `expected` is the route the model says the turn belongs to; `routed` is where the current
    router sends it, starting where the previous turn landed (None: no route, or a menu).
    """

    text: str
    part: Part
    expected: str
    routed: str | None
    verdict: str

    @property
    def fits(self) -> bool:
        return self.routed == self.expected


@dataclass(frozen=True)
class DraftConversation:
    """One drafted conversation: an opening, answers, a confirmation, a change of topic."""

    turns: tuple[DraftTurn, ...]

    @property
    def fits(self) -> bool:
        """Every turn lands where the model says it belongs, on today's router."""
        return all(t.fits for t in self.turns)


@dataclass(frozen=True)
class ConversationBatch:
    """What one request gave: the usable conversations, how many were not, the tokens spent."""

    route: str
    conversations: tuple[DraftConversation, ...]
    dropped: int = 0  # conversations that named no route of the pack, or had too few turns
    answer_was_unreadable: bool = False
    usage: Usage = NO_USAGE


def draft_conversations(
    client: ChatClient, router: Router, route: str, count: int = 3
) -> ConversationBatch:
    """Ask the model for `count` conversations that open on `route`, then route them.

    Each conversation opens with a request for the route, answers the agent's questions
    (slot values), confirms, then changes topic to another route of the pack. Every turn is
    routed as a conversation (each from where the previous one landed), so a conversation the
    router would get wrong today is flagged before a person decides. Nothing is saved.

    Raises:
        KeyError: no such route in the router's pack.
        ScorerFailure: the endpoint failed or did not answer with a chat completion.
    """
    routes = {r.name: r for r in router.pack.routes}
    request = _conversation_request(routes[route], list(routes.values()), count)
    answer, usage = _ask(client, _CONVERSATION_SYSTEM, request)
    drafts = parse_conversations(answer)
    if drafts is None:
        return ConversationBatch(route, (), answer_was_unreadable=True, usage=usage)
    usable = [d for d in drafts if _is_usable(d, route, set(routes))]
    judged = tuple(_route_conversation(router, d) for d in usable[:count])
    return ConversationBatch(route, judged, dropped=len(drafts) - len(usable), usage=usage)


_CONVERSATION_SYSTEM = (
    "You write realistic test conversations for an intent router: only the user's turns. "
    'Answer with a JSON array and nothing else; each item is {"turns": [{"user": text, '
    '"part": "opening" | "answer" | "confirmation" | "new topic", "route": route name}]}.'
)


def _conversation_request(target: Route, routes: list[Route], count: int) -> str:
    lines = [f"Route: {target.name}", f"Description: {target.description or target.name}"]
    lines += ["Examples:", *(f"- {e}" for e in target.examples[:8])]
    others = [r for r in routes if r.name != target.name][:40]
    lines += ["Other routes:", *(f"- {r.name}: {r.description or r.name}" for r in others)]
    lines.append(
        f"Write {count} conversations a user might have with a support agent. Each opens with a "
        f"request that belongs to {target.name}; then answers the agent's questions with short "
        "slot values (a date, a time, a number, a name, 'the other one'); then confirms "
        "('yes please', 'that's right'); then changes topic to one of the other routes. "
        "Give every turn the route it belongs to: the answers and the confirmation belong to "
        f"{target.name}. Vary the wording, the length and the register."
    )
    return "\n".join(lines)


def parse_conversations(answer: str) -> list[list[tuple[str, Part, str]]] | None:
    """The conversations in an answer as (text, part, route) turns; None when it holds no JSON
    array of them. A turn without text or route is left out; an unknown part is an answer."""
    items = _json_array(answer)
    if items is None:
        return None
    conversations = [_turns_of(item) for item in items]
    return [c for c in conversations if c is not None] or None


def _turns_of(item: object) -> list[tuple[str, Part, str]] | None:
    raw = item.get("turns") if isinstance(item, dict) else item
    if not isinstance(raw, list):
        return None
    turns = []
    for turn in raw[:MAX_DRAFT_TURNS]:
        if not isinstance(turn, dict):
            continue
        text = _clean(str(turn.get("user") or turn.get("text") or ""))
        route = str(turn.get("route") or "").strip()
        part = str(turn.get("part") or "").strip().lower()
        if text and route:
            turns.append((text, _PARTS.get(part, "answer"), route))
    return turns


def _is_usable(turns: list[tuple[str, Part, str]], route: str, known: set[str]) -> bool:
    """Two turns or more, opening on the route, every turn naming a route of the pack."""
    return len(turns) >= 2 and turns[0][2] == route and all(r in known for _, _, r in turns)


def _route_conversation(router: Router, turns: list[tuple[str, Part, str]]) -> DraftConversation:
    """Route the turns in order, each from where the previous one landed (as `evaluate` does)."""
    incumbent: str | None = None
    judged = []
    for text, part, expected in turns:
        decision = router.route(text, incumbent)
        routed = decision.route if decision.verdict in ("move", "stay") else None
        judged.append(DraftTurn(text, part, expected, routed, decision.verdict))
        incumbent = decision.route or incumbent
    return DraftConversation(tuple(judged))
