"""Hostile input to the pack loader and the router: a decision or a PackError, nothing else."""

from __future__ import annotations

import json
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core import PackError, Router, load_pack
from tests.routing_core.conftest import minimal_doc


def load_or_pack_error(source: object) -> None:
    try:
        load_pack(source)  # type: ignore[arg-type]
    except PackError as exc:
        assert exc.errors
        assert all(isinstance(p, str) and isinstance(m, str) for p, m in exc.errors)


json_text = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
    st.builds(
        lambda doc, cut: json.dumps(doc)[:cut],
        st.just(minimal_doc()),
        st.integers(0, 400),
    ),
)


@settings(max_examples=300, deadline=None)
@given(json_text)
def test_any_text_loads_or_fails_with_a_pack_error(text):
    load_or_pack_error(text if text.lstrip()[:1] in ("{", "[") else "{" + text)


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=30,
)
fields = [
    "format",
    "format_version",
    "profile",
    "version",
    "routes",
    "rules",
    "default_route",
    "policy",
    "scorer",
    "triage",
    "tools",
    "checksum",
    "created_at",
]


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(fields), values, max_size=8), st.sampled_from(fields), values
)
def test_wrong_types_anywhere_end_in_a_pack_error(extra, field, value):
    doc = minimal_doc()
    doc.update(extra)
    doc[field] = value
    load_or_pack_error(doc)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"name": st.text(max_size=12), "examples": st.lists(st.text(max_size=40), max_size=4)},
            optional={"action": values, "keywords": values},
        ),
        min_size=1,
        max_size=6,
    )
)
def test_generated_routes_load_and_route_or_fail_cleanly(routes):
    try:
        pack = load_pack({"profile": {"slug": "f", "name": "F"}, "routes": routes})
    except PackError:
        return
    decision = Router(pack).route("hello there, where is my order?")
    assert decision.route is None or decision.route in pack.route_names


@pytest.mark.parametrize(
    "text",
    [
        '{"profile": ' + "[" * 5000 + "]" * 5000 + "}",
        '{"version": 1e999999}',
        '{"version": ' + "9" * 10_000 + "}",
        '{"a": -Infinity}',
        '{"routes": [' + ",".join(['{"name": "r"}'] * 3) + "}",
    ],
)
def test_pathological_json_is_a_pack_error(text):
    with pytest.raises(PackError):
        load_pack(text)


def test_deeply_nested_matches_in_a_dict_are_refused_or_loaded_without_crashing():
    match: dict = {"keywords": ["x"]}
    for _ in range(3000):
        match = {"all": [match]}
    load_or_pack_error(minimal_doc(rules=[{"route": "billing", "match": match}]))


def test_100_000_routes_are_refused_with_bounded_memory():
    doc = minimal_doc(routes=[{"name": f"r{i}", "examples": ["hi"]} for i in range(100_000)])
    tracemalloc.start()
    with pytest.raises(PackError) as caught:
        load_pack(json.dumps(doc))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert caught.value.errors == [
        ("routes", "List should have at most 2000 items after validation, not 100000")
    ]
    assert peak < 500 * 1024 * 1024


def test_a_10_mb_string_is_refused_by_its_field_alone():
    doc = minimal_doc()
    doc["routes"][0]["description"] = "x" * 10_000_000
    with pytest.raises(PackError) as caught:
        load_pack(doc)
    assert caught.value.errors == [
        ("routes[0].description", "String should have at most 8000 characters")
    ]


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text here")


anything = st.one_of(
    values,
    st.binary(max_size=50),
    st.just(10**5000),
    st.just(_Unprintable()),
    st.builds(object),
)


@pytest.mark.parametrize(
    ("message", "incumbent"),
    [
        (10**5000, None),
        ("hi", 10**5000),
        (_Unprintable(), None),
        ("where is my parcel", _Unprintable()),
        (_Unprintable(), _Unprintable()),
    ],
    ids=["huge-int", "huge-int-incumbent", "bad-str", "bad-str-incumbent", "both"],
)
def test_route_returns_a_decision_for_values_that_cannot_be_printed(message, incumbent):
    router = Router(load_pack(minimal_doc()))
    decision = router.route(message, incumbent=incumbent)
    assert decision.from_route is None
    assert decision.to_event()["verdict"] == decision.verdict


@settings(max_examples=150, deadline=None)
@given(anything, anything)
def test_route_never_raises_whatever_it_is_handed(message, incumbent):
    decision = Router(load_pack(minimal_doc())).route(message, incumbent=incumbent)
    assert decision.route is None or decision.route in ("billing", "shipping", "human")
