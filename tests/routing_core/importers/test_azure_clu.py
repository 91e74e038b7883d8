"""Azure CLU project files become routes; the None intent is out of scope."""

from __future__ import annotations

import json

import pytest

from routing_core import PackError
from routing_core.importers import import_export
from tests.routing_core.importers.conftest import EXPORTS, notes, round_trip

PROJECT = EXPORTS / "azure_clu.json"


@pytest.fixture(scope="module")
def travel():
    return import_export("azure-clu", PROJECT)


def test_intents_become_routes_with_their_training_utterances(travel):
    assert (travel.name, travel.language) == ("TravelDesk", "en-us")
    assert [(r.name, len(r.examples)) for r in travel.routes] == [
        ("book_flight", 3),
        ("check_weather", 2),
        ("cancel_trip", 2),
    ]
    # an utterance without a language is in the project's language
    assert "fly me to the City of Light" in travel.routes[0].examples


def test_the_none_intent_is_out_of_scope_and_test_utterances_are_not_examples(travel):
    assert travel.out_of_scope == ("sing me a song", "what is the meaning of life")
    assert "intent 'None': its utterances: 2 phrase(s) came over as out-of-scope examples" in (
        notes(travel, "changed")
    )
    left_out = notes(travel, "left out")
    assert (
        "azure_clu.json: assets.utterances: 1 test-set utterance(s) not used as examples"
        in left_out
    )
    assert "language 'fr-fr': 1 utterance(s) not imported (importing 'en-us')" in left_out
    assert (
        "azure_clu.json: assets.entities[0].prebuilts: prebuilt components have no equivalent"
        in left_out
    )


def test_a_list_entity_two_intents_mark_is_no_keyword_and_a_regex_entity_of_one_a_rule(travel):
    # a city is marked in flights and in weather alike: it tells neither apart
    assert [r.keywords for r in travel.routes] == [[], [], []]
    assert any(
        n.startswith("lexicon 'City': 4 word(s) kept aside: several intents mark this entity")
        for n in notes(travel, "kept aside")
    )
    assert travel.rules == ({"route": "cancel_trip", "match": {"regex": r"\b[A-Z]{2}\d{4}\b"}},)


def test_the_import_round_trips_into_a_pack_that_routes(travel):
    router = round_trip(travel)
    assert router.route("I need a flight to Paris").route == "book_flight"
    assert router.route("is it going to rain tomorrow").route == "check_weather"
    decision = router.route("please drop booking XY9876")
    assert (decision.route, decision.by) == ("cancel_trip", "rule")
    # the None intent's utterances are learned: without them these went to routes
    assert router.pack.out_of_scope == travel.out_of_scope
    assert [router.route(t).route for t in travel.out_of_scope] == [None, None]


def test_french_can_be_chosen(travel):
    french = import_export("azure-clu", PROJECT, language="fr-FR")
    assert [(r.name, r.examples) for r in french.routes] == [
        ("book_flight", ["réserve un vol pour Paris"])
    ]


def test_a_project_of_another_kind_is_refused(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(
        json.dumps({"metadata": {"projectKind": "CustomSingleLabelClassification"}, "assets": {}})
    )
    with pytest.raises(PackError, match="only Conversation projects hold intents"):
        import_export("azure-clu", path)
