"""Dialogflow ES agent zips become routes in one language; fallback phrases are out of scope."""

from __future__ import annotations

import json
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core import PackError
from routing_core.importers import import_export
from tests.routing_core.importers.conftest import EXPORTS, notes, round_trip, zip_folder

AGENT = EXPORTS / "dialogflow_es"


@pytest.fixture(scope="module")
def agent_zip(tmp_path_factory):
    return zip_folder(AGENT, tmp_path_factory.mktemp("es") / "Hotel-Desk.zip").read_bytes()


@pytest.fixture(scope="module")
def english(agent_zip):
    return import_export("dialogflow-es", agent_zip, filename="Hotel-Desk.zip")


def test_the_default_language_is_imported_and_the_others_are_counted(english):
    assert english.language == "en"
    assert (english.name, english.description) == ("Hotel Desk", "Front desk of a small hotel")
    assert [(r.name, r.source, len(r.examples)) for r in english.routes] == [
        ("default_welcome_intent", "Default Welcome Intent", 3),
        ("checkout-late", "checkout - late", 2),
        ("room_book", "room.book", 3),
    ]
    assert "language 'de': 3 phrase(s) in 2 intent(s) not imported (importing 'en')" in notes(
        english, "left out"
    )


def test_entity_parts_are_joined_into_plain_text_and_templates_are_reported(english):
    room = next(r for r in english.routes if r.name == "room_book")
    assert room.examples == [
        "I need a double room for tomorrow",
        "book a room",
        "do you have a free suite this weekend",
    ]
    assert (
        "intents/room.book_usersays_en.json[3]: a template phrase (@entity:name), not an example"
        in notes(english, "left out")
    )
    assert any("room-type ×2, sys.date ×1" in n for n in notes(english, "changed"))


def test_entity_entries_and_synonyms_become_keywords_of_the_intents_that_use_them(english):
    room = next(r for r in english.routes if r.name == "room_book")
    assert room.keywords == ["double", "double bed", "twin", "suite", "junior suite"]


def test_the_fallback_intent_becomes_out_of_scope_examples(english):
    assert english.out_of_scope == ("what is the capital of France", "tell me a joke")
    assert "fallback_intent" not in [r.name for r in english.routes]
    assert (
        "intents/Default Fallback Intent.json: fallback intent 'Default Fallback Intent': "
        "2 phrase(s) came over as out-of-scope examples" in notes(english, "changed")
    )
    assert not any("Fallback" in n for n in notes(english, "kept aside"))


def test_empty_intents_blank_phrases_and_dialogue_parts_are_reported(english):
    left_out = notes(english, "left out")
    for line in (
        "intent 'spa.hours': no examples: an empty intent",
        "intents/checkout - late_usersays_en.json[2]: blank example",
        "intents/checkout - late.json: contexts: input contexts have no equivalent in a pack",
        "intents/room.book.json: webhookUsed: webhooks have no equivalent in a pack",
        "intents/Default Welcome Intent.json: events: events have no equivalent in a pack",
    ):
        assert line in left_out


def test_another_language_can_be_chosen(agent_zip):
    german = import_export("dialogflow-es", agent_zip, filename="a.zip", language="de")
    assert [(r.name, r.examples) for r in german.routes] == [
        ("default_welcome_intent", ["hallo", "guten Morgen"]),
        ("room_book", ["ich brauche ein Zimmer"]),
    ]
    assert german.routes[1].keywords == []  # the German entries mark no phrase
    assert german.lexicons == {"room-type": ("double", "Doppelzimmer")}


def test_a_language_the_agent_does_not_have_is_refused_with_the_choices(agent_zip):
    with pytest.raises(PackError) as caught:
        import_export("dialogflow-es", agent_zip, filename="a.zip", language="fr")
    assert caught.value.lines() == ["language: the agent has no 'fr' examples; it has: de, en"]


def test_the_import_round_trips_into_a_pack_that_routes(english):
    router = round_trip(english)
    assert router.route("could I book a double room").route == "room_book"
    assert router.route("I'd like a late checkout").route == "checkout-late"
    # the fallback's phrases are in the pack and learned: without them this went to room_book
    assert router.pack.out_of_scope == english.out_of_scope
    assert router.route("tell me a joke").route is None


def test_a_zip_without_agent_json_is_refused(tmp_path):
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("intents/a.json", json.dumps({"name": "a"}))
    with pytest.raises(PackError, match="agent.json: not found"):
        import_export("dialogflow-es", path)


@settings(max_examples=60)
@given(st.binary(max_size=400))
def test_any_upload_gives_routes_or_a_pack_error(data):
    try:
        import_export("dialogflow-es", data, filename="agent.zip")
    except PackError as exc:
        assert exc.errors
