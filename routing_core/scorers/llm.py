"""The LLM tier: an OpenAI-compatible chat model picks one route, or none
(docs/pack-format.md, LLM scorer).

Standard library only (urllib + json), so the `llm` extra installs nothing. The HTTP call
sits behind `Transport`, a one-method protocol; `UrllibTransport` is the real one.

The prompt is generated from route names, descriptions and at most five examples each;
it never carries delegate ids or stuck messages. The answer is parsed strictly (see
`parse_answer`): a token that is not an allowed name is no pick, never a guess. One re-ask
quotes the allowed names. Every failure of the transport or of the response's shape raises
`ScorerFailure` with the tokens already spent, so the router records it and falls back.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from routing_core.pack import LlmScorerSettings
from routing_core.scorers.base import (
    NO_USAGE,
    RouteText,
    Scored,
    ScorerFailure,
    ScorerInfo,
    Term,
    Usage,
)

NONE = "none"
STAY = "stay"
_QUOTES = "\"'`“”‘’"
_MAX_RESPONSE_BYTES = 1_000_000
_MAX_EXAMPLE_CHARS = 200


class Transport(Protocol):
    """Sends one JSON POST and returns the response body; raises on any failure."""

    def post(self, url: str, headers: Mapping[str, str], body: bytes, timeout: float) -> bytes: ...


class UrllibTransport:
    """The real transport: `urllib.request`, proxies from the environment as usual."""

    def post(self, url: str, headers: Mapping[str, str], body: bytes, timeout: float) -> bytes:
        """POST `body`; the response body, or `ScorerFailure` naming what went wrong."""
        request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                data: bytes = response.read(_MAX_RESPONSE_BYTES)
                return data
        except urllib.error.HTTPError as exc:
            raise ScorerFailure(f"HTTP {exc.code} from the LLM endpoint") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ScorerFailure(f"LLM endpoint unreachable: {reason}") from None


@dataclass(frozen=True, slots=True)
class Option:
    """One answer the model may give: a route (with its text) or a keyword like `none`."""

    name: str
    description: str
    examples: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Pick:
    """The model's choice (None: no pick), the raw answer, and the tokens spent."""

    choice: str | None
    answer: str
    usage: Usage


def parse_answer(answer: str, allowed: Sequence[str]) -> str | None:
    """The allowed name the answer gives, or None.

    The first whitespace-separated token, lowercased; one trailing "." then one trailing ","
    removed; quotes and backticks stripped. Anything else (prose, an unknown name, nothing)
    is no pick: the model can never invent a route.
    """
    tokens = answer.split()
    if not tokens:
        return None
    token = tokens[0].lower().removesuffix(".").removesuffix(",").strip(_QUOTES)
    return token if token in allowed else None


def build_prompt(options: Sequence[Option], max_examples: int = 5) -> str:
    """The system prompt: the task, then each option with its description and examples."""
    lines = [
        "You route a user's message to exactly one of the options below.",
        "Answer with the option's name only: one word, no punctuation, no explanation.",
        "",
        "Options:",
    ]
    for option in options:
        lines.append(f"- {option.name}: {option.description or option.name}".rstrip())
        for example in option.examples[:max_examples]:
            lines.append(f'    e.g. "{_one_line(example)}"')
    return "\n".join(lines)


def _one_line(text: str) -> str:
    return " ".join(text.split())[:_MAX_EXAMPLE_CHARS]


def _reask(allowed: Sequence[str]) -> str:
    return "Answer with exactly one of these names and nothing else: " + ", ".join(allowed)


class ChatClient:
    """One OpenAI-compatible chat-completions endpoint, as the pack's settings describe it.

    Args:
        settings: base URL, model, timeout, and the *name* of the env var holding the key.
        transport: how to send the request; `UrllibTransport` when None.
        environ: where to read the key (the process environment when None).
    """

    def __init__(
        self,
        settings: LlmScorerSettings,
        transport: Transport | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings
        self.transport: Transport = transport or UrllibTransport()
        self._environ = environ
        self._url = settings.base_url.rstrip("/") + "/chat/completions"

    def complete(self, messages: Sequence[Mapping[str, str]]) -> tuple[str, Usage]:
        """The model's answer text and its token usage.

        Raises:
            ScorerFailure: the key is missing, the transport failed, or the response is not
                a chat completion.
        """
        body = {
            "model": self.settings.model,
            "messages": list(messages),
            "temperature": 0,
            "max_tokens": self.settings.max_output_tokens,
        }
        raw = self.transport.post(
            self._url, self._headers(), json.dumps(body).encode(), self.settings.timeout_s
        )
        return _completion(raw)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        name = self.settings.api_key_env
        if name is not None:
            key = (os.environ if self._environ is None else self._environ).get(name)
            if not key:
                raise ScorerFailure(f"environment variable {name} (the LLM API key) is not set")
            headers["Authorization"] = f"Bearer {key}"
        return headers


def _completion(raw: bytes) -> tuple[str, Usage]:
    try:
        document = json.loads(raw)
        content = document["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ScorerFailure("the LLM endpoint did not answer with a chat completion") from None
    usage = _usage(document.get("usage"))
    return (content if isinstance(content, str) else ""), usage


def _usage(value: Any) -> Usage:
    if not isinstance(value, dict):
        return NO_USAGE
    details = value.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(
        _count(value.get("prompt_tokens")), _count(value.get("completion_tokens")), _count(cached)
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class LlmClassifier:
    """Asks the model to pick one option for a message: strict parsing, at most one re-ask."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    def pick(self, message: str, options: Sequence[Option]) -> Pick:
        """The option the model names, or no pick.

        Raises:
            ScorerFailure: a transport or response failure (with the tokens spent so far).
        """
        allowed = [o.name for o in options]
        conversation: list[dict[str, str]] = [
            {"role": "system", "content": build_prompt(options, self.client.settings.max_examples)},
            {"role": "user", "content": message},
        ]
        usage = NO_USAGE
        answer = ""
        for attempt in range(2):
            if attempt:
                conversation += [
                    {"role": "assistant", "content": answer},
                    {"role": "user", "content": _reask(allowed)},
                ]
            try:
                answer, spent = self.client.complete(conversation)
            except ScorerFailure as exc:
                raise ScorerFailure(str(exc), usage + exc.usage) from None
            usage += spent
            choice = parse_answer(answer, allowed)
            if choice is not None:
                return Pick(choice, answer, usage)
        return Pick(None, answer, usage)


def route_options(routes: Sequence[RouteText], names: Sequence[str]) -> list[Option]:
    """The options for `names`, in that order, from the routes' public text."""
    by_name = {r.name: r for r in routes}
    return [Option(n, by_name[n].description, by_name[n].examples) for n in names]


class LlmScorer:
    """Categorical scorer: 1.0 for the route the model names, 0.0 elsewhere; all 0 for no pick.

    `none` is offered so that the model has an honest answer when nothing fits (unless a
    route is named `none`, which then keeps its name).
    """

    def __init__(self, routes: Sequence[RouteText], classifier: LlmClassifier) -> None:
        self._routes = tuple(routes)
        self._known = {r.name for r in routes}
        self.classifier = classifier
        self.info = ScorerInfo(name="llm", floor=0.0, categorical=True, temperature=0.1)

    @classmethod
    def build(
        cls,
        routes: Sequence[RouteText],
        settings: LlmScorerSettings,
        transport: Transport | None = None,
    ) -> LlmScorer:
        """A scorer talking to the endpoint the settings name."""
        return cls(routes, LlmClassifier(ChatClient(settings, transport)))

    def score(self, message: str, candidates: Sequence[str]) -> list[float]:
        """One-hot over the candidates (see `score_metered`)."""
        return list(self.score_metered(message, candidates).scores)

    def score_metered(self, message: str, candidates: Sequence[str]) -> Scored:
        """Ask the model over the candidates; one-hot scores, the usage, and why it abstained.

        Raises:
            KeyError: a candidate is not a route this scorer knows.
            ScorerFailure: the endpoint failed.
        """
        unknown = [c for c in candidates if c not in self._known]
        if unknown:
            raise KeyError(f"unknown route for the llm scorer: {unknown[0]!r}")
        options = route_options(self._routes, candidates)
        if NONE not in candidates:  # a route named `none` keeps its name
            options.append(Option(NONE, "none of the above fits"))
        pick = self.classifier.pick(message, options)
        scores = tuple(1.0 if c == pick.choice else 0.0 for c in candidates)
        picked = pick.choice is not None and pick.choice in candidates
        return Scored(scores, pick.usage, None if picked else f"no pick: {pick.answer[:80]!r}")

    def explain(self, message: str, route: str, limit: int = 5) -> list[Term]:
        """Nothing to explain: the model's answer is one name."""
        return []


class LlmDecider:
    """Tier 3: resolves an outstanding menu over the offered routes, `stay` and `none`."""

    def __init__(self, routes: Sequence[RouteText], classifier: LlmClassifier) -> None:
        self._routes = tuple(routes)
        self.classifier = classifier

    @classmethod
    def build(
        cls,
        routes: Sequence[RouteText],
        settings: LlmScorerSettings,
        transport: Transport | None = None,
    ) -> LlmDecider:
        """A decider talking to the endpoint the settings name."""
        return cls(routes, LlmClassifier(ChatClient(settings, transport)))

    def resolve(self, message: str, offered: Sequence[str], incumbent: str | None) -> Pick:
        """The model's pick among `offered`, `stay` (mid-conversation only) and `none`.

        A route named `stay` or `none` keeps its name: the keyword is then not offered.

        Raises:
            ScorerFailure: the endpoint failed.
        """
        options = route_options(self._routes, offered)
        if incumbent is not None and STAY not in offered:
            options.append(Option(STAY, f"keep the current route ({incumbent})"))
        if NONE not in offered:
            options.append(Option(NONE, "none of these fits"))
        return self.classifier.pick(message, options)
