"""Any pack within the documented limits builds a Router and routes.

Specified in docs/pack-format.md, Limits.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from routing_core import PackError, Router, load_pack
from routing_core.limits import (
    MAX_DESCRIPTION,
    MAX_ITEMS,
    MAX_MODEL_CELLS,
    MAX_MODEL_TERM_CHARS,
    MAX_PACK_BYTES,
    MAX_PACK_CHARS,
    MAX_PACK_REGEX_CHARS,
    MAX_PACK_TEXTS,
    MAX_ROUTES,
    MAX_TEXT,
    max_pack_bytes,
    pack_totals,
    total_errors,
)
from routing_core.pack import LexicalModel
from routing_core.scorers._encoding import within_budget
from routing_core.scorers._terms import MAX_WORD_CHARS, message_words
from tests.routing_core.conftest import minimal_doc

letters = st.characters(categories=("L", "Nd"))
# A "word" here is one run of letters and digits, as long as a field allows.
long_word = st.one_of(
    st.text(letters, min_size=1, max_size=40),
    st.builds(lambda c, n: c * n, letters, st.integers(1, MAX_TEXT)),
)
description = st.one_of(
    st.text(max_size=200), st.builds(lambda c, n: c * n, letters, st.integers(1, MAX_DESCRIPTION))
)
text = st.one_of(long_word, st.text(max_size=200), st.lists(long_word, max_size=3).map(" ".join))


def test_a_route_text_of_one_word_at_the_field_limit_builds_and_routes():
    doc = minimal_doc()
    doc["routes"][0]["examples"] = ["a" * MAX_TEXT, "b" * 999 + " " + "c" * 1000]
    doc["routes"][1]["description"] = "d" * MAX_DESCRIPTION
    router = Router(load_pack(doc))
    assert router.route("a" * MAX_TEXT).route == "billing"


def test_two_capped_words_make_a_bigram_within_the_model_term_limit():
    assert 2 * MAX_WORD_CHARS + 1 <= MAX_TEXT


def test_normal_words_are_not_cut():
    assert message_words("Where is my parcel? " * 100) == ["where", "is", "my", "parcel"] * 100


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "description": st.text(letters, max_size=MAX_DESCRIPTION),
                "examples": st.lists(text, max_size=3),
            }
        ),
        min_size=1,
        max_size=4,
    ),
    text,
)
def test_any_pack_within_the_limits_builds_and_routes(routes, message):
    doc = minimal_doc(routes=[{"name": f"r{i}", **r} for i, r in enumerate(routes)])
    try:
        pack = load_pack(doc)
    except PackError:
        return  # e.g. a blank example: refused with a reason, which is fine
    decision = Router(pack).route(message)
    assert decision.route is None or decision.route in pack.route_names


# Per-pack totals (docs/pack-format.md, Limits): what the per-item limits multiply to.


def _routes_with(texts: int, per_route: int = MAX_ITEMS, field: str = "examples") -> list[dict]:
    routes = []
    for i in range(-(-texts // per_route)):
        n = min(per_route, texts - i * per_route)
        routes.append({"name": f"r{i}", field: [f"t{i} {j}" for j in range(n)]})
    return routes


def _problems(doc: dict) -> list[tuple[str, str]]:
    try:
        load_pack(doc)
    except PackError as exc:
        return list(exc.errors)
    return []


@pytest.mark.parametrize("field", ["examples", "keywords", "never"])
def test_a_pack_at_the_text_total_is_valid_and_one_more_is_refused_naming_the_limit(field):
    at_limit = minimal_doc(routes=_routes_with(MAX_PACK_TEXTS, field=field))
    assert _problems(at_limit) == []

    over = minimal_doc(routes=_routes_with(MAX_PACK_TEXTS + 1, field=field))
    [(path, message)] = _problems(over)
    assert path == f"routes[{MAX_PACK_TEXTS // MAX_ITEMS}].{field}"
    assert f"at most {MAX_PACK_TEXTS:,}" in message and f"{MAX_PACK_TEXTS + 1:,} texts" in message


def test_out_of_scope_rule_and_tool_texts_count_toward_the_total():
    doc = minimal_doc(routes=_routes_with(MAX_PACK_TEXTS - 3))
    doc["out_of_scope"] = ["weather"]
    doc["rules"] = [{"route": "r0", "match": {"keywords": ["agent"]}, "examples": ["a human"]}]
    doc["tools"] = [{"name": "refund", "trigger_keywords": ["refund", "money back"]}]

    [(path, message)] = _problems(doc)

    assert path == "tools[0].trigger_keywords" and f"{MAX_PACK_TEXTS:,}" in message


def test_a_pack_over_the_character_total_is_refused_where_it_goes_past():
    per_route = MAX_PACK_CHARS // MAX_DESCRIPTION
    routes = [{"name": f"r{i}", "description": "d" * MAX_DESCRIPTION} for i in range(per_route)]
    assert _problems(minimal_doc(routes=routes)) == []

    rest = MAX_PACK_CHARS - per_route * MAX_DESCRIPTION
    routes.append({"name": "rest", "description": "d" * rest})
    assert _problems(minimal_doc(routes=routes)) == []

    routes.append({"name": "one_more", "description": "d"})
    [(path, message)] = _problems(minimal_doc(routes=routes))

    assert path == f"routes[{per_route + 1}].description" and f"{MAX_PACK_CHARS:,}" in message


def test_an_oversized_pack_is_refused_before_its_regexes_are_compiled():
    # Invalid patterns: were they compiled first, each would be reported too (and the check
    # would cost what compiling and checking every one costs).
    n = MAX_PACK_REGEX_CHARS // MAX_TEXT + 1
    rule = {"route": "billing", "match": {"regex": "(" * MAX_TEXT}}
    doc = minimal_doc()
    doc["rules"] = [rule] * n

    [(path, message)] = _problems(doc)

    assert path == f"rules[{n - 1}].match.regex"
    assert f"{MAX_PACK_REGEX_CHARS:,}" in message


def test_regexes_nested_in_all_and_the_question_pattern_count_toward_the_regex_total():
    n = MAX_PACK_REGEX_CHARS // MAX_TEXT
    nested = {"route": "billing", "match": {"all": [{"regex": "a" * MAX_TEXT}]}}
    doc = minimal_doc()
    doc["rules"] = [nested] * n
    assert _problems(doc) == []

    doc["triage"] = {"question_pattern": r"\?"}
    [(path, _)] = _problems(doc)

    assert path == "triage.question_pattern"


def test_the_largest_pack_within_the_limits_fits_under_the_fetchers_cap():
    # Computed from the constants (routing_core.limits.max_pack_bytes says how): a pack an
    # agent cannot pull must not be one the studio can publish.
    assert max_pack_bytes() <= MAX_PACK_BYTES


def test_a_model_of_the_most_routes_and_an_out_of_scope_column_is_valid():
    # A pack of MAX_ROUTES routes learns one more column (its out-of-scope examples or the
    # built-in background): its stored model used to be refused, so it could not be built.
    model = built_model_document()
    model.update(routes=MAX_ROUTES + 1, bias=None, semantic=None)

    assert LexicalModel.model_validate(model).routes == MAX_ROUTES + 1


def built_model_document() -> dict:
    from routing_core.scorers.stored import with_model

    pack = with_model(load_pack(minimal_doc()))
    model = pack.scorer.model  # type: ignore[union-attr]
    assert model is not None
    return model.model_dump()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=40,
)
pack_keys = st.sampled_from(
    [
        "routes",
        "rules",
        "tools",
        "out_of_scope",
        "profile",
        "triage",
        "examples",
        "keywords",
        "match",
        "all",
        "regex",
        "description",
        "never",
        "action",
        "message",
        "trigger_keywords",
    ]
)
pack_like = st.recursive(
    st.none() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(pack_keys, inner, max_size=5),
    max_leaves=60,
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(json_values, pack_like))
def test_the_totals_check_reads_any_document_without_failing(document):
    # It runs on raw input before the schema: whatever the shape, it answers a list.
    problems = total_errors(document)
    assert isinstance(problems, list) and all(isinstance(p, str) for p, _ in problems)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.text(max_size=5), max_size=30), min_size=1, max_size=20))
def test_the_totals_check_counts_every_text_once(lists):
    doc = minimal_doc(routes=[{"name": f"r{i}", "examples": e} for i, e in enumerate(lists)])
    texts, chars, regex_chars = pack_totals(doc)
    assert texts == sum(map(len, lists))
    assert chars == sum(len(t) for e in lists for t in e) + sum(
        len(r.get("description", "")) for r in doc["routes"]
    )
    assert regex_chars == 0


def test_a_model_past_the_cell_limit_keeps_its_strongest_cells_in_order():
    rng = np.random.default_rng(3)
    n = MAX_MODEL_CELLS + 1_000
    cells = np.arange(n, dtype=np.int64) * 3
    values = rng.normal(size=n).astype(np.float32)

    kept_cells, kept_values, terms = within_budget(cells, values, [1] * (3 * n // 100 + 1), 100)

    assert len(kept_cells) == MAX_MODEL_CELLS and terms is None
    assert np.all(np.diff(kept_cells) > 0)
    weakest_kept = np.abs(kept_values).min()
    dropped = np.setdiff1d(cells, kept_cells)
    assert np.abs(values[dropped // 3]).max() <= weakest_kept


def test_a_model_past_the_term_limits_drops_terms_without_cells_first_and_renumbers():
    width = 4
    n_terms = MAX_MODEL_TERM_CHARS // 8 + 10  # 8 characters a term: past the limit
    sizes = [8] * n_terms
    # Cells on every other term's route 1, strongest on the last terms.
    with_cells = np.arange(0, n_terms, 2, dtype=np.int64)
    cells = with_cells * width + 1
    values = np.linspace(0.3, 3.0, len(cells)).astype(np.float32)

    kept_cells, kept_values, kept = within_budget(cells, values, sizes, width)

    assert kept is not None and int(kept.sum()) * 8 <= MAX_MODEL_TERM_CHARS
    assert kept[with_cells].all()  # every term with a cell fits: only empty ones went
    assert np.all(kept_values == values)
    renumbered = np.cumsum(kept) - 1
    assert np.array_equal(kept_cells, renumbered[with_cells] * width + 1)
