"""semantic-router configs (JSON and YAML) become routes; thresholds are reported, not guessed."""

from __future__ import annotations

import json

import pytest

from routing_core import PackError
from routing_core.importers import import_export
from tests.routing_core.importers.conftest import EXPORTS, notes, round_trip

JSON_LAYER = EXPORTS / "semantic_router" / "layer.json"
YAML_LAYER = EXPORTS / "semantic_router" / "layer.yaml"


def test_a_json_layer_becomes_routes_with_utterances_and_descriptions():
    result = import_export("semantic-router", JSON_LAYER)
    assert [(r.name, len(r.examples), r.description) for r in result.routes] == [
        ("politics", 4, ""),
        ("chitchat", 4, "small talk about the weather and how things are"),
        ("get_time", 3, "the current time somewhere"),
    ]
    left_out = notes(result, "left out")
    assert (
        "layer.json: routes[2].score_threshold: 0.5 is a cosine of openai / "
        "text-embedding-3-small: not the lexical scorer's probabilities, so not carried over "
        "(the embedding and hybrid scorers fit their own floor)" in left_out
    )
    for key in ("function_schemas", "llm", "metadata"):
        assert any(n.startswith(f"layer.json: routes[2].{key}: ") for n in left_out)
    assert "intent 'Empty Route': no examples: an empty intent" in left_out


def test_a_yaml_layer_imports_and_routes():
    result = import_export("semantic-router", YAML_LAYER)
    assert [r.name for r in result.routes] == ["billing", "shipping"]
    router = round_trip(result)
    assert router.route("I was charged twice this month").route == "billing"
    assert router.route("when will my parcel be delivered").route == "shipping"


def test_an_upload_is_read_by_its_file_name():
    data = YAML_LAYER.read_bytes()
    result = import_export("semantic-router", data, filename="router.yaml")
    assert [r.name for r in result.routes] == ["billing", "shipping"]


def test_a_bare_list_of_routes_is_accepted(tmp_path):
    path = tmp_path / "routes.json"
    path.write_text(json.dumps([{"name": "hello", "utterances": ["hi there"]}]))
    assert [r.name for r in import_export("semantic-router", path).routes] == ["hello"]


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (
            "{",
            "routes.json: not valid JSON: Expecting property name enclosed in double quotes at line 1",
        ),
        ('{"routes": 3}', "routes.json: expected a config with a 'routes' list"),
        (
            '{"routes": [{"utterances": ["x"]}]}',
            "$: no intent with examples was found in the export",
        ),
    ],
)
def test_broken_configs_are_refused_with_where_and_why(tmp_path, content, line):
    path = tmp_path / "routes.json"
    path.write_text(content)
    with pytest.raises(PackError) as caught:
        import_export("semantic-router", path)
    assert caught.value.lines() == [line]


def test_a_word_no_pack_could_score_is_left_out_not_a_broken_pack(tmp_path):
    blob = "Q" * 1500
    path = tmp_path / "routes.json"
    path.write_text(
        json.dumps([{"name": "a", "description": blob, "utterances": ["hi there friend", blob]}])
    )
    result = import_export("semantic-router", path)
    assert (result.routes[0].description, result.routes[0].examples) == ("", ["hi there friend"])
    assert (
        "routes.json: routes[0].utterances[1]: example with a word longer than 200 characters"
        in notes(result, "left out")
    )
    round_trip(result)
