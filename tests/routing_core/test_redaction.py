"""Redaction against the ways people write cards, phones and e-mail addresses, and ordinary text.

Each family is a hypothesis strategy: Luhn-valid card numbers grouped with any separator people
use, phones with any dash or slash, e-mail addresses with quoted, apostrophe'd, dotless or
full-width forms, any of them with zero-width characters inside. Whatever is drawn, nothing of
it may survive `redact`; and the ordinary text beside it (dates, times, prices, versions, short
order numbers) must come out unchanged.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from routing_core.redaction import redact
from routing_core.reporting import EventReporter

INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
DASHES = ["-", "\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2212"]
WORDS = st.sampled_from(["my", "card", "is", "call", "me", "on", "mail", "thanks", "please"])


def _luhn_complete(body: list[int]) -> list[int]:
    """`body` and the check digit that makes it Luhn-valid."""
    total = 0
    for i, d in enumerate(reversed(body)):  # the check digit will sit right of body[-1]
        total += sum(divmod(2 * d, 10)) if i % 2 == 0 else d
    return body + [(10 - total % 10) % 10]


@st.composite
def cards(draw: st.DrawFn) -> str:
    """A Luhn-valid 13–19 digit number in groups of 2–6, one separator family throughout."""
    length = draw(st.integers(13, 19))
    digits = _luhn_complete(
        draw(st.lists(st.integers(0, 9), min_size=length - 1, max_size=length - 1))
    )
    text = "".join(map(str, digits))
    groups, at = [], 0
    while at < len(text):
        size = draw(st.integers(2, 6))
        if len(text) - at - size == 1:  # never leave a lone digit at the end
            size += 1
        groups.append(text[at : at + size])
        at += size
    mark = draw(st.sampled_from([" ", "", "\u00a0", "/", "_", ",", "|", ".", ":", *DASHES]))
    pad = draw(st.sampled_from(["", " "])) if mark.strip() else ""
    card = (pad + mark + pad).join(groups)
    return _sprinkled(draw, card)


@st.composite
def phones(draw: st.DrawFn) -> str:
    """A phone number: optional +country, 9–16 digits in groups with a dash, dot, space or slash."""
    groups = draw(st.lists(st.text("0123456789", min_size=3, max_size=4), min_size=3, max_size=4))
    mark = draw(st.sampled_from([" ", ".", " / ", "/", *DASHES, " - ", " \u2013 "]))
    phone = mark.join(groups)
    if draw(st.booleans()) and mark.strip() != "/":
        phone = "+44 " + phone
    return _sprinkled(draw, phone)


LOCAL = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)


@st.composite
def emails(draw: st.DrawFn) -> str:
    """An address: dotted, apostrophe'd, plus'd or quoted local parts; dotless, full-width @."""
    parts = draw(st.lists(LOCAL, min_size=1, max_size=3))
    joiner = draw(st.sampled_from([".", "'", "+", "_", "-"]))
    local = joiner.join(parts)
    if draw(st.booleans()):
        local = '"' + " ".join(parts) + '"'
    at = draw(st.sampled_from(["@", "\uff20", "\ufe6b"]))
    domain = draw(st.sampled_from(["localhost", "example.com", "mail.example.co.uk", "x-y.org"]))
    return _sprinkled(draw, local + at + domain)


def _sprinkled(draw: st.DrawFn, text: str) -> str:
    """`text` with zero-width characters put inside it, or as it is."""
    if not draw(st.booleans()):
        return text
    chars = list(text)
    for _ in range(draw(st.integers(1, 4))):
        chars.insert(draw(st.integers(1, len(chars) - 1)), draw(st.sampled_from(INVISIBLE)))
    return "".join(chars)


def _in_a_sentence(before: list[str], secret: str, after: list[str]) -> tuple[str, str]:
    return " ".join([*before, secret, *after]), " ".join([*before, "{}", *after])


@given(st.lists(WORDS, max_size=3), cards(), st.lists(WORDS, max_size=3))
def test_no_digit_of_a_card_survives_whatever_separates_its_groups(before, card, after):
    text, shape = _in_a_sentence(before, card, after)
    assert redact(text) == shape.format("[card]")


@given(st.lists(WORDS, max_size=3), phones(), st.lists(WORDS, max_size=3))
def test_no_digit_of_a_phone_survives_whatever_dashes_or_slashes_it_has(before, phone, after):
    text, shape = _in_a_sentence(before, phone, after)
    # 13 digits or more with plain spaces or dashes read as a card: redacted all the same.
    assert redact(text) in {shape.format(f) for f in ("[phone]", "[card]")}


@given(st.lists(WORDS, max_size=3), emails(), st.lists(WORDS, max_size=3))
def test_no_part_of_an_address_survives(before, email, after):
    text, shape = _in_a_sentence(before, email, after)
    assert redact(text) == shape.format("[email]")


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("4111/1111/1111/1111", "[card]"),
        ("4111_1111_1111_1111 ok", "[card] ok"),
        ("4111,1111,1111,1111", "[card]"),
        ("4111|1111|1111|1111", "[card]"),
        ("card 4111 - 1111 - 1111 - 1111.", "card [card]."),
        ("4111\u200b1111\u200b1111\u200b1111", "[card]"),
        ("call 555\u2013123\u20134567", "call [phone]"),
        ("call 555\u2011123\u20114567", "call [phone]"),
        ("call 555 / 123 / 4567 now", "call [phone] now"),
        ("john@localhost", "[email]"),
        ('"john doe"@example.com wrote', "[email] wrote"),
        ("john\uff20example.com", "[email]"),
        ("mail john.o'neil@example.com.", "mail [email]."),
    ],
)
def test_the_formats_that_slipped_through_are_redacted(text, redacted):
    assert redact(text) == redacted


@pytest.mark.parametrize(
    "text",
    [
        "order 12345 came in 2024",
        "meet on 2024-05-01 at 10:30",
        "2024-05-01 10:30:15",
        "on 12/25/2024 at 9:45 pm",
        "it costs $1,299.99 or 2.499,00 EUR",
        "prices 10.99, 12.50, 13.75, 14.00",
        "steps 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12",
        "upgrade from v1.2.3 to 10.4.12",
        "order #A-55231 and 88231",
        "from 9-5 mon-fri, room 101, floor 3",
        "a 16:9 screen at 1920x1080",
        "it's john's, ping @bob",
        "family \U0001f468\u200d\U0001f469\u200d\U0001f467 emoji",
    ],
)
def test_ordinary_text_is_left_as_it_is(text):
    assert redact(text) == text


@pytest.mark.parametrize("conversation", ["jo@example.com", "+44 20 7946 0958", "4111111111111111"])
def test_a_conversation_id_that_identifies_someone_is_sent_as_a_stable_keyed_hash(conversation):
    reporter = EventReporter("http://127.0.0.1:9/events", token="rse_a")
    other_token = EventReporter("http://127.0.0.1:9/events", token="rse_b")
    sent = reporter._conversation_id(conversation)
    assert sent is not None and sent.startswith("h:") and len(sent) == 34
    assert conversation not in sent and redact(sent) == sent
    assert reporter._conversation_id(conversation) == sent  # turns still group
    assert other_token._conversation_id(conversation) != sent  # keyed: no lookup table


def test_an_ordinary_conversation_id_is_sent_as_it_is():
    reporter = EventReporter("http://127.0.0.1:9/events", token="rse_a")
    assert reporter._conversation_id("c0-7f3a") == "c0-7f3a"
    assert reporter._conversation_id(None) is None
