"""The decision event's published JSON Schema (`routing_core.schema.decision_schema`) against
the events the engine writes: every conformance pack's cases, rules, menus and conversations
included. Validation proves each documented field has its documented type; the walk proves
the schema names every key an event carries, so neither can drift from the other."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from routing_core import Router, load_pack
from routing_core.schema import decision_schema

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance"
SUITES = sorted(p.stem for p in (CONFORMANCE / "cases").glob("*.json"))


def _events(suite: str) -> list[dict[str, Any]]:
    router = Router(load_pack(json.loads((CONFORMANCE / "packs" / f"{suite}.json").read_text())))
    cases = json.loads((CONFORMANCE / "cases" / f"{suite}.json").read_text())["cases"]
    return [router.route(case["message"], incumbent=case["incumbent"]).to_event() for case in cases]


def undocumented(value: Any, schema: dict[str, Any], at: str = "$") -> list[str]:
    """Where `value` holds a key its schema does not name (anyOf branches tried in turn)."""
    if "anyOf" in schema:
        found = [undocumented(value, branch, at) for branch in schema["anyOf"]]
        return min(found, key=len)
    if isinstance(value, dict) and "properties" in schema:
        named = schema["properties"]
        missing = [f"{at}.{key}" for key in value if key not in named]
        return missing + [
            spot
            for key, item in value.items()
            if key in named
            for spot in undocumented(item, named[key], f"{at}.{key}")
        ]
    if isinstance(value, list) and "items" in schema:
        return [spot for item in value for spot in undocumented(item, schema["items"], at + "[]")]
    return []


@pytest.mark.parametrize("suite", SUITES)
def test_every_event_of_the_conformance_suite_matches_the_schema(suite: str) -> None:
    schema = decision_schema()
    validator = jsonschema_rs.validator_for(schema)
    events = _events(suite)
    assert events
    for event in events:
        errors = [error.message for error in validator.iter_errors(event)]
        assert not errors, (suite, errors)
        assert not undocumented(event, schema), suite


def test_the_checks_fail_on_a_changed_or_an_unnamed_field() -> None:
    """A verdict the schema does not list is refused, and a key it does not name is found."""
    schema = decision_schema()
    validator = jsonschema_rs.validator_for(schema)
    event = _events("support")[0]
    changed = copy.deepcopy(event)
    changed["verdict"] = "maybe"
    assert not validator.is_valid(changed)
    grown = copy.deepcopy(event)
    grown["tools"]["surprise"] = 1
    assert validator.is_valid(grown)  # an added key is allowed to readers ...
    assert undocumented(grown, schema) == ["$.tools.surprise"]  # ... and caught here
