"""Personal data out of messages before they leave the agent: e-mail addresses, phones, numbers.

The patterns err on the side of redacting: a support message rarely needs a six-digit run to be
understood, and a card or account number must never reach the studio by accident.
"""

from __future__ import annotations

import re

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
