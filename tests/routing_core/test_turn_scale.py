"""A large pack's fast turn (sparse weights, blocked products) decides as the plain one does.

Past `DENSE_ROUTES` routes a loaded model is held sparse by term, its common terms as dense
rows, and long messages are scored a block of rows at a time. The reference is the same
stored model held as one dense matrix (`values @ W[ids]`): every route's score, the ranking
and the decision must be the same.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from routing_core import Pack, Router
from routing_core.build import build_pack
from routing_core.scorers import _weights
from routing_core.scorers._weights import DenseWeights, Weights
from routing_core.scorers.stored import with_model

N_ROUTES = _weights.DENSE_ROUTES + 50
COMMON = "my the account card please order help need what how can i".split()
SYLLABLES = "ba ko ri mu te la zen dor vi sa pel nu qua fi mo ga lu re tis yo".split()


def _word(rng: random.Random) -> str:
    return "".join(rng.sample(SYLLABLES, 3))


def _routes() -> list[dict[str, Any]]:
    """Routes that share common words (dense rows) and own rarer ones (sparse cells)."""
    rng = random.Random(7)
    routes = []
    for index in range(N_ROUTES):
        own = [_word(rng) for _ in range(3)]
        examples = [
            " ".join([*rng.sample(COMMON, 3), *rng.sample(own, 2), rng.choice(own)])
            for _ in range(3)
        ]
        routes.append({"name": f"route{index}", "examples": examples})
    return routes


@pytest.fixture(scope="module")
def pack() -> Pack:
    return with_model(build_pack(_routes(), slug="large"))


def _messages() -> list[str]:
    rng = random.Random(11)
    routes = _routes()
    short = [rng.choice(rng.choice(routes)["examples"]) for _ in range(40)]
    mixed = [f"{a} or maybe {b}" for a, b in zip(short, reversed(short), strict=True)]
    long = " ".join(e for r in routes[:60] for e in r["examples"])
    return [*short, *mixed, long, "what can i", "zzz qqq"]


def test_a_large_pack_scores_and_decides_as_its_dense_reference(
    pack: Pack, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = Router(pack)
    weights = fast.scorer._weights
    assert isinstance(weights, Weights)
    assert 0 < len(weights.heavy) < weights.n_terms  # dense rows and sparse cells both used
    # A few rows per product, so that every long message goes through several.
    monkeypatch.setattr(_weights, "BLAS_BLOCK", 3 * N_ROUTES)
    monkeypatch.setattr(_weights, "DENSE_ROUTES", 10 * N_ROUTES)
    reference = Router(pack)
    assert isinstance(reference.scorer._weights, DenseWeights)
    names = fast.pack.route_names
    for message in _messages():
        got = fast.scorer.score(message, names)
        want = reference.scorer.score(message, names)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
        a, b = fast.route(message), reference.route(message)
        assert (a.route, a.by, a.verdict, a.offered, a.decisive) == (
            b.route,
            b.by,
            b.verdict,
            b.offered,
            b.decisive,
        )
        assert (a.runner_up is None) == (b.runner_up is None)
        if a.runner_up is not None and b.runner_up is not None:
            assert a.runner_up.route == b.runner_up.route
            assert a.runner_up.gap == pytest.approx(b.runner_up.gap, abs=1e-6)
        # Float32 sums in another order: equal to float tolerance (ties may swap places);
        # the relevance divides scores by 0.1 first, so it carries ten times their error.
        for field, rtol in (("score", 1e-5), ("relevance", 1e-4)):
            np.testing.assert_allclose(
                [getattr(r, field) for r in a.ranked],
                [getattr(r, field) for r in b.ranked],
                rtol=rtol,
                atol=1e-7,
            )


def test_the_scorer_remembers_the_routers_candidates_without_reordering(pack: Pack) -> None:
    """The router's own tuple of every route is scored as every route; a reordered one is
    still scored in its own order (the identity shortcut must not leak to it)."""
    router = Router(pack)
    names = tuple(router.pack.route_names)
    message = _routes()[5]["examples"][0]
    every = router.scorer.score(message, names)
    again = router.scorer.score(message, names)
    backwards = router.scorer.score(message, names[::-1])
    assert every == again == backwards[::-1]
    assert router.route(message).route == "route5"
