"""The lexical scorer's semantic view: static vectors (`_static`), the discriminant on them
(`_semantic`), where `_model.train` joins it, and its pack field."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core import Pack, Router, dump_pack, load_pack
from routing_core._stored_arrays import DIMENSIONS, TABLE, pack_array
from routing_core.build import build_pack
from routing_core.pack import LexicalModel, LexicalScorerSettings
from routing_core.scorers import _encoding, _semantic, _static, lexical
from routing_core.scorers.lexical import LexicalScorer
from routing_core.scorers.stored import with_model, with_stale_model

# How the profile's own texts are learned, without the built-in background (conftest).
pytestmark = pytest.mark.usefixtures("without_background")

# Four routes whose examples say the same few things over and over, except at the texts the
# build holds out for calibration (every tenth text, the route's name first): there each
# route says it in a word used nowhere else, so the words alone cannot place those texts
# and only their meaning can.
TEMPLATES = ["please help with the {}", "a question about my {}", "something is up with the {}"]
COMMON = {
    "lights": ["light", "lights", "lighting"],
    "music": ["music", "song", "songs"],
    "weather": ["weather", "rain", "forecast"],
    "money": ["payment", "bill", "money"],
}
RARE = {
    "lights": ["lamp", "chandelier", "lantern", "bulb", "sconce"],
    "music": ["melody", "tune", "album", "playlist", "singer"],
    "weather": ["drizzle", "thunderstorm", "humidity", "blizzard", "sunshine"],
    "money": ["invoice", "refund", "wallet", "salary", "cash"],
}
PER_ROUTE = 50
# Words no text of the pack uses; each plainly belongs to one route.
UNSEEN = {
    "lights": ["flashlight", "torch", "candle"],
    "music": ["guitar", "karaoke", "piano"],
    "weather": ["hurricane", "snowfall", "rainfall"],
    "money": ["mortgage", "banknote", "salary"],
}


def _routes() -> list[dict[str, object]]:
    routes: list[dict[str, object]] = []
    position = 0
    for name in COMMON:
        position += 1  # the name is the route's first text
        examples, rare = [], iter(RARE[name])
        for i in range(PER_ROUTE):
            held = position % 10 == 9
            word = next(rare, COMMON[name][0]) if held else COMMON[name][i % 3]
            examples.append(TEMPLATES[i % len(TEMPLATES)].format(word))
            position += 1
        routes.append({"name": name, "examples": examples})
    return routes


@pytest.fixture(scope="module")
def built() -> Pack:
    return build_pack(_routes(), slug="meaning")


@pytest.fixture(scope="module")
def words_only() -> Pack:
    saved = _semantic.ENABLED
    _semantic.ENABLED = False
    try:
        lexical._LEARNED.clear()
        return build_pack(_routes(), slug="meaning")
    finally:
        _semantic.ENABLED = saved
        lexical._LEARNED.clear()


def _model_of(pack: Pack) -> LexicalModel:
    assert isinstance(pack.scorer, LexicalScorerSettings) and pack.scorer.model is not None
    return pack.scorer.model


def _unseen_messages() -> list[tuple[str, str]]:
    return [(f"a question about the {word}", name) for name, ws in UNSEEN.items() for word in ws]


def test_static_vectors_are_unit_rows_that_know_what_words_mean() -> None:
    table = _static.table()
    lamp, light, rain, empty = table.vectors(["turn off the lamp", "switch the lights off",
                                              "will it rain tomorrow", ""])  # fmt: skip
    assert np.linalg.norm(lamp) == pytest.approx(1.0, abs=1e-5) and not empty.any()
    assert float(lamp @ light) > float(lamp @ rain) + 0.3
    # One text at a time (a turn) and a batch (a build) give the same vector.
    one = table.vectors(["switch the lights off"])[0]
    assert np.allclose(one, light, atol=1e-6)


def test_the_table_cuts_words_into_bert_s_uncased_word_pieces() -> None:
    # The tokenizer is built from the table's pieces with BERT's settings: lower case,
    # accents stripped, punctuation and each CJK character apart, "##" continuations.
    tokenizer = _static.word_piece_tokenizer(
        ["[PAD]", "[UNK]", "una", "##ffa", "##ble", "cafe", "!"]
    )
    assert tokenizer.encode("unaffable", add_special_tokens=False).tokens == [
        "una",
        "##ffa",
        "##ble",
    ]
    assert tokenizer.encode("Café!", add_special_tokens=False).ids == [5, 6]
    assert tokenizer.encode("我", add_special_tokens=False).tokens == ["[UNK]"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        # Any character, lone surrogates included (a JSON message may carry one).
        st.text(st.one_of(st.characters(), st.sampled_from("\ud800\udbff\udc00")), max_size=300),
        max_size=4,
    )
)
def test_static_vectors_never_fail_and_are_unit_or_zero(texts: list[str]) -> None:
    vectors = _static.table().vectors(texts)
    assert vectors.shape == (len(texts), DIMENSIONS)
    norms = np.linalg.norm(vectors, axis=1)
    assert np.all((np.abs(norms - 1.0) < 1e-4) | (norms == 0.0))


def test_a_lone_surrogate_is_read_as_a_replacement_character(built: Pack) -> None:
    table = _static.table()
    assert np.allclose(table.vectors(["lamp \ud800"])[0], table.vectors(["lamp \ufffd"])[0])
    decision = Router(built).route("a question about the lamp \udfff")
    assert decision.route == "lights" and decision.tiers[0].error is None


def test_the_discriminant_separates_routes_by_their_vectors() -> None:
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(3, 16)).astype(np.float32)
    routes = np.repeat(np.arange(3), 40)
    vectors = centres[routes] + 0.3 * rng.normal(size=(120, 16)).astype(np.float32)
    matrix, bias = _semantic.fit(vectors, routes, 4, np.ones(120, bool))  # route 3: no text
    scores = vectors @ matrix + bias
    assert (scores[:, :3].argmax(axis=1) == routes).mean() > 0.95
    # A route with no text scores as the average route: never the best, never the worst.
    assert np.all(scores[:, 3] < scores.max(axis=1)) and np.all(scores[:, 3] > scores.min(axis=1))


def test_a_view_too_large_for_the_pack_s_float16_is_not_stored() -> None:
    matrix, bias = np.ones((4, 3), np.float32), np.zeros(3, np.float32)
    assert _semantic.Semantic(matrix, bias, 1.0).storable()
    assert not _semantic.Semantic(matrix * 1e5, bias, 1.0).storable()
    assert not _semantic.Semantic(matrix, bias + np.inf, 1.0).storable()


def test_a_pack_whose_words_miss_held_out_texts_learns_the_view(built: Pack) -> None:
    view = _model_of(built).semantic
    assert view is not None and view.table == TABLE and view.weight > 0.0
    without_later_fields = _model_of(built).model_copy(
        update={"fitted_on": None, "none_logit": None}
    )
    older = built.model_copy(update={"scorer": LexicalScorerSettings(model=without_later_fields)})
    document = json.loads(dump_pack(older))
    assert document["format_minor"] == 6
    assert Router(built).scorer.info.details["semantic_weight"] == view.weight


def test_the_view_routes_words_no_text_used(built: Pack, words_only: Pack) -> None:
    assert _model_of(words_only).semantic is None
    with_view, without = Router(built), Router(words_only)
    messages = _unseen_messages()
    right = sum(with_view.route(text).route == name for text, name in messages)
    before = sum(without.route(text).route == name for text, name in messages)
    assert right >= len(messages) - 2 and right >= before + 4
    # The words the examples use still decide as they did.
    for route in _routes():
        for text in list(route["examples"])[:5]:  # type: ignore[call-overload]
            assert with_view.route(text).route == route["name"]


def test_a_pack_the_words_already_place_learns_no_view() -> None:
    from tests.routing_core.test_out_of_scope import ROUTES  # templates x each route's words

    assert _model_of(build_pack(ROUTES, slug="topics")).semantic is None


def test_the_view_round_trips_and_scores_the_same_after_loading(built: Pack) -> None:
    loaded = load_pack(dump_pack(built))
    assert loaded == built
    first, second = Router(built).scorer, Router(loaded).scorer
    assert isinstance(first, lexical.LexicalScorer) and isinstance(second, lexical.LexicalScorer)
    for text, _ in _unseen_messages():
        assert first.logits(text) == pytest.approx(second.logits(text), abs=1e-6)


def test_the_view_adds_its_weighted_scores_to_the_logits(built: Pack) -> None:
    view = _encoding.decode_semantic(_model_of(built))
    assert view is not None
    plain = built.model_copy(
        update={
            "scorer": LexicalScorerSettings(
                model=_model_of(built).model_copy(update={"semantic": None})
            )
        }
    )
    with_view, without = Router(built).scorer, Router(plain).scorer
    assert isinstance(with_view, lexical.LexicalScorer)
    assert isinstance(without, lexical.LexicalScorer)
    text = "a question about the guitar"
    a, b = with_view.logits(text), without.logits(text)
    assert a is not None and b is not None
    expected = view.weight * (_static.table().vectors([text])[0] @ view.matrix + view.bias)
    assert np.allclose(a - b, expected, atol=1e-3)


@pytest.mark.parametrize(
    ("update", "reason"),
    [
        ({"table": "another-table"}, "model.semantic.table 'another-table'"),
        ({"bias": pack_array(np.zeros(3, "<f2"))}, "model.semantic.bias has 3 values"),
        ({"matrix": pack_array(np.zeros(10, "<f2"))}, "model.semantic.matrix has 10 values"),
        ({"matrix": "not base64!"}, "model.semantic arrays must be base64"),
    ],
)
def test_a_malformed_view_is_refused_with_the_field_and_the_reason(
    built: Pack, update: dict[str, str], reason: str
) -> None:
    document = json.loads(dump_pack(built))
    document["scorer"]["model"]["semantic"].update(update)
    with pytest.raises(ValueError, match=reason):
        load_pack(json.dumps(document))


def test_a_warm_start_learns_the_view_again_at_its_weight(built: Pack) -> None:
    edited = built.model_copy(
        update={
            "routes": (
                built.routes[0].model_copy(
                    update={"examples": (*built.routes[0].examples, "please help with the lamp")}
                ),
                *built.routes[1:],
            )
        }
    )
    lexical._LEARNED.clear()
    warm = with_model(edited, previous=built)
    before, after = _model_of(built).semantic, _model_of(warm).semantic
    assert before is not None and after is not None and after.weight == before.weight
    assert after.matrix != before.matrix  # learned again, from the edited texts
    router = Router(warm)
    assert sum(router.route(t).route == n for t, n in _unseen_messages()) >= 10


def _without_model(pack: Pack) -> Pack:
    return pack.model_copy(update={"scorer": LexicalScorerSettings()})


def test_a_profile_that_grows_past_calibrating_learns_afresh_once(built: Pack) -> None:
    """Edit after edit a profile warm-starts from its last model; one that was too small to
    calibrate must not hand its temperature and floor (fitted by cross-validation on a few
    texts) to the grown one."""
    small = build_pack(
        [{**r, "examples": list(r["examples"])[:30]} for r in _routes()],  # type: ignore[call-overload]
        slug="meaning",
    )
    assert not _model_of(small).calibrated
    lexical._LEARNED.clear()  # learned afresh below, not taken from this process's cache
    grown = _model_of(with_model(_without_model(built), previous=small))
    afresh = _model_of(built)
    assert grown.calibrated and grown.temperature == afresh.temperature != 1.0
    assert (grown.floor, grown.margin) == (afresh.floor, afresh.margin)
    assert grown.semantic is not None and grown.semantic == afresh.semantic
    assert grown.bias == afresh.bias  # the second model too


def test_a_model_learned_before_the_view_existed_gains_it_on_the_next_edit(
    built: Pack, words_only: Pack
) -> None:
    # As an older routing_core wrote it: no view, and no record of the fit (`fitted_on`).
    old = _model_of(words_only).model_copy(update={"fitted_on": None})
    written_before = words_only.model_copy(update={"scorer": LexicalScorerSettings(model=old)})
    assert old.calibrated and old.semantic is None
    routes = _routes()
    routes[-1]["examples"] = [*routes[-1]["examples"], "a question about my bill"]  # type: ignore[misc]
    draft = load_pack({"profile": built.profile.model_dump(), "routes": routes})
    lexical._LEARNED.clear()
    edited = _model_of(with_model(draft, previous=written_before))
    lexical._LEARNED.clear()
    afresh = _model_of(with_model(draft))
    assert edited.semantic is not None and edited == afresh


def _grown(built: Pack, extra: int) -> Pack:
    """The view's pack with `extra` more examples on its last route (the texts before them,
    the held-out ones among them, unchanged), without a model."""
    routes = _routes()
    more = [f"a question about my money order {i}" for i in range(extra)]
    routes[-1]["examples"] = [*routes[-1]["examples"], *more]  # type: ignore[misc]
    return load_pack({"profile": built.profile.model_dump(), "routes": routes})


def test_a_warm_start_keeps_what_was_fitted_and_on_how_many_texts(built: Pack) -> None:
    fitted = _model_of(built)
    assert fitted.fitted_on == sum(1 + len(r["examples"]) for r in _routes())  # type: ignore[arg-type]
    lexical._LEARNED.clear()
    warm = _model_of(with_model(_grown(built, 50), previous=built))
    assert warm.fitted_on == fitted.fitted_on
    assert (warm.temperature, warm.floor, warm.margin) == (
        fitted.temperature,
        fitted.floor,
        fitted.margin,
    )
    assert warm.none_logit == fitted.none_logit is not None  # kept, as the floor is
    assert json.loads(dump_pack(built))["format_minor"] == 12  # none_logit's minor
    assert load_pack(dump_pack(built)) == built


def test_texts_grown_by_half_since_the_fit_are_learned_afresh(built: Pack) -> None:
    """Warm starts in steps under half each still add up: the fit is judged against the
    model that made it, not the last one."""
    n = _model_of(built).fitted_on
    assert n is not None
    step = with_model(_grown(built, n // 3), previous=built)  # +33%: warm
    assert _model_of(step).fitted_on == n
    lexical._LEARNED.clear()
    grown = _grown(built, n // 2 + 1)  # +50% of the fitted texts in all: afresh
    chained = _model_of(with_model(grown, previous=step))
    lexical._LEARNED.clear()
    assert chained == _model_of(with_model(grown))
    assert chained.fitted_on == n + n // 2 + 1


def test_a_model_written_before_fitted_on_is_judged_by_its_own_texts(built: Pack) -> None:
    older = _model_of(built).model_copy(update={"fitted_on": None})
    previous = built.model_copy(update={"scorer": LexicalScorerSettings(model=older)})
    n = sum(1 + len(r["examples"]) for r in _routes())  # type: ignore[arg-type]
    lexical._LEARNED.clear()
    assert _model_of(with_model(_grown(built, 50), previous=previous)).fitted_on == n
    lexical._LEARNED.clear()
    grown = _grown(built, n // 2 + 1)
    assert _model_of(with_model(grown, previous=previous)).fitted_on == n + n // 2 + 1


def test_a_stale_model_answers_by_the_words_alone(built: Pack) -> None:
    edited = built.model_copy(update={"routes": built.routes[:-1]})
    stale = load_pack(dump_pack(with_stale_model(edited, built)))
    assert _model_of(stale).semantic is None
    router = Router(stale)
    assert router.scorer.info.details["stale"] is True
    assert router.scorer.info.details["semantic_weight"] is None
    assert router.route("please help with the light").route == "lights"


def test_a_win_the_meaning_decided_is_explained_by_the_route_s_nearest_example(
    built: Pack, words_only: Pack
) -> None:
    router, examples = Router(built), {r["name"]: r["examples"] for r in _routes()}
    explained = 0
    for text, name in _unseen_messages():
        decision = router.route(text)
        if decision.route != name or decision.evidence is None:
            continue
        meaning = [t for t in decision.evidence.terms if t.kind == "example"]
        assert len(meaning) <= 1 and all(t.weight > 0 for t in meaning)
        if meaning:
            assert meaning[0].term in examples[name]  # type: ignore[operator]
            event_terms = decision.to_event()["evidence"]["terms"]
            assert {"term": meaning[0].term, "kind": "example"}.items() <= next(
                t for t in event_terms if t["kind"] == "example"
            ).items()
            explained += 1
    # The unseen word is in no example: most such wins are the meaning's, and say so.
    assert explained >= len(_unseen_messages()) // 2
    # Without the view the same win is explained by words alone.
    plain = Router(words_only).route("a question about the guitar")
    assert plain.evidence is not None and plain.evidence.terms
    assert all(t.kind == "word" for t in plain.evidence.terms)


def test_explaining_keeps_few_routes_examples_and_explains_the_same(
    built: Pack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The examples' vectors are kept for EXPLAINED_ROUTES routes at most (here 2), and a
    route explained after the cache started afresh is explained as by a new router."""
    monkeypatch.setattr(lexical, "EXPLAINED_ROUTES", 2)
    router = Router(built)
    scorer = router.scorer
    assert isinstance(scorer, LexicalScorer)
    explained = [
        (text, [(t.term, t.weight) for t in router.route(text).evidence.terms])  # type: ignore[union-attr]
        for text, _ in _unseen_messages() * 2
    ]
    assert 0 < len(scorer._explained) <= 2
    for text, terms in explained:
        fresh = Router(built).route(text).evidence
        assert fresh is not None and [(t.term, t.weight) for t in fresh.terms] == terms


def test_the_cli_names_the_example_a_meaning_win_is_close_to(built: Pack) -> None:
    from routing_core.cli import render_decision

    decision = Router(built).route("a question about the flashlight")
    assert decision.route == "lights" and decision.evidence is not None
    (example,) = [t for t in decision.evidence.terms if t.kind == "example"]
    lines = render_decision(decision).splitlines()
    assert f"  close in meaning to the example “{example.term}” {example.weight:.2f}" in lines
    assert not [line for line in lines if line.startswith("  terms:") and example.term in line]
