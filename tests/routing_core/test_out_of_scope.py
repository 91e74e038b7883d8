"""The pack's defaults fitted at build: the out-of-scope floor, out-of-scope examples, the margin."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from routing_core import Pack, Router, dump_pack, load_pack
from routing_core.build import build_pack
from routing_core.pack import LexicalScorerSettings
from routing_core.policy import Policy
from routing_core.scorers import _model, calibration, route_texts
from routing_core.scorers.lexical import OUT_OF_SCOPE, LexicalScorer, learning_texts
from routing_core.scorers.stored import fingerprint
from tests.routing_core.conftest import TEMPLATES, TOPICS
from tests.routing_core.test_cli import cli

# How the profile's own texts are learned, without the built-in background (conftest).
pytestmark = pytest.mark.usefixtures("without_background")

ROUTES = [
    {"name": name, "examples": [t.format(w) for t in TEMPLATES for w in words]}
    for name, words in TOPICS.items()
]
# Small talk and trivia no route is for, as a profile's out-of-scope examples would hold.
OUT_OF_SCOPE_EXAMPLES = [
    f"{opening} {topic}"
    for opening in ("tell me a joke about", "what is the capital of", "sing a song about")
    for topic in ("france", "cats", "the moon", "football", "pirates", "music", "dogs")
]


@pytest.fixture(scope="module")
def plain() -> Pack:
    return build_pack(ROUTES, slug="topics")


@pytest.fixture(scope="module")
def with_examples() -> Pack:
    return build_pack(ROUTES, slug="topics", out_of_scope=OUT_OF_SCOPE_EXAMPLES)


def _model_of(pack: Pack) -> LexicalScorerSettings:
    assert isinstance(pack.scorer, LexicalScorerSettings) and pack.scorer.model is not None
    return pack.scorer


def test_fit_floor_is_the_share_of_held_out_texts_it_refuses() -> None:
    # 100 in-scope texts whose top probability runs evenly from 0.35 to 0.69 (three routes).
    top = np.linspace(0.35, 0.69, 100)
    rest = (1.0 - top) / 2
    logits = np.log(np.stack([top, rest, rest], axis=1)).astype(np.float32)
    labels = np.zeros(100, np.int64)
    floor = _model.fit_floor(logits, labels, 3)
    assert floor == pytest.approx(np.quantile(top, calibration.FLOOR_REFUSED), abs=1e-3)
    assert (top < floor).mean() == pytest.approx(calibration.FLOOR_REFUSED, abs=0.01)


def test_fit_floor_never_rises_above_the_cap() -> None:
    sure = np.log(np.array([[0.999, 0.001]] * 50)).astype(np.float32)
    assert _model.fit_floor(sure, np.zeros(50, np.int64), 2) == calibration.FLOOR_CAP


def test_fit_floor_leaves_out_the_out_of_scope_class() -> None:
    # Columns: two routes, then the out-of-scope class. Its texts do not set the floor, and
    # its probability mass counts against the routes' (a text it takes scores low on both).
    logits = np.log(np.array([[0.5, 0.1, 0.4]] * 30 + [[0.01, 0.01, 0.98]] * 30))
    labels = np.array([0] * 30 + [2] * 30)
    assert _model.fit_floor(logits.astype(np.float32), labels, 2) == pytest.approx(0.5)
    assert _model.fit_floor(logits[30:].astype(np.float32), labels[30:], 2) is None


def test_a_built_pack_stores_the_fitted_floor_and_routes_with_it(plain: Pack) -> None:
    stored = _model_of(plain).model
    assert stored is not None and stored.calibrated and stored.floor is not None
    assert 0.0 < stored.floor <= calibration.FLOOR_CAP
    router = Router(load_pack(dump_pack(plain)))
    assert router.scorer.info.floor == stored.floor
    assert router.scorer.info.details["fitted_floor"] == stored.floor
    decision = router.route("my parcel has not arrived")
    assert decision.route == "orders"
    assert decision.policy.floor is None and decision.floor == stored.floor  # recorded


def test_a_policy_floor_overrides_the_fitted_one(plain: Pack) -> None:
    router = Router(plain)
    message = "my parcel has not arrived"  # orders, short of certain (1 - no route's share)
    decision = router.route(message)
    assert decision.route == "orders" and decision.ranked[0].score < 1.0
    floor = round(1.0 - (1.0 - decision.ranked[0].score) / 2, 9)  # above its score
    strict = router.route(message, policy=router.policy_with(floor=floor))
    assert strict.verdict == "unmatched" and strict.floor == floor


def test_a_pack_without_a_fitted_floor_keeps_floor_zero(plain: Pack) -> None:
    stored = _model_of(plain).model
    assert stored is not None
    older = plain.model_copy(
        update={"scorer": LexicalScorerSettings(model=stored.model_copy(update={"floor": None}))}
    )
    assert Router(older).scorer.info.floor == 0.0
    document = load_pack(dump_pack(older)).model_dump(mode="json")
    del document["scorer"]["model"]["floor"], document["out_of_scope"]
    assert "floor" not in document["scorer"]["model"]
    assert Router(load_pack(document)).scorer.info.floor == 0.0


def test_a_pack_too_small_to_calibrate_has_no_fitted_floor() -> None:
    tiny = build_pack([{"name": "a", "examples": ["hello a"]}, {"name": "b", "examples": ["b"]}])
    stored = _model_of(tiny).model
    assert stored is not None and stored.floor is None
    assert Router(tiny).scorer.info.floor == 0.0


def test_out_of_scope_examples_pull_messages_like_them_below_the_floor(
    plain: Pack, with_examples: Pack
) -> None:
    message = "sing a song about the storm"
    without, learned = Router(plain), Router(with_examples)
    assert max(r.score for r in learned.route(message).ranked) < max(
        r.score for r in without.route(message).ranked
    )
    assert learned.route("what is the capital of the bill").verdict == "unmatched"
    assert without.route("what is the capital of the bill").verdict != "unmatched"


def test_the_out_of_scope_class_is_never_a_route(with_examples: Pack) -> None:
    router = Router(with_examples)
    decision = router.route("sing a song about dogs")
    assert {r.route for r in decision.ranked} == set(TOPICS)
    assert OUT_OF_SCOPE not in {r.route for r in decision.ranked}
    assert sum(r.score for r in decision.ranked) < 0.5  # the class took most of the mass
    assert router.scorer.info.details["out_of_scope_examples"] is True
    assert router.route("where is my parcel").route == "orders"


def test_out_of_scope_examples_round_trip_and_the_stored_model_is_used(
    with_examples: Pack,
) -> None:
    again = load_pack(dump_pack(with_examples))
    assert again.out_of_scope == tuple(OUT_OF_SCOPE_EXAMPLES)
    assert Router(again).scorer.info.details["model"] == "stored in the pack"
    edited = again.model_copy(update={"out_of_scope": again.out_of_scope[:-1]})
    assert Router(edited).scorer.info.details["model"] == "retrained: routes changed since build"


def test_a_pack_without_out_of_scope_examples_learns_exactly_as_before(plain: Pack) -> None:
    texts = route_texts(plain)
    assert learning_texts(texts, ()) == texts
    assert learning_texts(texts, ["  "]) == texts
    stored = _model_of(plain).model
    assert stored is not None and stored.fingerprint == fingerprint(texts)
    assert LexicalScorer.build(texts, stored).info.details["model"] == "stored in the pack"


def test_the_effective_floor_is_the_policy_one_when_set(plain: Pack) -> None:
    router = Router(plain)
    decision = router.route("where is my parcel", policy=Policy(floor=0.2))
    assert decision.floor == 0.2


def test_the_command_line_builds_with_out_of_scope_examples_and_eval_shows_the_floor(
    tmp_path: Path,
) -> None:
    routes, cases, pack_path = tmp_path / "routes.json", tmp_path / "cases.jsonl", tmp_path / "p"
    routes.write_text(json.dumps(ROUTES))
    rows = [{"text": t, "expected": None} for t in OUT_OF_SCOPE_EXAMPLES]
    rows.append({"text": "where is my parcel", "expected": "orders"})  # not learned again
    cases.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    built = cli("build", str(routes), "--out-of-scope", str(cases), "-o", str(pack_path))
    assert built.returncode == 0, built.stderr
    pack = load_pack(pack_path)
    assert pack.out_of_scope == tuple(OUT_OF_SCOPE_EXAMPLES)
    stored = _model_of(pack).model
    assert stored is not None and stored.floor is not None
    report = cli("eval", str(pack_path), str(cases))
    assert f"floor               {stored.floor:.2f} (fitted at build)" in report.stdout
    assert stored.margin is not None and pack.policy.near_tie_margin == stored.margin
    assert f"near-tie margin     {stored.margin:.2f}" in report.stdout
    overridden = json.loads(
        cli("eval", str(pack_path), str(cases), "--json", "--floor", "0.3").stdout
    )
    assert (overridden["floor"], overridden["floor_source"]) == (0.3, "policy")


def test_fit_margin_is_the_gap_under_which_a_share_of_held_out_texts_gets_a_menu() -> None:
    # Ten routes. 150 texts lead with 0.5 against 0.5 - d (gaps d from 0 to 0.2, the rest
    # spread evenly); 50 more score 0.1 everywhere, under the floor, and do not count.
    d = np.linspace(0.0, 0.2, 150)
    led = np.column_stack([np.full(150, 0.5), 0.5 - d, *([d / 8 + 1e-9] * 8)])
    probabilities = np.vstack([led, np.full((50, 10), 0.1)])
    logits = np.log(probabilities).astype(np.float32)
    labels = np.zeros(200, np.int64)
    margin = _model.fit_margin(logits, labels, 10, 0.3)
    assert margin == pytest.approx(np.quantile(np.tanh(d / 2), calibration.MENU_SHARE), abs=2e-3)
    assert _model.fit_margin(logits, labels, 10, 0.7) is None  # nothing above the floor
    assert _model.fit_margin(logits[:, :1], labels, 1, None) is None  # one route: no ties


def test_fit_margin_is_never_wider_than_the_design_default() -> None:
    apart = np.log(np.array([[0.98, 0.01, 0.01]] * 40)).astype(np.float32)
    assert _model.fit_margin(apart, np.zeros(40, np.int64), 3, 0.5) == calibration.MARGIN_CAP


def _blurred_routes() -> list[dict[str, object]]:
    """Three routes whose examples are mostly shared words: many held-out near-ties."""
    rng = random.Random(3)
    shared = ["account", "help", "please", "today", "order", "card", "again", "issue"]
    shared += ["number", "change", "online", "store"]
    own = {
        "billing": ["invoice", "charge", "fee", "bill"],
        "orders": ["parcel", "courier", "tracking", "delivery"],
        "weather": ["rain", "snow", "wind", "forecast"],
    }
    return [
        {
            "name": name,
            "examples": [
                " ".join(
                    rng.sample(shared, 3) + [rng.choice(words)]
                    if rng.random() < 0.5
                    else rng.sample(shared, 4)
                )
                for _ in range(80)
            ],
        }
        for name, words in own.items()
    ]


def test_a_built_pack_takes_the_fitted_margin_as_its_policy_margin() -> None:
    blurred = build_pack(_blurred_routes())
    stored = _model_of(blurred).model
    assert stored is not None and stored.margin is not None
    assert stored.margin < calibration.MARGIN_CAP  # near-ties on held-out text: a narrower margin
    assert blurred.policy.near_tie_margin == stored.margin
    assert Router(blurred).scorer.info.details["fitted_margin"] == stored.margin
    tiny = build_pack([{"name": "a", "examples": ["hello a"]}, {"name": "b", "examples": ["b"]}])
    assert tiny.policy.near_tie_margin == Policy().near_tie_margin == 0.15


def test_a_small_pack_leaves_unmatched_what_reads_like_its_out_of_scope_examples() -> None:
    routes = [
        {"name": "refunds", "examples": ["I want my money back", "when will my refund arrive"]},
        {"name": "orders", "examples": ["cancel my order", "change the address of my order"]},
    ]
    outside = ["what's the weather like today", "tell me a joke", "recommend a good movie"]
    pack = build_pack(routes, out_of_scope=outside)
    stored = _model_of(pack).model
    assert stored is not None and not stored.calibrated and stored.floor is None
    router = Router(pack)
    decision = router.route("what's the weather like in Paris")
    assert decision.verdict == "unmatched" and decision.floor == 0.0
    assert router.scorer.unscored_reason("what's the weather like in Paris") == (
        "it reads like this profile's out-of-scope examples"
    )
    without = Router(build_pack(routes))
    assert without.route("what's the weather like in Paris").verdict != "unmatched"
    assert router.route("when will my refund arrive").route == "refunds"
    assert router.scorer.unscored_reason("when will my refund arrive") is None


def test_the_reason_names_what_the_out_of_scope_class_learned_from() -> None:
    routes = [
        {"name": "refunds", "examples": ["I want my money back", "when will my refund arrive"]},
        {"name": "orders", "examples": ["cancel my order", "change the address of my order"]},
    ]
    scorer = Router(build_pack(routes, out_of_scope=["tell me a joke"])).scorer
    message = "tell me a joke"
    own = scorer.unscored_reason(message)
    background = scorer.unscored_reason(message, own=False, background=True)
    both = scorer.unscored_reason(message, own=True, background=True)
    assert own == "it reads like this profile's out-of-scope examples"
    assert background is not None and "built-in off-topic messages" in background
    assert "this profile" not in background
    assert both is not None and "this profile's" in both and "built-in" in both
