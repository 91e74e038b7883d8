"""A built-in background of off-topic text, learned as out of scope by a profile with few of its own.

A profile starts with a few examples a route and no out-of-scope examples. Its model then
knows only its routes, so a message about something else entirely ("what's the weather like
in Paris tomorrow" in an airline's profile) still goes to the route whose words it shares
most, at a calibrated score that clears any floor: a softmax over the routes alone has nowhere
else to put its mass. Giving the model an out-of-scope class made of generic off-topic text
(weather, jokes, sports, recipes, trivia, small talk, in several languages: `routing_core/
background/`, written for this project, NOTICE.md there) gives that mass somewhere to go,
as a profile's own out-of-scope examples do (docs/pack-format.md, "Lexical scorer").

Only the lines in the languages the routes are written in are learned (English when none of
them can be told): lines in another language would claim a message in that language which
the profile's routes should take across languages, as the hybrid tier's multilingual half
does ("Est-ce qu'il va pleuvoir demain ?" to an English profile's weather route;
docs/decisions.md, "A built-in background stands in ...").

The background never speaks against the profile's own routes: a background text whose
meaning (the static table's vector, `_static`) is close to one of the profile's texts is left
out, so a profile that does route weather questions or jokes keeps them. And a profile with
BACKGROUND_BELOW out-of-scope examples of its own or more learns only those: its team has
said what out of scope means for it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import resources

from routing_core import languages
from routing_core._stored_arrays import MINILM
from routing_core.scorers import _static
from routing_core.scorers._terms import is_content, message_words, stem
from routing_core.scorers.base import RouteText

# A profile with fewer out-of-scope examples of its own than this also learns the background.
BACKGROUND_BELOW = 20
# ... and routes of at most this many examples on average: a profile of real size. A large curated
# set (CLINC150, Banking77, HWU64 in full: 100-140 a route) learns as it did; there the
# background moved nothing but the scores (CLINC150 val: out-of-scope recall 70% either way).
LARGEST_ROUTES = 30
# ... and of at least this many examples: a first day's profile of three a route learns it,
# so "what's the weather like in Paris tomorrow" is not an airline's `book_flight`
# (docs/benchmarks.md, "A first day's profiles"). With two a route, a class of off-topic
# text outweighed them ("is it going to rain tomorrow" left a weather route of two examples
# for the background's small talk). The Spanish message its English small talk claims
# through "me" is read by a hybrid's multilingual half alone (docs/decisions.md, "A built-in
# background stands in ...").
SMALLEST_ROUTES = 3
# A background text whose cosine (static table) with any text of the profile's routes is at
# least this is left out: it may be what the profile routes. Chosen on CLINC150 val and the
# training remainders of Banking77 and HWU64 (bench/bench_oos_small.py).
CLOSE_COSINE = 0.5
# ... and at most this many times a route's average number of texts are kept (the first ones,
# so every topic is covered): a class far larger than any route would draw in-scope messages by their
# common words alone.
SIZE_RATIO = 3.0
# The background's languages, one file each (`<code>.txt`), in the order their blocks are
# taken; English, the first, is learned when the routes' languages are none of these.
LANGUAGES = ("en", "es", "fr", "de", "pt", "it", "nl")


@functools.cache
def texts(codes: tuple[str, ...] = LANGUAGES) -> tuple[str, ...]:
    """The background texts in these languages, taken in turn (LANGUAGES' order), each
    language's own in `_in_language`'s order: any first part covers every language and,
    within one, every topic."""
    chosen = [_in_language(code) for code in LANGUAGES if code in codes]
    return _in_turn(chosen)


@functools.cache
def _in_language(code: str) -> tuple[str, ...]:
    """One language's texts, its blocks (topics) taken in turn: every block's first line, then
    every block's second, and so on (comments and blank lines left out)."""
    path = resources.files("routing_core") / "background" / f"{code}.txt"
    blocks: list[list[str]] = [[]]
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            blocks.append([])
        elif not line.startswith("#"):
            blocks[-1].append(line.strip())
    return _in_turn(blocks)


def _in_turn(sequences: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """The sequences' first items, then their second ones, and so on."""
    longest = max((len(items) for items in sequences), default=0)
    return tuple(items[i] for i in range(longest) for items in sequences if i < len(items))


def languages_of(routes: Sequence[RouteText]) -> tuple[str, ...]:
    """The background's languages the routes' examples are written in (`languages.written_in`,
    route by route), ("en",) when none: the pack alone decides them, as it does the rest."""
    found = frozenset().union(*(languages.written_in(route.examples) for route in routes))
    return tuple(code for code in LANGUAGES if code in found) or LANGUAGES[:1]


def left_out_because(examples: Sequence[int], own: int, off: bool = False) -> str | None:
    """Why a profile of routes with `examples` examples each and `own` out-of-scope examples
    does not learn the background, or None when it does: "off" (the pack says so),
    "enough" (it has BACKGROUND_BELOW of its own), "few" (its routes have fewer than
    SMALLEST_ROUTES examples on average), "many" (more than LARGEST_ROUTES). The same tests
    as `background_for`, so what a page says of the background is what routing does."""
    if off:
        return "off"
    if own >= BACKGROUND_BELOW:
        return "enough"
    if not examples or sum(examples) < SMALLEST_ROUTES * len(examples):
        return "few"
    if sum(examples) > LARGEST_ROUTES * len(examples):
        return "many"
    return None


def background_for(routes: Sequence[RouteText], own: Sequence[str]) -> tuple[str, ...]:
    """The background texts this profile learns as out of scope beside its `own` examples:
    none when it has BACKGROUND_BELOW of its own or routes of fewer than SMALLEST_ROUTES or
    more than LARGEST_ROUTES examples on average,
    else the first of those not close to any route text (SIZE_RATIO)."""
    counted = sum(1 for text in own if text.strip())
    if left_out_because([len(r.examples) for r in routes], counted) is not None:
        return ()
    route_texts = [t for r in routes for t in (r.name_words, *r.examples, *r.keywords) if t.strip()]
    far = far_from(routes)
    return far[: max(1, round(SIZE_RATIO * len(route_texts) / len(routes)))]


def far_from(routes: Sequence[RouteText]) -> tuple[str, ...]:
    """The background texts in the routes' languages (`languages_of`), in order, whose meaning
    is not close to any text of `routes`."""
    candidates = texts(languages_of(routes))
    route_texts = [t for r in routes for t in (r.name_words, *r.examples, *r.keywords) if t.strip()]
    if not route_texts:
        return candidates
    table = _static.table(MINILM)  # one table always: the pack alone fixes what is learned
    near = (table.vectors(list(candidates)) @ table.vectors(route_texts).T).max(axis=1)
    named = {stem(w) for r in routes for w in message_words(r.name_words) if is_content(w)}
    return tuple(
        text
        for text, cosine in zip(candidates, near, strict=True)
        if cosine < CLOSE_COSINE and not named & _content_stems(text)
    )


def _content_stems(text: str) -> set[str]:
    """The stems of the text's content words. A route's name says its topic in a word or two
    ("check_weather"), so a background text with one of them is that route's talk even when
    the route has too few examples for the cosine to see it."""
    return {stem(word) for word in message_words(text) if is_content(word)}
