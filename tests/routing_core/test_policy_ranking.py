"""The lazy ranking gives exactly what the plain definition does (`ranked`, alive:
docs/pack-format.md, Relevance; Floors and margins).

`decide` sorts only the alive routes and leaves the full ranking to sort itself when read;
these tests hold it to the eager definition — every route sorted by score, non-finite as
-inf, exact ties in declaration order, softmax relevance — field by field.
"""

from __future__ import annotations

import copy
import math
import pickle
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from routing_core.policy import Policy, Ranked, Ranking, Verdict, decide_scores
from routing_core.scorers.base import RouteText, Scored
from routing_core.scorers.lexical import LexicalScorer

# Few distinct values, so that exact ties (and ties at the floor) are common.
SCORE = st.one_of(
    st.sampled_from([0.0, -0.0, 0.2, 0.5, 0.51, 1.0, math.nan, math.inf, -math.inf]),
    st.floats(-5, 5, allow_nan=False),
)
FLOOR = st.one_of(st.none(), st.sampled_from([0.0, 0.2, 0.5, 2.0]))


def plain_ranking(scores: list[float], temperature: float) -> list[tuple[int, float]]:
    """(index, relevance) best first, straight from the definition, in plain Python."""
    rankable = [s if math.isfinite(s) else -math.inf for s in scores]
    order = sorted(range(len(scores)), key=lambda i: -rankable[i])  # stable: ties keep order
    scale = temperature if temperature > 0 else 1.0
    peak = max(rankable, default=-math.inf)
    if peak == -math.inf:
        shares = [1.0 / len(scores)] * len(scores)
    else:
        exps = [math.exp(r / scale - peak / scale) for r in rankable]
        shares = [e / sum(exps) for e in exps]
    return [(i, shares[i]) for i in order]


def rows(ranking: Sequence[Ranked]) -> list[tuple[str, str, str]]:
    """Rows with floats by repr, so that nan equals nan and -0.0 differs from 0.0."""
    return [(r.route, repr(r.score), repr(r.relevance)) for r in ranking]


@given(
    scores=st.lists(SCORE, min_size=1, max_size=40),
    floor=FLOOR,
    temperature=st.sampled_from([1.0, 0.1, 0.0]),
    incumbent=st.one_of(st.none(), st.integers(0, 45)),
    margin=st.sampled_from([0.0, 0.15, 0.9]),
    categorical=st.booleans(),
)
def test_verdict_matches_the_plain_definition(
    scores: list[float],
    floor: float | None,
    temperature: float,
    incumbent: int | None,
    margin: float,
    categorical: bool,
) -> None:
    names = [f"r{i}" for i in range(len(scores))]
    held = names[incumbent] if incumbent is not None and incumbent < len(names) else None
    policy = Policy(floor=floor, near_tie_margin=margin)
    verdict = decide_scores(names, scores, held, policy, None, categorical, temperature)
    plain = plain_ranking(scores, temperature)
    alive = [
        names[i]
        for i, _ in plain
        if math.isfinite(scores[i]) and (floor is None or scores[i] > floor)
    ]
    assert [r.route for r in verdict.ranked] == [names[i] for i, _ in plain]
    assert [repr(r.score) for r in verdict.ranked] == [repr(float(scores[i])) for i, _ in plain]
    for row, (_, share) in zip(verdict.ranked, plain, strict=True):
        assert row.relevance == pytest.approx(share, rel=1e-9, abs=1e-300)
    assert verdict.alive == tuple(alive)
    assert verdict.to == (alive[0] if verdict.kind == "move" else verdict.to)
    if len(alive) > 1:
        top, second = scores[names.index(alive[0])], scores[names.index(alive[1])]
        assert verdict.runner_up == (alive[1], math.tanh((top - second) / 2.0))
    else:
        assert verdict.runner_up is None
    assert verdict.kind == ("unmatched" if not alive else verdict.kind)


@given(scores=st.lists(SCORE, min_size=0, max_size=30), temperature=st.sampled_from([1.0, 0.1]))
def test_every_way_of_reading_the_ranking_agrees(scores: list[float], temperature: float) -> None:
    names = [f"r{i}" for i in range(len(scores))]

    def fresh() -> Ranking:
        return decide_scores(names, scores, temperature=temperature).ranked

    everything = rows(list(fresh()))
    assert len(fresh()) == len(scores)
    for index in range(-len(scores), len(scores)):
        assert rows([fresh()[index]]) == [everything[index]]  # read before any sort
        ranking = fresh()
        list(ranking)
        assert rows([ranking[index]]) == [everything[index]]  # and after
    assert rows(fresh()[1:3]) == everything[1:3]
    for index in (len(scores), -len(scores) - 1):
        with pytest.raises(IndexError):
            fresh()[index]
    finite = [s if math.isfinite(s) else 0.0 for s in scores]
    same = decide_scores(names, finite, temperature=temperature).ranked
    assert (fresh() == same) == (finite == scores)


def test_a_ranking_is_a_snapshot_of_the_scores_it_was_given() -> None:
    scores = np.array([0.1, 0.9, 0.5])
    verdict: Verdict = decide_scores(["a", "b", "c"], scores)
    scores[:] = [0.9, 0.0, 0.0]
    assert [r.route for r in verdict.ranked] == ["b", "c", "a"]
    assert verdict.ranked[0] == ("b", 0.9, verdict.ranked[0].relevance)
    assert hash(verdict.ranked) == hash(tuple(verdict.ranked))
    assert pickle.loads(pickle.dumps(verdict)) == verdict == copy.deepcopy(verdict)


def test_a_ranking_in_ranking_order_reads_as_given() -> None:
    ranking = Ranking(["x", "y"], [2.0, 1.0], [0.7, 0.3])
    assert list(ranking) == [("x", 2.0, 0.7), ("y", 1.0, 0.3)]
    assert ranking[0] == ("x", 2.0, 0.7) and ranking[-1] == ("y", 1.0, 0.3)


LEXICAL_ROUTES = (
    RouteText("billing", "", ("why was I charged twice", "download my invoice")),
    RouteText("orders", "", ("where is my order", "track my package")),
    RouteText("weather", "", ("will it rain tomorrow", "what is the forecast")),
)


@pytest.mark.parametrize(
    ("message", "candidates"),
    [
        ("charged twice for my order", ("billing", "orders", "weather")),
        ("charged twice for my order", ("weather", "billing")),  # reordered: a copy
        ("zzz qqq", ("billing", "orders", "weather")),  # nothing known: all zero
    ],
)
def test_the_lexical_scorer_hands_the_policy_its_scores_as_a_read_only_array(
    message: str, candidates: tuple[str, ...]
) -> None:
    scorer = LexicalScorer.build(LEXICAL_ROUTES)
    scored = scorer.score_metered(message, list(candidates))
    assert scored.array is not None and not scored.array.flags.writeable
    assert tuple(scored.array.tolist()) == scored.scores == tuple(scorer.score(message, candidates))
    names = list(candidates)
    by_array = decide_scores(names, scored.array, "orders", Policy(floor=0.01))
    by_floats = decide_scores(names, scored.scores, "orders", Policy(floor=0.01))
    assert by_array == by_floats and rows(by_array.ranked) == rows(by_floats.ranked)


def test_a_float32_array_decides_as_its_floats_do() -> None:
    values = np.array([0.3, 0.30000001, math.nan, 0.1], dtype=np.float32)
    names = ["a", "b", "c", "d"]
    by_array = decide_scores(names, values, None, Policy(near_tie_margin=0.0))
    by_floats = decide_scores(names, values.tolist(), None, Policy(near_tie_margin=0.0))
    assert rows(by_array.ranked) == rows(by_floats.ranked)
    assert (by_array.to, by_array.runner_up, by_array.alive) == (
        by_floats.to,
        by_floats.runner_up,
        by_floats.alive,
    )


def test_scores_handed_over_as_an_array_read_as_the_floats_they_hold() -> None:
    values = np.array([0.25, 0.5, 0.125], dtype=np.float32)
    values.flags.writeable = False
    lazy, plain = Scored(array=values), Scored((0.25, 0.5, 0.125))
    assert len(lazy) == len(plain) == 3
    assert lazy.array is values and plain.array is None
    assert lazy.scores == (0.25, 0.5, 0.125) and all(type(s) is float for s in lazy.scores)
    assert lazy == plain and hash(lazy) == hash(plain) and repr(lazy) == repr(plain)
    assert Scored((0.25, 0.5, 0.125), note="no pick") != plain
    assert pickle.loads(pickle.dumps(lazy)) == lazy == copy.deepcopy(lazy)
    with pytest.raises(AttributeError):
        lazy.note = "changed"
