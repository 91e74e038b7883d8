"""Authoring lint: the mistakes that make routes fight each other, found before publishing.

Each finding names a severity, the route (and JSON path) to fix, and one sentence saying
what is wrong. Everything is computed from the pack alone, with the pack's own rules and
scorer, so the studio and the command line agree; the one exception is what the caller knows
of its traffic (the languages recent messages were written in), passed in as counts, since
this package never reads a database.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from routing_core import languages
from routing_core.pack import Pack, Route
from routing_core.router import Router
from routing_core.rules import RuleSet
from routing_core.scorers import _background, route_texts
from routing_core.scorers._terms import STOP_WORDS, stem
from routing_core.scorers.embedding import MULTILINGUAL_MODELS
from routing_core.text import words

Severity = Literal["error", "warning", "info"]
MIN_EXAMPLES = 5
# A profile with fewer out-of-scope examples of its own also learns the built-in background.
OUT_OF_SCOPE_WANTED = _background.BACKGROUND_BELOW
# The examples a route needs on average before a profile learns the built-in background.
BACKGROUND_MIN_EXAMPLES = _background.SMALLEST_ROUTES
_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
# A language the routes should have examples in: this share of the recent messages whose
# language is known, and at least this many of them (a handful of visitors is no audience).
LANGUAGE_SHARE = 0.05
LANGUAGE_MESSAGES = 10
# Routes named in one language finding; the rest are counted.
_NAMED_ROUTES = 12
# The numbers in a finding's path ("routes[10].examples[2]"), compared as numbers.
_DIGITS = re.compile(r"(\d+)")


@dataclass(frozen=True, slots=True)
class Finding:
    """One lint finding: what is wrong, how bad, and where to fix it."""

    severity: Severity
    kind: str
    route: str | None
    path: str
    message: str


def lint_pack(
    pack: Pack,
    router: Router | None = None,
    traffic_languages: Mapping[str, int] | None = None,
) -> list[Finding]:
    """Every finding for the pack, errors first.

    Args:
        pack: the pack to check.
        router: a compiled router for the pack (built when None); used to route `never`
            phrases the way production would.
        traffic_languages: how many recent messages were written in each language (codes of
            `routing_core.languages.detect`); routes with no examples in a language many of
            them use are reported (`language_gaps`).
    """
    router = router or Router(pack)
    findings = [
        *_duplicate_examples(pack),
        *_near_duplicates(pack),
        *_shadowed_examples(pack),
        *_rule_examples(pack),
        *_never_phrases(pack, router),
        *_few_examples(pack),
        *_shared_keywords(pack),
        *_stuck_default(pack),
        *_few_out_of_scope(pack),
        *language_gaps(pack, traffic_languages or {}),
    ]
    return sorted(findings, key=lambda f: (_SEVERITY_ORDER[f.severity], _in_pack_order(f.path)))


def _in_pack_order(path: str) -> tuple[tuple[int, str], ...]:
    """A finding's path as a sort key in the pack's own order: "routes[2]" before
    "routes[10]" (as text, "routes[10]" came first, and a twelve-route profile's findings
    read book_flight, pets, human_agent, change_booking, ...)."""
    return tuple((int(part), "") if part.isdigit() else (-1, part) for part in _DIGITS.split(path))


def language_gaps(pack: Pack, traffic_languages: Mapping[str, int]) -> list[Finding]:
    """One warning per language that recent messages often use and some routes have no
    example in: those messages reach those routes only through words shared across languages.

    Counts of the empty code (language unclear) are left out of the shares. Needs the
    `languages` extra to read the examples; without it there is nothing to say.
    """
    known = {code: n for code, n in traffic_languages.items() if code and n > 0}
    total = sum(known.values())
    wanted = [
        (code, n)
        for code, n in sorted(known.items(), key=lambda item: (-item[1], item[0]))
        if n >= LANGUAGE_MESSAGES and n / total >= LANGUAGE_SHARE
    ]
    if not wanted or not languages.available():
        return []
    reader = _multilingual_reader(pack)
    findings = []
    for code, n in wanted:
        missing = _routes_without(pack, code)
        if missing:
            findings.append(_language_gap(code, n / total, missing, reader))
    return findings


def _routes_without(pack: Pack, code: str) -> list[str]:
    """The routes with no example in language `code` (each route's languages are kept:
    `languages.written_in`)."""
    return [route.name for route in pack.routes if code not in route_languages(route)]


def multilingual_encoder(pack: Pack) -> str | None:
    """The encoder that knows many languages which the pack's scorer (or one of its cascade's
    tiers) reads messages with, or None: with one, a message in a language the examples lack
    is still placed by what it means (docs/pack-format.md, "Embedding and hybrid scorers")."""
    reader = _multilingual_reader(pack)
    return reader[0] if reader else None


def _multilingual_reader(pack: Pack) -> tuple[str, bool] | None:
    """`multilingual_encoder`, and whether its tier reads every message in another language:
    the scorer itself, a cascade's first tier, or a later hybrid tier that takes them
    (`take_foreign`); any other later tier reads only what the tiers before it left open
    (docs/pack-format.md, Cascade)."""
    scorer = pack.scorer
    for index, settings in enumerate(getattr(scorer, "tiers", (scorer,))):
        model = getattr(settings, "model", None)
        if settings.kind in ("embedding", "hybrid") and model in MULTILINGUAL_MODELS:
            return str(model), index == 0 or bool(getattr(settings, "take_foreign", False))
    return None


def route_languages(route: Route) -> frozenset[str]:
    """The languages a route's examples are written in (`languages.written_in`: the short
    ones read together)."""
    return languages.written_in(route.examples)


def message_language_gap(pack: Pack, message: str) -> str | None:
    """What `language_gaps` says, for one message in front of a person (the playground):
    the message is in a language the detection is sure of, some routes have no example in
    it, and no tier of the pack reads every such message by what it means. The sentence
    names those routes (or says that none has any) and the remedy; None otherwise, and
    without the `languages` extra.

    A person who tries "quiero cambiar mi vuelo" on routes written in English otherwise sees
    a menu of routes that share a few letters with it, and nothing says why.
    """
    if not languages.available():
        return None
    code = languages.detect(message)
    reader = _multilingual_reader(pack)
    if code is None or (reader is not None and reader[1]):
        return None
    missing = _routes_without(pack, code)
    if not missing:
        return None
    name = languages.name(code)
    if len(missing) == len(pack.routes):
        gap = f"no route has {name} examples"
    else:
        gap = f"{_these(missing)} no {name} examples: {_named(missing)}"
    return gap + _meanwhile(name, reader)


def _language_gap(
    code: str, share: float, missing: list[str], reader: tuple[str, bool] | None
) -> Finding:
    name = languages.name(code)
    return Finding(
        "warning",
        "language-gap",
        None,
        "routes",
        f"{share:.0%} of recent messages (of those whose language is clear) are in {name};"
        f" {_these(missing)} no {name} examples: {_named(missing)}{_meanwhile(name, reader)}",
    )


def _these(routes: list[str]) -> str:
    return "this route has" if len(routes) == 1 else "these routes have"


def _named(routes: list[str]) -> str:
    more = f" and {len(routes) - _NAMED_ROUTES} more" if len(routes) > _NAMED_ROUTES else ""
    return ", ".join(routes[:_NAMED_ROUTES]) + more


def _meanwhile(name: str, reader: tuple[str, bool] | None) -> str:
    """What reads messages in language `name` until the routes have examples in it."""
    if reader is None:
        return (
            f". Until they have some, a hybrid scorer whose sentence encoder knows many"
            f" languages (multilingual-e5-small) would read {name} messages by what they mean"
        )
    if reader[1]:
        return f"; meanwhile the scorer's encoder ({reader[0]}) reads them by what they mean"
    return (
        f"; meanwhile the scorer's encoder ({reader[0]}) reads them by what they mean only"
        " when the tiers before it are unsure (a later hybrid tier that takes messages in"
        " other languages reads them all)"
    )


def _normal(text: str) -> str:
    return " ".join(words(text))


def _content_bag(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in words(text) if w not in STOP_WORDS)


def _examples(pack: Pack) -> Iterable[tuple[int, str, int, str]]:
    for r, route in enumerate(pack.routes):
        for e, example in enumerate(route.examples):
            yield r, route.name, e, example


def _duplicate_examples(pack: Pack) -> list[Finding]:
    seen: dict[str, set[str]] = defaultdict(set)
    where: dict[str, list[tuple[int, str, int]]] = defaultdict(list)
    for r, name, e, example in _examples(pack):
        key = _normal(example)
        if key:
            seen[key].add(name)
            where[key].append((r, name, e))
    return [
        Finding(
            "error",
            "duplicate-example",
            name,
            f"routes[{r}].examples[{e}]",
            f"the same example is under {', '.join(sorted(seen[key]))}: the scorer cannot "
            "tell them apart on it",
        )
        for key, places in where.items()
        if len(seen[key]) > 1
        for r, name, e in places
    ]


def _near_duplicates(pack: Pack) -> list[Finding]:
    """Examples of different routes with the same content words (order, stop words aside)."""
    groups: dict[frozenset[str], list[tuple[int, str, int, str]]] = defaultdict(list)
    for r, name, e, example in _examples(pack):
        bag = _content_bag(example)
        if bag:
            groups[bag].append((r, name, e, example))
    findings = []
    for members in groups.values():
        routes = {m[1] for m in members}
        texts = {_normal(m[3]) for m in members}
        if len(routes) < 2 or len(texts) < 2:
            continue  # one route, or exact duplicates (reported as errors)
        for r, name, e, _ in members:
            others = ", ".join(sorted(routes - {name}))
            findings.append(
                Finding(
                    "warning",
                    "near-duplicate",
                    name,
                    f"routes[{r}].examples[{e}]",
                    f"a near-duplicate (same content words) is an example of {others}",
                )
            )
    return findings


def _shadowed_examples(pack: Pack) -> list[Finding]:
    rules = RuleSet(pack.rules)
    findings = []
    for r, name, e, example in _examples(pack):
        hit = rules.first_match(example)
        if hit is not None and hit.route != name:
            findings.append(
                Finding(
                    "warning",
                    "shadowed-example",
                    name,
                    f"routes[{r}].examples[{e}]",
                    f"rule {hit.rule + 1 if hit.rule is not None else '?'} sends this example "
                    f"to {hit.route} before the scorer sees it",
                )
            )
    return findings


def _rule_examples(pack: Pack) -> list[Finding]:
    rules = RuleSet(pack.rules)
    findings = []
    for i, rule in enumerate(pack.rules):
        for e, example in enumerate(rule.examples):
            path = f"rules[{i}].examples[{e}]"
            if not rules.matches(i, example):
                findings.append(
                    Finding(
                        "error",
                        "rule-example-misses",
                        rule.route,
                        path,
                        f"this example does not match rule {i + 1} itself",
                    )  # fmt: skip
                )
                continue
            first = rules.first_match(example)
            if first is not None and first.rule != i:
                findings.append(
                    Finding(
                        "warning",
                        "rule-example-shadowed",
                        rule.route,
                        path,
                        f"an earlier rule ({(first.rule or 0) + 1}, to {first.route}) "
                        "catches this example first",
                    )  # fmt: skip
                )
    return findings


def _never_phrases(pack: Pack, router: Router) -> list[Finding]:
    findings = []
    for r, route in enumerate(pack.routes):
        for n, phrase in enumerate(route.never):
            decision = router.route(phrase)
            if decision.route == route.name and decision.verdict in ("move", "stay"):
                findings.append(
                    Finding(
                        "error",
                        "never-routes-here",
                        route.name,
                        f"routes[{r}].never[{n}]",
                        f"this phrase must not route to {route.name}, but it does "
                        f"(by {decision.by})",
                    )  # fmt: skip
                )
    return findings


def _few_examples(pack: Pack) -> list[Finding]:
    return [
        Finding(
            "warning",
            "few-examples",
            route.name,
            f"routes[{r}].examples",
            f"{_how_many_examples(len(route.examples))}: give at least {MIN_EXAMPLES} so the scorer "
            "learns the route's range",
        )
        for r, route in enumerate(pack.routes)
        if len(route.examples) < MIN_EXAMPLES
    ]


def _shared_keywords(pack: Pack) -> list[Finding]:
    owners: dict[str, list[tuple[int, str, int]]] = defaultdict(list)
    for r, route in enumerate(pack.routes):
        for k, keyword in enumerate(route.keywords):
            owners[re.sub(r"\s+", " ", keyword.strip().lower())].append((r, route.name, k))
    return [
        Finding(
            "warning",
            "shared-keyword",
            name,
            f"routes[{r}].keywords[{k}]",
            f"the keyword {keyword!r} is also a keyword of "
            + ", ".join(sorted({o[1] for o in places} - {name})),
        )
        for keyword, places in owners.items()
        if len({p[1] for p in places}) > 1
        for r, name, k in places
    ]


def _stuck_default(pack: Pack) -> list[Finding]:
    if pack.default_route is None:
        return []
    route = next(r for r in pack.routes if r.name == pack.default_route)
    if route.action.kind != "stuck":
        return []
    return [
        Finding(
            "warning",
            "stuck-default",
            route.name,
            "default_route",
            f"the default route {route.name} is a stuck route: every unmatched turn "
            "ends the conversation",
        )
    ]


def _how_many_examples(count: int) -> str:
    return f"{count} example" if count == 1 else f"{count} examples"


def _few_out_of_scope(pack: Pack) -> list[Finding]:
    """A profile with fewer out-of-scope examples than the engine wants of its own: until it
    has them, the lexical scorer also learns the built-in background (docs/pack-format.md,
    "Lexical scorer"), which knows generic off-topic talk but not this profile's users."""
    own = sum(1 for text in pack.out_of_scope if text.strip())
    if own >= _background.BACKGROUND_BELOW:
        return []
    why = background_left_out([len(r.examples) for r in pack.routes], own, pack.no_background)
    return [
        Finding(
            "info",
            "few-out-of-scope",
            None,
            "out_of_scope",
            f"{own} out-of-scope example{'' if own == 1 else 's'}{BACKGROUND_WORDS[why]};"
            " add messages your users send that no route is for",
        )
    ]


# What a profile with few out-of-scope examples is told of the built-in background, by
# `background_left_out`'s answer (None: it is learned).
BACKGROUND_WORDS = {
    None: f": until there are {_background.BACKGROUND_BELOW}, routing also learns a built-in set"
    " of off-topic messages (weather, jokes, sports and the like)",
    "off": ", and the built-in set of off-topic messages is left out (policy)",
    "few": f", and the built-in set of off-topic messages is not learned until the routes have"
    f" {_background.SMALLEST_ROUTES} examples each on average: meanwhile nothing tells"
    " off-topic messages from the routes",
    "many": "; with this many examples a route the built-in set of off-topic messages is not"
    " learned (it moved nothing at that size)",
    "enough": "",
}


def background_left_out(examples: list[int], own: int, off: bool = False) -> str | None:
    """Why routing does not learn the built-in background of off-topic text for routes of
    `examples` examples each and `own` out-of-scope examples, or None when it does: "off"
    (the pack leaves it out), "enough" (own examples suffice), "few" (routes of fewer than
    five examples on average), "many" (of more than thirty)."""
    return _background.left_out_because(examples, own, off)


def starter_out_of_scope(pack: Pack, limit: int = 12) -> list[str]:
    """Out-of-scope examples to suggest for the pack: the built-in background's first texts
    that are not near any of its routes' texts (so no route's own talk is among them) and
    not already its examples. A starting point for a person to review, not a finished set."""
    have = {text.strip().lower() for text in pack.out_of_scope}
    kept = _background.far_from(route_texts(pack))
    return [text for text in kept if text.lower() not in have][:limit]
