"""The lint says which routes have no examples in a language the traffic uses.

The profile and its examples are this file's own.
"""

from __future__ import annotations

import pytest

from routing_core import load_pack
from routing_core.lint import (
    LANGUAGE_MESSAGES,
    language_gaps,
    lint_pack,
    message_language_gap,
    multilingual_encoder,
    route_languages,
)

ENGLISH_BILLING = [
    "why was I charged twice this month",
    "I need a copy of my last invoice please",
    "there is a payment on my card I do not recognise",
    "can I get a refund for the duplicate charge",
    "how do I update the card you bill",
]
SPANISH_BILLING = ["¿por qué me cobraron dos veces este mes?", "necesito una copia de mi factura"]
ENGLISH_SHIPPING = [
    "where is my parcel",
    "my order has not arrived yet",
    "how long does delivery take to Canada",
    "the tracking number does not work",
    "can you ship to a post office box",
]


def pack(billing_extra: list[str] | None = None):
    return load_pack(
        {
            "profile": {"slug": "shop", "name": "Shop"},
            "routes": [
                {"name": "billing", "examples": ENGLISH_BILLING + (billing_extra or [])},
                {"name": "shipping", "examples": ENGLISH_SHIPPING},
            ],
            "out_of_scope": [f"something unrelated number {i}" for i in range(20)],
        }
    )


def gaps(p, traffic):
    return [f for f in lint_pack(p, traffic_languages=traffic) if f.kind == "language-gap"]


def test_routes_with_no_examples_in_a_common_traffic_language_are_named():
    (finding,) = gaps(pack(SPANISH_BILLING), {"en": 88, "es": 12, "": 40})

    assert finding.severity == "warning" and finding.route is None
    assert finding.message.startswith(
        "12% of recent messages (of those whose language is clear) are in Spanish; this route has no Spanish examples: shipping."
    )


def test_every_route_missing_is_listed():
    (finding,) = gaps(pack(), {"en": 70, "es": 30})
    assert "these routes have no Spanish examples: billing, shipping." in finding.message


def test_the_finding_names_an_encoder_that_reads_the_language_meanwhile():
    (finding,) = gaps(pack(), {"en": 70, "es": 30})
    assert finding.message.endswith(
        "Until they have some, a hybrid scorer whose sentence encoder knows many languages"
        " (multilingual-e5-small) would read Spanish messages by what they mean"
    )


@pytest.mark.parametrize(
    "scorer",
    [
        {"kind": "hybrid", "model": "multilingual-e5-small"},
        {"kind": "embedding", "model": "universal-sentence-encoder-multilingual-3"},
        {
            "kind": "cascade",
            "tiers": [
                {"kind": "lexical"},
                {"kind": "hybrid", "model": "multilingual-e5-small", "take_foreign": True},
            ],
        },
    ],
)
def test_a_scorer_that_reads_many_languages_is_said_to_read_them(scorer):
    document = pack().model_dump(mode="json")
    del document["scorer"]
    reading = load_pack({**document, "scorer": scorer})
    model = scorer.get("model") or scorer["tiers"][1]["model"]

    assert multilingual_encoder(reading) == model
    # language_gaps itself: lint_pack would build the scorer, whose encoder this venv lacks.
    (finding,) = language_gaps(reading, {"en": 70, "es": 30})
    assert finding.message.endswith(
        f"billing, shipping; meanwhile the scorer's encoder ({model}) reads them by what they mean"
    )


@pytest.mark.parametrize(
    "tier",
    [
        {"kind": "embedding", "model": "multilingual-e5-small"},
        {"kind": "hybrid", "model": "universal-sentence-encoder-multilingual-3"},
    ],
)
def test_a_cascade_tier_that_reads_only_open_verdicts_is_said_to(tier):
    """A later tier that does not take messages in other languages reads one only when the
    lexical scorer is unsure: the finding says so rather than promise it reads them all."""
    document = pack().model_dump(mode="json")
    del document["scorer"]
    scorer = {"kind": "cascade", "tiers": [{"kind": "lexical"}, tier]}
    (finding,) = language_gaps(load_pack({**document, "scorer": scorer}), {"en": 70, "es": 30})
    assert finding.message.endswith(
        f"meanwhile the scorer's encoder ({tier['model']}) reads them by what they mean only"
        " when the tiers before it are unsure (a later hybrid tier that takes messages in other"
        " languages reads them all)"
    )


def test_an_english_encoder_reads_no_other_language():
    document = pack().model_dump(mode="json")
    del document["scorer"]
    english = load_pack({**document, "scorer": {"kind": "hybrid", "model": "all-minilm-l6-v2"}})
    assert multilingual_encoder(english) is None and multilingual_encoder(pack()) is None


def test_a_language_few_messages_use_is_not_reported():
    assert gaps(pack(), {"en": 990, "es": 10}) == []  # 1%
    assert gaps(pack(), {"es": LANGUAGE_MESSAGES - 1}) == []  # too few to be an audience
    assert gaps(pack(), {}) == []
    assert gaps(pack(), {"": 500}) == []  # languages unclear


def test_the_profiles_own_language_is_not_a_gap_even_in_short_examples():
    # Every example is too short to name alone; read together they are English.
    short = load_pack(
        {
            "profile": {"slug": "s", "name": "S"},
            "routes": [{"name": "cancel", "examples": ["cancel it", "stop my plan", "end it now"]}],
        }
    )
    assert route_languages(short.routes[0]) == {"en"}
    assert gaps(short, {"en": 100}) == []


def test_a_route_in_several_languages_has_them_all():
    assert route_languages(pack(SPANISH_BILLING).routes[0]) == {"en", "es"}


def test_without_traffic_languages_the_lint_is_as_before():
    assert lint_pack(pack()) == lint_pack(pack(), traffic_languages={})


SPANISH_MESSAGE = "¿por qué me cobraron dos veces la factura de este mes?"


def test_a_message_in_a_language_no_route_has_says_so_and_what_would_read_it():
    """The playground's sentence for one message: what the lint says for the traffic."""
    assert message_language_gap(pack(), SPANISH_MESSAGE) == (
        "no route has Spanish examples. Until they have some, a hybrid scorer whose sentence"
        " encoder knows many languages (multilingual-e5-small) would read Spanish messages by"
        " what they mean"
    )


def test_a_message_in_a_language_some_routes_have_names_the_others():
    gap = message_language_gap(pack(SPANISH_BILLING), SPANISH_MESSAGE)
    assert gap is not None and gap.startswith("this route has no Spanish examples: shipping. ")


@pytest.mark.parametrize(
    "message",
    [
        "why was I charged twice",  # the routes' own language
        "ok",  # too short to tell
        "zzzz qqqq",  # no language the detection is sure of
    ],
)
def test_a_message_in_the_routes_language_or_an_unclear_one_has_no_gap(message):
    assert message_language_gap(pack(), message) is None


def test_a_message_every_route_has_examples_in_has_no_gap():
    spanish_everywhere = load_pack(
        {
            "profile": {"slug": "es", "name": "ES"},
            "routes": [
                {"name": "billing", "examples": ENGLISH_BILLING + SPANISH_BILLING},
                {"name": "shipping", "examples": ENGLISH_SHIPPING + ["¿dónde está mi paquete?"]},
            ],
        }
    )
    assert message_language_gap(spanish_everywhere, SPANISH_MESSAGE) is None


def test_a_scorer_that_reads_every_message_in_another_language_leaves_no_gap_to_name():
    """Its tier record says how it read the message instead (the playground's `reading`)."""
    document = pack().model_dump(mode="json")
    del document["scorer"]
    hybrid = load_pack({**document, "scorer": {"kind": "hybrid", "model": "multilingual-e5-small"}})
    assert message_language_gap(hybrid, SPANISH_MESSAGE) is None
    # A later tier that reads such a message only when the first is unsure: still named.
    tiers = [{"kind": "lexical"}, {"kind": "hybrid", "model": "multilingual-e5-small"}]
    cascade = load_pack({**document, "scorer": {"kind": "cascade", "tiers": tiers}})
    gap = message_language_gap(cascade, SPANISH_MESSAGE)
    assert gap is not None and gap.endswith(
        "by what they mean only when the tiers before it"
        " are unsure (a later hybrid tier that takes"
        " messages in other languages reads them all)"
    )
