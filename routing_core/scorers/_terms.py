"""How the lexical scorer turns text into terms: words, stop words, light stemming, n-grams.

Kept apart from the scorer so that the vocabulary rules (what a "term" is) can be read and
tested on their own, and so that the scorer module stays about weighting and scoring.
"""

from __future__ import annotations

from functools import lru_cache

import regex

from routing_core.text import turn_words

# Longer messages are scored on their first MAX_CHARS characters: a routing request states
# its intent early, and a cap keeps a pasted megabyte from stalling the turn.
MAX_CHARS = 4096

# A word longer than this is cut to its first MAX_WORD_CHARS characters, so that every term
# (a stem, a bigram of two words and a space) fits the stored model's term limit
# (`routing_core.limits.MAX_TEXT`, 2,000): a route text of one 2,000-character word must build.
# No word of real text comes near it, so the cut changes no term of normal text.
MAX_WORD_CHARS = 999

# Character n-grams of each word, with "<" and ">" marking its edges, so that "refund",
# "refunds" and "refunded" share most of their features even when the stemmer misses.
CHAR_NGRAM_SIZES = (3, 4, 5)

# Prefix of character n-gram keys. Words never contain "#" (they are runs of letters and
# digits), so word keys, bigram keys ("a b") and n-gram keys ("#<ref") never collide.
CHAR_PREFIX = "#"

# English function words. Inside a message they are terms like any other, and IDF keeps the
# common ones light ("no", "what", "how much" do carry intent). A message made only of them
# is scored only by a pack big enough to calibrate (lexical.py says why), and explanations
# leave a lone one out beside a content word.
_STOP_WORD_TEXT = """
    a about above after again all also am an and any are as at be because been before being
    both but by could did do does doing down during each few for from further had has have
    having he her here hers him his how i if in into is it its itself just me more most my
    myself no nor not of off on once only or other our ours out over own please same she
    should so some such than that the their theirs them then there these they this those
    through to too under until up very was we were what when where which while who whom why
    will with would you your yours yourself can may might must shall hi hello hey thanks
    thank tell know want need like get let
"""
STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())


def stem(word: str) -> str:
    """Strip a few common English inflections; light on purpose, n-grams cover the rest."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    if word.endswith("ing") and len(word) > 5:
        return word[:-3]
    if word.endswith("ed") and len(word) > 4 and not word.endswith("eed"):
        return word[:-2]
    return word


@lru_cache(maxsize=65536)
def word_terms(word: str) -> tuple[str, tuple[str, ...]]:
    """A word's stem and its character n-gram keys (cached: words repeat a lot)."""
    marked = f"<{word}>"
    grams = tuple(
        CHAR_PREFIX + marked[i : i + n]
        for n in CHAR_NGRAM_SIZES
        for i in range(len(marked) - n + 1)
    )
    return stem(word), grams


def char_gram_count(length: int) -> int:
    """How many character n-grams `word_terms` makes of a word of `length` characters."""
    marked = length + 2
    return sum(max(0, marked - n + 1) for n in CHAR_NGRAM_SIZES)


def char_size(term: str) -> int:
    """n for a character n-gram key ("#<ref" is a 4-gram), 0 for a word or bigram key."""
    return len(term) - len(CHAR_PREFIX) if term.startswith(CHAR_PREFIX) else 0


# A word: letters and digits of any script with the combining marks that follow them
# (Devanagari and Thai vowel signs, Arabic harakat, Hebrew points), so that "मुझे" or
# "ต้องการ" stays one word instead of breaking at every mark. Underscores split words.
_WORD = regex.compile(r"(?:[\p{L}\p{N}]\p{M}*)+")
# Scripts written without spaces between words. A run of them is split into overlapping
# character bigrams (each character with its marks): Chinese, Japanese and Thai words are
# mostly one or two characters long, and bigrams are the standard unsegmented unit (no
# dictionary to ship, no language to guess). Script extensions, so that the Japanese
# prolonged sound mark "ー" belongs to its katakana.
_UNSPACED_SCRIPTS = r"\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Thai}\p{scx=Lao}"
_UNSPACED_RUN = regex.compile(rf"(?:[{_UNSPACED_SCRIPTS}]\p{{M}}*)+")
_CHARACTER = regex.compile(r"\P{M}\p{M}*")
# What the rules above changed against plain letter-and-digit runs (FEATURES_VERSION 3).
_CHANGED_BY_SEGMENTING = regex.compile(rf"[\p{{M}}{_UNSPACED_SCRIPTS}]")


def message_words(text: str) -> list[str]:
    """The lowercased words of a message, capped at MAX_CHARS characters (MAX_WORD_CHARS each).

    A word in a script without spaces comes out as its character bigrams ("我想退款" as
    "我想", "想退", "退款"); a word mixing scripts keeps its other runs whole ("iphone").
    """
    text = text[:MAX_CHARS]
    if text.isascii() or _CHANGED_BY_SEGMENTING.search(text) is None:
        # The same words (tested), ten times faster than the rules below; a turn's message
        # was usually tokenised already by triage (`turn_words` remembers it).
        found = list(turn_words(text))  # a list, as the rules below give
    else:
        found = marked_words(text)
    if len(text) <= MAX_WORD_CHARS:  # no word can be too long: the common case costs nothing
        return found
    return [w[:MAX_WORD_CHARS] for w in found]


def marked_words(text: str) -> list[str]:
    """`message_words` by its rules alone: words with their marks, unspaced runs as bigrams."""
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        if _UNSPACED_RUN.search(word) is None:
            out.append(word)
        else:
            out += _segmented(word)
    return out


def _segmented(word: str) -> list[str]:
    """A word's runs in scripts without spaces as bigrams, its other runs whole, in order."""
    out: list[str] = []
    last = 0
    for run in _UNSPACED_RUN.finditer(word):
        if run.start() > last:
            out.append(word[last : run.start()])
        characters = _CHARACTER.findall(run.group())
        if len(characters) == 1:
            out += characters
        else:
            out += [a + b for a, b in zip(characters, characters[1:], strict=False)]
        last = run.end()
    if last < len(word):
        out.append(word[last:])
    return out


def is_segmented(text: str) -> bool:
    """Whether the text has a character the word rules above treat differently from plain
    letter-and-digit runs (a combining mark, a script without spaces)."""
    return _CHANGED_BY_SEGMENTING.search(text[:MAX_CHARS]) is not None


def has_unspaced_script(text: str) -> bool:
    """Whether the text has a letter of a script written without spaces (Han, kana, Thai,
    Lao): triage finds such lexicon words inside a message's words (docs/pack-format.md,
    Triage)."""
    return _UNSPACED_RUN.search(text) is not None


def is_content(word: str) -> bool:
    """True for a word that is not a stop word: worth scoring in any pack, and showing."""
    return word not in STOP_WORDS
