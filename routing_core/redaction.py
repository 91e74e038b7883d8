"""Personal data out of messages before they leave the agent: e-mail addresses, phones, numbers,
and out of the evidence that quotes them (`scrub_evidence`).

The patterns err on the side of redacting: a support message rarely needs a six-digit run to be
understood, and a card or account number must never reach the studio by accident.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

EMAIL = "[email]"
CARD = "[card]"
PHONE = "[phone]"
NUMBER = "[number]"

# Characters that show as nothing: typed (or pasted) inside a number or an address, they would
# split it for the patterns below while a reader still sees it whole. Matching looks through them.
_INVISIBLE = frozenset(
    "\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff"
)
_AT = "@\uff20\ufe6b"  # @, full-width @, small @
_DOT = ".\uff0e\u3002"  # ., full-width ., ideographic full stop
# Dashes people (and keyboards, and word processors) put in numbers: -, hyphen, non-breaking
# hyphen, figure dash, en dash, em dash, horizontal bar, minus sign.
_DASH = "\\-\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
# A local part as RFC 5322 allows it unquoted (john.o'neil, a+tag, x!y), or quoted ("john doe").
_LOCAL = r"""(?:"[^"\n]{1,64}"|[\w!#$%&'*+/=?^`{|}~-](?:[\w!#$%&'*+/=?^`{|}~.-]*[\w!#$%&'*+/=?^`{|}~-])?)"""
# john@example.com, john@localhost, and the same with a full-width @ or dots.
_EMAIL = re.compile(rf"(?<![\w!#$%&'*+/=?^`{{|}}~.-]){_LOCAL}[{_AT}]\w[\w-]*(?:[{_DOT}][\w-]+)*")
# 13–19 digits, optionally grouped by a space or a dash: every card number length in use.
_CARD = re.compile(rf"(?<!\d)\d(?:[ \u00a0{_DASH}]?\d){{12,18}}(?!\d)")
# Groups of digits with one other separator, the same each time (4111/1111/…, 4111 | 1111 | …,
# 4111 - 1111 - …). Ordinary lists have such shapes too ("steps 10, 11, 12, …", prices), so
# these count as a card only when the digits also pass the Luhn check every card number does.
_GROUPED = re.compile(
    r"(?<!\d)\d{2,7}(?P<sep>[^\S\n]{0,2}[_/,.|:;\\·•"
    + _DASH
    + r"][^\S\n]{0,2}|[^\S\n]{2,3})\d{2,7}(?:(?P=sep)\d{2,7}){0,7}(?!\d)"
)
# An optional +, then digits with the separators people type in phone numbers, 8+ digits in all;
# never from an ISO date (2024-05-01, its time after it), which has eight digits too.
_ISO_DATE = r"(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?![\d-])"
_PHONE = re.compile(rf"(?<![\w+])(?!{_ISO_DATE})\+?\(?\d(?:[\s().{_DASH}]{{0,3}}\d){{7,}}(?!\d)")
# 555 / 123 / 4567: slashes too, but only with 9+ digits, which no date has (12/25/2024).
_SLASHED = re.compile(r"(?<![\w+/])\d{2,4}(?:[^\S\n]{0,2}/[^\S\n]{0,2}\d{2,4}){2,3}(?![\d/])")
# Any other run of six or more digits: order, account, IBAN-like and ID numbers.
_LONG_DIGITS = re.compile(r"\d{6,}")

_FILL = "\x00"  # stands in for a redacted span while the next pattern runs (matches none)


def redact(text: str) -> str:
    """`text` with e-mail addresses, card numbers, phone numbers and long digit runs replaced.

    The patterns run in that order, each on what the ones before left; invisible characters
    (zero-width spaces, soft hyphens) are looked through, and a span that had them inside is
    replaced whole.

    Returns:
        The text with `[email]`, `[card]`, `[phone]` and `[number]` in place of what they hide.
    """
    keep = [i for i, c in enumerate(text) if c not in _INVISIBLE]
    view = "".join(text[i] for i in keep) if len(keep) < len(text) else text
    spans: list[tuple[int, int, str]] = []
    for pattern, label, accept in _PATTERNS:
        found = [(m.start(), m.end(), label) for m in pattern.finditer(view) if accept(m.group())]
        view = _masked(view, found)
        spans += found
    out, at = [], 0
    for start, end, label in sorted(spans):
        first, last = keep[start], keep[end - 1] + 1
        out += [text[at:first], label]
        at = last
    out.append(text[at:])
    return "".join(out)


def _masked(view: str, spans: list[tuple[int, int, str]]) -> str:
    """`view` with each span filled with `_FILL`: its offsets stay those of the original."""
    if not spans:
        return view
    parts, at = [], 0
    for start, end, _ in spans:
        parts += [view[at:start], _FILL * (end - start)]
        at = end
    parts.append(view[at:])
    return "".join(parts)


def _any(match: str) -> bool:
    return True


def _luhn_card(match: str) -> bool:
    """13–19 digits that pass the Luhn check: a card number written with odd separators."""
    digits = [int(c) for c in match if c.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    total = sum(digits[-1::-2]) + sum(sum(divmod(2 * d, 10)) for d in digits[-2::-2])
    return total % 10 == 0


def _international(match: str) -> bool:
    """A +country number is a phone whatever its length: taken before cards (+44 20 7946 0958 …)."""
    return match.startswith("+")


def _nine_digits(match: str) -> bool:
    return sum(c.isdigit() for c in match) >= 9


_PATTERNS: tuple[tuple[re.Pattern[str], str, Callable[[str], bool]], ...] = (
    (_EMAIL, EMAIL, _any),
    (_PHONE, PHONE, _international),
    (_CARD, CARD, _any),
    (_GROUPED, CARD, _luhn_card),
    (_PHONE, PHONE, _any),
    (_SLASHED, PHONE, _nine_digits),
    (_LONG_DIGITS, NUMBER, _any),
)


# A word of a message, as the scrubbing below compares them (any script, digits included).
_WORD = re.compile(r"\w+")


def scrub_evidence(event: Mapping[str, Any], kept_message: str | None) -> dict[str, Any]:
    """A decision event whose evidence holds no more of the message than `kept_message` does.

    An event's evidence quotes the message: a rule's matched text, a scorer's words. Sent as
    they are, they would carry what redaction took out of the message (a regex rule's match
    of an e-mail address, a name credited by its letters), and all of it when the message
    itself is not kept. So a quoted string is redacted, then kept only if every word of it
    is a word of the kept message; with no message kept, nothing quoted is. A term that is
    a route's own text (`kind` "example", what a meaning-based scorer shows) is the pack's,
    not the user's, and always kept.

    Args:
        event: `Decision.to_event()` (or an event as an agent sent it).
        kept_message: the message as it is kept, already redacted; None when none is kept.
    """
    out = dict(event)
    evidence = out.get("evidence")
    if not isinstance(evidence, Mapping):
        return out
    kept = frozenset(_WORD.findall(kept_message.lower())) if kept_message else frozenset()

    def kept_form(quoted: object) -> str | None:
        if not isinstance(quoted, str):
            return None
        clean = redact(quoted)
        return clean if set(_WORD.findall(clean.lower())) <= kept else None

    clean = dict(evidence)
    if clean.get("text") is not None:
        clean["text"] = kept_form(clean["text"])
    terms = clean.get("terms")
    if isinstance(terms, list):
        clean["terms"] = [
            term
            for term in terms
            if isinstance(term, Mapping)
            and (term.get("kind") == "example" or kept_form(term.get("term")) == term.get("term"))
        ]
    out["evidence"] = clean
    return out
