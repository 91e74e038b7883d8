"""Authoring lint: each kind of finding on a profile built to have it."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from routing_core import load_pack
from routing_core.lint import _in_pack_order, background_left_out, lint_pack, starter_out_of_scope

FIVE = ["one example", "two example", "three example", "four example", "five example"]


def route(name, examples=None, **extra):
    return {
        "name": name,
        "examples": examples if examples is not None else [f"{name} {x}" for x in FIVE],
        **extra,
    }


def kinds(doc) -> dict[str, list[tuple[str, str | None, str]]]:
    found: dict[str, list] = {}
    for f in lint_pack(load_pack(doc)):
        found.setdefault(f.kind, []).append((f.severity, f.route, f.path))
    return found


def doc(*routes, **extra):
    return {"profile": {"slug": "l", "name": "Lint"}, "routes": list(routes), **extra}


# Out-of-scope examples enough for the profile to learn no background (routing_core.lint).
OWN_OUT_OF_SCOPE = [f"something unrelated number {i}" for i in range(20)]


def test_a_clean_profile_has_no_findings():
    assert kinds(doc(route("billing"), route("shipping"), out_of_scope=OWN_OUT_OF_SCOPE)) == {}


def test_a_profile_with_few_out_of_scope_examples_is_told_so():
    few = doc(route("billing"), route("shipping"), out_of_scope=OWN_OUT_OF_SCOPE[:3])
    assert kinds(few) == {"few-out-of-scope": [("info", None, "out_of_scope")]}
    (finding,) = lint_pack(load_pack(few))
    assert finding.message.startswith("3 out-of-scope examples: until there are 20")


def test_the_starter_out_of_scope_set_leaves_out_what_a_route_is_for():
    pack = load_pack(
        doc(
            route("weather", ["what's the weather like tomorrow", "will it rain today"]),
            route("billing"),
            out_of_scope=["tell me a joke"],
        )
    )
    starter = starter_out_of_scope(pack)
    assert len(starter) == 12 and "tell me a joke" not in starter
    assert not any("weather" in text for text in starter)


def test_the_same_example_under_two_routes_is_an_error_on_both():
    found = kinds(
        doc(
            route("billing", [*FIVE, "Where is my money?"]),
            route("refunds", [*FIVE[:4], "where is my  money"]),
        )
    )
    assert ("error", "billing", "routes[0].examples[5]") in found["duplicate-example"]
    assert ("error", "refunds", "routes[1].examples[4]") in found["duplicate-example"]


def test_near_duplicates_share_their_content_words():
    found = kinds(
        doc(
            route("billing", [*FIVE, "refund the charge"]),
            route("refunds", ["charge refunded please", *FIVE]),
        )
    )
    assert found["near-duplicate"] == [
        ("warning", "billing", "routes[0].examples[5]"),
        ("warning", "refunds", "routes[1].examples[0]"),
    ]


def test_an_example_another_routes_rule_shadows_is_reported():
    d = doc(
        route("billing", [*FIVE, "I want a human"]),
        route("human"),
        rules=[{"route": "human", "match": {"keywords": ["human"]}}],
    )
    assert kinds(d)["shadowed-example"] == [("warning", "billing", "routes[0].examples[5]")]


def test_a_rule_example_that_misses_its_own_rule_is_an_error():
    d = doc(
        route("billing"),
        route("human"),
        rules=[
            {
                "route": "human",
                "match": {"keywords": ["human"]},
                "examples": ["a person please", "human now"],
            }
        ],
    )
    assert kinds(d)["rule-example-misses"] == [("error", "human", "rules[0].examples[0]")]


def test_a_rule_example_caught_by_an_earlier_rule_is_a_warning():
    d = doc(
        route("billing"),
        route("human"),
        rules=[
            {"route": "billing", "match": {"keywords": ["invoice"]}},
            {
                "route": "human",
                "match": {"keywords": ["human"]},
                "examples": ["human about my invoice"],
            },
        ],
    )
    assert kinds(d)["rule-example-shadowed"] == [("warning", "human", "rules[1].examples[0]")]


def test_a_never_phrase_that_routes_there_is_an_error():
    d = doc(
        route("billing", never=["billing one example", "completely unrelated words"]),
        route("shipping"),
    )
    assert kinds(d)["never-routes-here"] == [("error", "billing", "routes[0].never[0]")]


def test_routes_with_fewer_than_five_examples_are_flagged():
    assert kinds(doc(route("billing", FIVE[:4]), route("shipping")))["few-examples"] == [
        ("warning", "billing", "routes[0].examples")
    ]


def test_findings_of_one_severity_come_in_the_packs_order_not_the_texts():
    """routes[10] after routes[2]: a twelve-route profile's findings read in its own order."""
    names = [f"route_{i}" for i in range(12)]
    found = kinds(doc(*(route(n, FIVE[:3]) for n in names)))["few-examples"]
    assert [name for _, name, _ in found] == names


@given(st.lists(st.lists(st.integers(0, 120), min_size=1, max_size=3), min_size=1, max_size=30))
def test_a_path_sorts_by_its_numbers_as_numbers(indices):
    paths = [
        "routes" + "".join(f"[{i}]" if k == 0 else f".examples[{i}]" for k, i in enumerate(ix))
        for ix in indices
    ]
    assert sorted(paths, key=_in_pack_order) == sorted(
        paths, key=lambda p: [int(n) for n in re.findall(r"\d+", p)]
    )


def test_keywords_shared_by_several_routes_are_flagged():
    d = doc(
        route("billing", keywords=["Refund"]), route("refunds", keywords=["refund", "money back"])
    )
    assert sorted(kinds(d)["shared-keyword"]) == [
        ("warning", "billing", "routes[0].keywords[0]"),
        ("warning", "refunds", "routes[1].keywords[0]"),
    ]


def test_a_stuck_default_route_is_flagged():
    d = doc(
        route("billing"),
        route("human", action={"kind": "stuck", "message": "bye"}),
        default_route="human",
    )
    assert kinds(d)["stuck-default"] == [("warning", "human", "default_route")]


@pytest.mark.parametrize("severity_first", ["error"])
def test_errors_come_first(severity_first):
    d = doc(route("billing", FIVE[:2]), route("refunds", ["one example", "x"]))
    findings = lint_pack(load_pack(d))
    assert findings[0].severity == severity_first


def _note(document) -> str:
    (finding,) = [f for f in lint_pack(load_pack(document)) if f.kind == "few-out-of-scope"]
    return finding.message


def test_what_lint_says_of_the_background_is_what_routing_learns():
    """Routes of two examples learn no background (routing_core.scorers._background), three
    do: lint must not say that a built-in set keeps off-topic messages out where it does not."""
    two = [route(n, [f"{n} {x}" for x in ("one", "two")]) for n in ("a", "b")]
    three = [route(n, [f"{n} {x}" for x in ("one", "two", "three")]) for n in ("a", "b")]
    thirty_one = [route(n, [f"{n} {i}" for i in range(31)]) for n in ("a", "b")]

    assert "not learned until the routes have 3 examples each" in _note(doc(*two))
    assert "until there are 20, routing also learns" in _note(doc(*three))
    assert "until there are 20, routing also learns" in _note(doc(route("a"), route("b")))
    assert "this many examples a route" in _note(doc(*thirty_one))
    for document in (doc(*two), doc(*three), doc(route("a"), route("b")), doc(*thirty_one)):
        learned = (
            background_left_out([len(r["examples"]) for r in document["routes"]], own=0) is None
        )
        assert ("routing also learns" in _note(document)) == learned
