"""Dialogflow CX JSON packages become routes; negative phrases are out of scope, flows reported."""

from __future__ import annotations

import pytest

from routing_core import PackError
from routing_core.importers import import_export
from tests.routing_core.importers.conftest import EXPORTS, notes, round_trip, zip_folder

AGENT = EXPORTS / "dialogflow_cx"


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    archive = zip_folder(AGENT, tmp_path_factory.mktemp("cx") / "exported_agent_Shop.zip")
    return import_export("dialogflow-cx", archive)


def test_intents_with_phrases_become_routes_with_their_descriptions(shop):
    assert shop.name == "Shop Assistant"
    assert [(r.name, r.description, len(r.examples)) for r in shop.routes] == [
        ("default_welcome_intent", "The shopper says hello", 3),
        ("order_return", "", 2),
        ("order_track", "Where an order is", 3),
        ("store_location", "Where a physical store is and when it opens", 3),
    ]


def test_parameter_parts_are_plain_text_and_entity_types_become_keywords(shop):
    store = next(r for r in shop.routes if r.name == "store_location")
    assert store.examples[0] == "where is your store in Lyon"
    assert store.examples[2] == "opening hours of the Paris store"
    assert store.keywords == ["lyon", "lyons", "paris", "paname"]
    assert (
        "intents/store.location/trainingPhrases/en.json: parameter parts kept as plain text: "
        "store-city ×2" in notes(shop, "changed")
    )


def test_the_negative_intent_becomes_out_of_scope_examples(shop):
    assert shop.out_of_scope == ("what is the weather in Lisbon", "who won the match yesterday")
    assert all("negative" not in r.name for r in shop.routes)
    assert (
        "intents/Default Negative Intent/Default Negative Intent.json: negative intent "
        "'Default Negative Intent': 2 phrase(s) came over as out-of-scope examples"
        in notes(shop, "changed")
    )


def test_flows_other_languages_and_empty_intents_are_reported(shop):
    left_out = notes(shop, "left out")
    assert (
        "flows/Default Start Flow/Default Start Flow.json: flow 'Default Start Flow' (its pages "
        "and transitions) has no equivalent; it uses Default Welcome Intent, order.track, "
        "store.location" in left_out
    )
    assert (
        "intents/Default Welcome Intent/trainingPhrases/fr.json: 2 phrase(s) in 'fr' not imported (importing 'en')"
        in left_out
    )
    assert "intent 'gift.wrap': no examples: an empty intent" in left_out
    assert (
        "intents/store.location/store.location.json: labels: labels have no equivalent in a pack"
        in left_out
    )


def test_french_can_be_chosen_from_the_folder_itself():
    french = import_export("dialogflow-cx", AGENT, language="fr")
    assert [(r.name, r.examples) for r in french.routes] == [
        ("default_welcome_intent", ["bonjour", "salut"])
    ]


def test_an_unknown_language_is_refused():
    with pytest.raises(PackError, match="the agent has no 'es' phrases; it has: en, fr"):
        import_export("dialogflow-cx", AGENT, language="es")


def test_the_import_round_trips_into_a_pack_that_routes(shop):
    router = round_trip(shop)
    assert router.route("where is the store in Lyons").route == "store_location"
    assert router.route("track my package please").route == "order_track"
    assert router.route("I want to send these shoes back").route == "order_return"
    # learned as out of scope: without the negative phrases this went to store_location
    assert router.pack.out_of_scope == shop.out_of_scope
    assert router.route("what is the weather in Lisbon").route is None
