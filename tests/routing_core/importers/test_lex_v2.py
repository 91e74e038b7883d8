"""Amazon Lex V2 bot exports become routes in one locale; slot references are filled, reported."""

from __future__ import annotations

import json
import shutil

import pytest

from routing_core import PackError
from routing_core.importers import import_export
from tests.routing_core.importers.conftest import EXPORTS, notes, round_trip, zip_folder

BOT = EXPORTS / "lex_v2"


@pytest.fixture(scope="module")
def hotel(tmp_path_factory):
    archive = zip_folder(BOT, tmp_path_factory.mktemp("lex") / "HotelBot_DRAFT_X_LexJson.zip")
    return import_export("lex-v2", archive.read_bytes(), filename=archive.name)


def test_intents_with_utterances_become_routes_named_from_camel_case(hotel):
    assert (hotel.name, hotel.language) == ("HotelBot", "en_US")
    assert [(r.name, r.source, r.description) for r in hotel.routes] == [
        ("book_room", "BookRoom", "Reserve a hotel room"),
        ("cancel_booking", "CancelBooking", ""),
    ]


def test_slot_references_are_filled_with_a_sample_value_and_reported(hotel):
    assert hotel.routes[0].examples == [
        "I want to book a room",
        "book a king room",
        "reserve a king room for check in date",
    ]
    assert any(
        n.endswith(
            "sampleUtterances: slot references replaced by a sample value: CheckInDate, RoomType"
        )
        for n in notes(hotel, "changed")
    )
    assert hotel.routes[0].keywords == ["king", "king size", "big bed", "queen"]


def test_the_fallback_intent_other_locales_and_dialogue_settings_are_reported(hotel):
    left_out = notes(hotel, "left out")
    assert "locale 'es_US': not imported (importing 'en_US')" in left_out
    assert "intent 'Goodbye': no examples: an empty intent" in left_out
    assert (
        "HotelBot/BotLocales/en_US/BotLocale.json: nluConfidenceThreshold: 0.4 is Lex's "
        "confidence, not carried over (the pack's policy sets the floor)" in left_out
    )
    assert any(
        n.endswith("fulfillmentCodeHook: fulfillment has no equivalent in a pack") for n in left_out
    )
    assert any("the fallback intent has no utterances" in n for n in left_out)
    assert hotel.out_of_scope == ()


def test_utterances_on_the_fallback_intent_become_out_of_scope_examples(tmp_path):
    bot = shutil.copytree(BOT, tmp_path / "bot")
    fallback = bot / "HotelBot/BotLocales/en_US/Intents/FallbackIntent/Intent.json"
    intent = json.loads(fallback.read_text())
    intent["sampleUtterances"] = [
        {"utterance": "what is the weather"},
        {"utterance": "what  is the weather"},
        {"utterance": "tell me a joke"},
    ]
    fallback.write_text(json.dumps(intent))
    result = import_export("lex-v2", bot)
    assert result.out_of_scope == ("what is the weather", "tell me a joke")
    assert (
        "HotelBot/BotLocales/en_US/Intents/FallbackIntent/Intent.json: the fallback intent: "
        "2 phrase(s) came over as out-of-scope examples" in notes(result, "changed")
    )
    assert (
        "HotelBot/BotLocales/en_US/Intents/FallbackIntent/Intent.json: sampleUtterances[1]: "
        "repeats an out-of-scope example" in notes(result, "left out")
    )
    assert round_trip(result).pack.out_of_scope == result.out_of_scope


def test_another_locale_can_be_chosen_and_an_unknown_one_is_refused():
    spanish = import_export("lex-v2", BOT, language="es_US")
    assert [(r.name, r.examples) for r in spanish.routes] == [
        ("book_room", ["quiero reservar una habitación", "reserva un cuarto"])
    ]
    with pytest.raises(PackError, match="the bot has no 'fr_FR' locale; it has: en_US, es_US"):
        import_export("lex-v2", BOT, language="fr_FR")


def test_the_import_round_trips_into_a_pack_that_routes(hotel):
    router = round_trip(hotel)
    assert router.route("could you book me a queen room").route == "book_room"
    assert router.route("cancel the booking please").route == "cancel_booking"
