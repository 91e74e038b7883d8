"""The embedding tier with the real packaged model (all-MiniLM-L6-v2 from PyPI, offline).

Marked `embeddings`: `make test-embeddings` runs them in `.venv-embed` (Python 3.11 with
the CPU build of torch) with REQUIRE_EMBEDDINGS=1, where a model that does not load is a
failure. Elsewhere the Makefile deselects them; run by hand without the extra they skip.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from routing_core import Router
from routing_core.scorers.embedding import MissingExtra, load_encoder

pytestmark = pytest.mark.embeddings

ROUTES = [
    {
        "name": "weather",
        "description": "the weather forecast",
        "examples": ["will it rain tomorrow"],
    },
    {
        "name": "billing",
        "description": "charges and invoices",
        "examples": ["why was I charged twice"],
    },
    {"name": "music", "description": "play songs", "examples": ["put on some jazz"]},
]


@pytest.fixture(scope="module")
def encoder():
    try:
        return load_encoder("all-minilm-l6-v2")
    except MissingExtra as exc:
        if os.environ.get("REQUIRE_EMBEDDINGS") == "1":
            pytest.fail(f"REQUIRE_EMBEDDINGS=1 but the model did not load: {exc}")
        pytest.skip(f"the embeddings extra is not installed ({exc}); run make test-embeddings")


def pack(scorer):
    return {"profile": {"slug": "t", "name": "T"}, "routes": ROUTES, "scorer": scorer}


def test_the_packaged_model_encodes_normalised_float32_rows_offline(encoder):
    rows = encoder.encode(["hello world", "where is my parcel"])
    assert rows.shape == (2, 384) and rows.dtype == np.float32
    assert np.linalg.norm(rows, axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_the_encoder_is_loaded_once_per_process(encoder):
    assert load_encoder("all-minilm-l6-v2") is encoder


def test_the_embedding_scorer_routes_a_paraphrase_that_shares_no_word(encoder):
    d = Router(pack({"kind": "embedding", "near_tie_margin": 0.02})).route(
        "is a storm coming this weekend?"
    )
    assert (d.route, d.by, d.scorer.name) == ("weather", "scorer", "embedding")
    assert d.evidence is not None and d.evidence.terms[0].term in (
        "the weather forecast",
        "will it rain tomorrow",
    )


def test_the_hybrid_scorer_loads_from_a_pack_and_routes(encoder):
    d = Router(pack({"kind": "hybrid", "embedding_weight": 0.5})).route("play me a song")
    assert (d.route, d.scorer.name) == ("music", "hybrid")


def test_the_cascade_sends_what_lexical_cannot_decide_to_the_embedding_tier(encoder):
    scorer = {
        "kind": "cascade",
        "tiers": [{"kind": "lexical"}, {"kind": "embedding", "near_tie_margin": 0.02}],
    }
    router = Router(pack(scorer))
    easy = router.route("why was I charged twice")
    hard = router.route("is a storm coming this weekend?")
    assert [(t.name, t.decided) for t in easy.tiers] == [("lexical", True)]
    assert [(t.name, t.decided) for t in hard.tiers] == [("lexical", False), ("embedding", True)]
    assert hard.route == "weather"
