"""Personal data out of messages before they leave the agent: e-mail addresses, phones, numbers,
and out of the evidence that quotes them (`scrub_evidence`).

The patterns err on the side of redacting: a support message rarely needs a six-digit run to be
understood, and a card or account number must never reach the studio by accident.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

EMAIL = "[email]"
CARD = "[card]"
PHONE = "[phone]"
NUMBER = "[number]"

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# 13–19 digits, optionally grouped by spaces or dashes: every card number length in use.
_CARD = re.compile(r"(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)")
# An optional +, then digits with the separators people type in phone numbers, 8+ digits in all.
_PHONE = re.compile(r"(?<![\w+])\+?\(?\d(?:[\s().-]{0,2}\d){7,}(?!\d)")
# Any other run of six or more digits: order, account, IBAN-like and ID numbers.
_LONG_DIGITS = re.compile(r"\d{6,}")


def redact(text: str) -> str:
    """`text` with e-mail addresses, card numbers, phone numbers and long digit runs replaced.

    Returns:
        The text with `[email]`, `[card]`, `[phone]` and `[number]` in place of what they hide.
    """
    text = _EMAIL.sub(EMAIL, text)
    text = _CARD.sub(CARD, text)
    text = _PHONE.sub(PHONE, text)
    return _LONG_DIGITS.sub(NUMBER, text)


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
