"""What an importer brings over, and the report of everything it could not: the shared result.

Every importer fills a `Collector` and ends with `Collector.finish()`. The collector owns the
rules every format shares, so they read the same whatever the source: names become route
names (renames reported), blank, too long and repeated examples are reported, lexicons
(entity values and synonyms) become keywords of the routes whose examples annotate that
entity, out-of-scope examples (fallback / negative intents) become the pack's
`out_of_scope`, and nothing is dropped without a note saying where it was and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from routing_core.errors import PackError
from routing_core.importers.files import check_cancelled
from routing_core.limits import (
    MAX_DESCRIPTION,
    MAX_ITEMS,
    MAX_PACK_CHARS,
    MAX_PACK_REGEX_CHARS,
    MAX_PACK_TEXTS,
    MAX_ROUTES,
    MAX_TEXT,
)
from routing_core.pack import Pack
from routing_core.storable import unstorable_reason
from routing_core.text import compile_user_regex, words

NoteKind = Literal["left out", "changed", "kept aside"]
MAX_NAME = 64
# A "word" this long is data (a hash, base64), not language; the lexical scorer's stored
# model also refuses terms past 2,000 characters, so such a text would break the pack.
MAX_WORD = 200
# Examples, phrases, words and notes one import may go through. Every text of an export ends
# as one of them, so this bounds the work and the report of an export made of repeats (a
# 16 KB zip unpacks to four million "- a" lines, each a note "repeats an example").
MAX_IMPORT_ITEMS = 250_000


@dataclass(frozen=True)
class Note:
    """One thing the reader of the import should know: `path: reason`."""

    kind: NoteKind
    path: str
    reason: str

    def line(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass
class ImportedRoute:
    """A route being built from another tool's intent (`source` is the intent's own name)."""

    name: str
    source: str
    description: str = ""
    examples: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    entities: set[str] = field(default_factory=set)

    def to_document(self) -> dict[str, Any]:
        """The route as a pack's `routes[]` entry."""
        doc: dict[str, Any] = {"name": self.name, "examples": list(self.examples)}
        if self.description:
            doc["description"] = self.description
        if self.keywords:
            doc["keywords"] = list(self.keywords)
        return doc


@dataclass(frozen=True)
class ImportResult:
    """The routes, rules, lexicons and out-of-scope examples that came over, and the report.

    Attributes:
        format: the importer's name (`rasa`, `dialogflow-es`, …).
        name: the agent's own name when the export has one.
        language: the language whose examples were imported, when the export has several.
        out_of_scope: examples of what the agent must not take (fallback / negative intents),
            the pack's `out_of_scope`: the scorer learns them as messages no route takes.
        lexicons: entity name → values and synonyms, as found in the export.
        notes: every change and every thing left out or kept aside, as `path: reason`.
    """

    format: str
    routes: tuple[ImportedRoute, ...]
    rules: tuple[dict[str, Any], ...] = ()
    lexicons: dict[str, tuple[str, ...]] = field(default_factory=dict)
    out_of_scope: tuple[str, ...] = ()
    notes: tuple[Note, ...] = ()
    name: str = ""
    description: str = ""
    language: str | None = None

    def notes_of(self, kind: NoteKind) -> list[Note]:
        return [n for n in self.notes if n.kind == kind]

    @property
    def example_count(self) -> int:
        return sum(len(r.examples) for r in self.routes)

    def to_document(self, *, slug: str = "imported", name: str | None = None) -> dict[str, Any]:
        """The pack document (not yet validated): profile identity, routes, rules, out of scope."""
        return {
            "profile": {
                "slug": slug,
                "name": (name or self.name or slug)[:200],
                "description": "" if _has_giant_word(self.description) else self.description[:8000],
            },
            "routes": [r.to_document() for r in self.routes],
            "rules": list(self.rules),
            "out_of_scope": list(self.out_of_scope),
        }

    def to_pack(self, *, slug: str = "imported", name: str | None = None) -> Pack:
        """A validated pack of the imported routes, rules and out-of-scope examples, weights learned.

        Raises:
            PackError: every `path: reason` the pack's own validation finds.
        """
        from routing_core.codec import load_pack
        from routing_core.scorers.stored import with_model

        return with_model(load_pack(self.to_document(slug=slug, name=name)))


# The characters an import's texts, descriptions and regexes may take: the pack's total less
# what the profile's own description may take (it is added when the pack is made).
_CHARS = MAX_PACK_CHARS - MAX_DESCRIPTION


class Collector:
    """Gathers one import's routes and notes; `finish()` makes the `ImportResult`."""

    def __init__(self, format: str) -> None:
        self.format = format
        self.routes: dict[str, ImportedRoute] = {}
        self._by_source: dict[str, ImportedRoute] = {}
        self.rules: list[dict[str, Any]] = []
        self.lexicons: dict[str, list[str]] = {}
        self.out_of_scope: list[str] = []
        self.notes: list[Note] = []
        self.name = ""
        self.description = ""
        self.language: str | None = None
        self._items = 0
        self._examples: dict[str, set[str]] = {}  # route name -> its examples, to find repeats
        self._out_of_scope: set[str] = set()
        # The pack's totals so far (docs/pack-format.md, Limits): past them a text is left
        # out with a note, as one past a field's limit is, rather than the import refused.
        self._texts = 0
        self._chars = 0
        self._regex_chars = 0

    def _room_for(self, text: str) -> str | None:
        """Why one more text of the pack cannot hold `text`, or None (then it is counted)."""
        if self._texts >= MAX_PACK_TEXTS:
            return f"a pack holds at most {MAX_PACK_TEXTS:,} texts (examples, keywords, ...) in all"
        if self._chars + len(text) > _CHARS:
            return f"a pack holds at most {MAX_PACK_CHARS:,} characters of text in all"
        self._texts += 1
        self._chars += len(text)
        return None

    def _count(self) -> None:
        """One more item of the export gone through; beyond MAX_IMPORT_ITEMS the import stops.

        Raises:
            PackError: the export is too large to import.
            ImportCancelled: the caller cancelled the import.
        """
        self._items += 1
        if self._items > MAX_IMPORT_ITEMS:
            raise PackError(
                [("$", f"more than {MAX_IMPORT_ITEMS:,} examples, phrases and notes: too large")]
            )
        if self._items % 4096 == 0:
            check_cancelled()

    # -- notes ------------------------------------------------------------------------------

    def left_out(self, path: str, reason: str) -> None:
        self._count()
        self.notes.append(Note("left out", path, reason))

    def changed(self, path: str, reason: str) -> None:
        self._count()
        self.notes.append(Note("changed", path, reason))

    def kept_aside(self, path: str, reason: str) -> None:
        self._count()
        self.notes.append(Note("kept aside", path, reason))

    # -- routes -----------------------------------------------------------------------------

    def route(self, source_name: str, path: str) -> ImportedRoute:
        """The route for an intent, created on first sight (the same intent twice is merged)."""
        if source_name in self._by_source:
            return self._by_source[source_name]
        name = self._unique(route_name(source_name))
        if name != source_name:
            self.changed(path, f"intent {source_name!r} is named {name!r} here")
        route = ImportedRoute(name=name, source=source_name)
        self.routes[name] = route
        self._by_source[source_name] = route
        return route

    def find(self, source_name: str) -> ImportedRoute | None:
        return self._by_source.get(source_name)

    def add_example(self, route: ImportedRoute, text: str, path: str) -> None:
        """Add an example, reporting the ones a pack cannot hold or already has."""
        self._count()
        text = " ".join(text.split())
        seen = self._examples.setdefault(route.name, set())
        if not text:
            self.left_out(path, "blank example")
        elif len(text) > MAX_TEXT:
            self.left_out(path, f"example longer than {MAX_TEXT} characters")
        elif _has_giant_word(text):
            self.left_out(path, f"example with a word longer than {MAX_WORD} characters")
        elif text in seen:
            self.left_out(path, f"repeats an example of {route.name!r}")
        elif len(route.examples) >= MAX_ITEMS:
            self.left_out(path, f"{route.name!r} already has {MAX_ITEMS} examples")
        elif full := self._room_for(text):
            self.left_out(path, full)
        else:
            route.examples.append(text)
            seen.add(text)

    def describe(self, route: ImportedRoute, text: str, path: str) -> None:
        """Set the route's description, unless a pack could not hold it (reported)."""
        text = " ".join(text.split())
        if len(text) > MAX_DESCRIPTION or _has_giant_word(text):
            self.left_out(path, "description too long, or with a word that is not a word")
        elif self._chars - len(route.description) + len(text) > _CHARS:
            self.left_out(path, f"a pack holds at most {MAX_PACK_CHARS:,} characters of text")
        else:
            self._chars += len(text) - len(route.description)
            route.description = text

    def add_out_of_scope(self, text: str, path: str) -> None:
        """Add a message the agent must not take, reporting the ones a pack cannot hold."""
        self._count()
        text = " ".join(text.split())
        if not text:
            self.left_out(path, "blank out-of-scope example")
        elif len(text) > MAX_TEXT:
            self.left_out(path, f"out-of-scope example longer than {MAX_TEXT} characters")
        elif _has_giant_word(text):
            self.left_out(
                path, f"out-of-scope example with a word longer than {MAX_WORD} characters"
            )
        elif reason := unstorable_reason(text):
            self.left_out(path, f"out-of-scope example that {reason}")
        elif text in self._out_of_scope:
            self.left_out(path, "repeats an out-of-scope example")
        elif len(self.out_of_scope) >= MAX_ITEMS:
            self.left_out(path, f"a pack holds at most {MAX_ITEMS} out-of-scope examples")
        elif full := self._room_for(text):
            self.left_out(path, full)
        else:
            self.out_of_scope.append(text)
            self._out_of_scope.add(text)

    def came_over_as_out_of_scope(self, path: str, what: str, before: int) -> None:
        """Say how many of `what`'s texts (those added since there were `before`) came over."""
        added = len(self.out_of_scope) - before
        self.changed(path, f"{what}: {added} phrase(s) came over as out-of-scope examples")

    def add_lexicon(self, name: str, words: list[str]) -> None:
        kept = self.lexicons.setdefault(name, [])
        known = set(kept)
        for word in words:
            self._count()
            word = " ".join(str(word).split())
            if word and len(word) <= MAX_TEXT and not _has_giant_word(word) and word not in known:
                kept.append(word)
                known.add(word)

    def add_regex_rule(self, route: ImportedRoute, pattern: str, path: str) -> None:
        """A rule for `route` if the pattern is one the pack accepts, else a note why not."""
        try:
            compile_user_regex(pattern)
        except ValueError as exc:
            self.left_out(path, f"regex not made a rule: {exc}")
            return
        if len(pattern) > MAX_TEXT:
            self.left_out(path, f"regex longer than {MAX_TEXT} characters")
            return
        if self._regex_chars + len(pattern) > MAX_PACK_REGEX_CHARS:
            self.left_out(
                path, f"a pack's regexes hold at most {MAX_PACK_REGEX_CHARS:,} characters"
            )
            return
        if self._chars + len(pattern) > _CHARS:
            self.left_out(path, f"a pack holds at most {MAX_PACK_CHARS:,} characters of text")
            return
        self._regex_chars += len(pattern)
        self._chars += len(pattern)
        self.rules.append({"route": route.name, "match": {"regex": pattern}})

    def _unique(self, name: str) -> str:
        candidate, n = name, 2
        while candidate in self.routes:
            suffix = f"-{n}"
            candidate, n = name[: MAX_NAME - len(suffix)] + suffix, n + 1
        return candidate

    # -- the end ----------------------------------------------------------------------------

    def finish(self) -> ImportResult:
        """Attach lexicons, drop (and report) routes without examples, check the limits.

        Raises:
            PackError: nothing routable came over, or more routes than a pack holds.
        """
        self._attach_lexicons()
        self._drop_out_of_scope_examples_of_routes()
        routes = []
        for route in self.routes.values():
            if route.examples or route.keywords:
                routes.append(route)
            else:
                self.left_out(f"intent {route.source!r}", "no examples: an empty intent")
        if not routes:
            raise PackError([("$", "no intent with examples was found in the export")])
        if len(routes) > MAX_ROUTES:
            raise PackError([("$", f"{len(routes)} intents: a pack holds at most {MAX_ROUTES}")])
        kept = {r.name for r in routes}
        rules = [r for r in self.rules if r["route"] in kept]
        return ImportResult(
            format=self.format,
            routes=tuple(routes),
            rules=tuple(rules),
            lexicons={k: tuple(v) for k, v in self.lexicons.items()},
            out_of_scope=tuple(self.out_of_scope),
            notes=tuple(self.notes),
            name=self.name,
            description=self.description,
            language=self.language,
        )

    def _drop_out_of_scope_examples_of_routes(self) -> None:
        """A text that is both a route's example and out of scope would teach the model both."""
        owners = {text: r.name for r in self.routes.values() for text in r.examples}
        for text in [t for t in self.out_of_scope if t in owners]:
            self.out_of_scope.remove(text)
            self.left_out(
                f"out-of-scope example {text[:80]!r}",
                f"it is also an example of {owners[text]!r}, so it stays there only",
            )

    def _attach_lexicons(self) -> None:
        """Each lexicon's words become keywords of the one route whose examples mark it.

        A keyword says "this route": a lexicon that several intents mark (a card name, an
        amount) says nothing about which of them a message is for, so its words become
        keywords of none of them. Case tells nothing either (the scorers read text lower-cased,
        docs/pack-format.md, Lexical scorer), so keywords are lower-cased and each kept once;
        a word that two lexicons would give to two different routes is a keyword of neither.
        """
        given: dict[str, list[tuple[str, ImportedRoute]]] = {}
        for lexicon, entries in self.lexicons.items():
            users = [r for r in self.routes.values() if lexicon in r.entities]
            if len(users) != 1:
                self._lexicon_aside(lexicon, entries, users)
                continue
            for word in dict.fromkeys(w.lower() for w in entries):
                given.setdefault(word, []).append((lexicon, users[0]))
        shared = {w: owners for w, owners in given.items() if len({id(r) for _, r in owners}) > 1}
        for word, owners in given.items():
            if word not in shared:
                route = owners[0][1]
                if (
                    word not in route.keywords
                    and len(route.keywords) < MAX_ITEMS
                    and self._room_for(word) is None
                ):
                    route.keywords.append(word)
        self._note_lexicons(given, shared)

    def _lexicon_aside(self, lexicon: str, entries: list[str], users: list[ImportedRoute]) -> None:
        if not users:
            why = "no intent's examples mark this entity"
        else:
            names = ", ".join(r.name for r in users)
            why = f"several intents mark this entity ({names}), so its words tell none apart"
        self.kept_aside(f"lexicon {lexicon!r}", f"{len(entries)} word(s) kept aside: {why}")

    def _note_lexicons(
        self, given: dict[str, list[tuple[str, ImportedRoute]]], shared: dict[str, Any]
    ) -> None:
        by_lexicon: dict[str, tuple[ImportedRoute, int]] = {}
        for word, owners in given.items():
            for lexicon, route in owners:
                kept = by_lexicon.get(lexicon, (route, 0))[1] + (word not in shared)
                by_lexicon[lexicon] = (route, kept)
        for lexicon, (route, kept) in by_lexicon.items():
            self.changed(f"lexicon {lexicon!r}", f"{kept} word(s) became keywords of {route.name}")
        for word, owners in shared.items():
            names = ", ".join(dict.fromkeys(r.name for _, r in owners))
            self.kept_aside(
                f"keyword {word!r}", f"it names several intents' entities ({names}): no keyword"
            )


def _has_giant_word(text: str) -> bool:
    return any(len(w) > MAX_WORD for w in words(text))


def route_name(raw: str) -> str:
    """A pack route name for another tool's intent name: lowercase, other characters as `_`."""
    # "BookRoom" → "book_room": camel case is how Lex and CLU names are usually written
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", raw.strip())
    name = re.sub(r"[^a-z0-9_-]+", "_", spaced.lower())
    # "checkout - late" → "checkout-late", not "checkout_-_late"
    name = re.sub(r"[_-]{2,}", lambda m: "-" if "-" in m[0] else "_", name)
    name = re.sub(r"^[^a-z0-9]+", "", name)[:MAX_NAME].rstrip("_-")
    return name or "intent"
