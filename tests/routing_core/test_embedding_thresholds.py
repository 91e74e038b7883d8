"""What a declared embedding threshold means is tied to the pack's format minor.

Before format minor 2 an embedding tier scored raw cosines, so a floor or margin it declared
was a cosine; since, it scores calibrated probabilities. A pack of an older minor that
declares one is refused (naming the field and why) rather than read in the wrong units; a
pack written now states minor 2. Pure: the pack is read and written, the model is not needed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from routing_core import PackError, dump_pack, load_pack
from routing_core.pack import (
    FORMAT_MINOR,
    PROBABILITY_THRESHOLDS_MINOR,
    embedding_threshold_paths,
)

ROUTES = [
    {"name": "weather", "examples": ["will it rain tomorrow"]},
    {"name": "billing", "examples": ["why was I charged twice"]},
]


def document(scorer: dict[str, Any], minor: int | None, **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"profile": {"slug": "t", "name": "T"}, "routes": ROUTES}
    doc |= {"scorer": scorer, **extra}
    if minor is not None:
        doc["format_minor"] = minor
    return doc


CASCADE = {"kind": "cascade", "tiers": [{"kind": "lexical"}, {"kind": "embedding", "floor": 0.4}]}


@pytest.mark.parametrize(
    ("scorer", "extra", "paths"),
    [
        ({"kind": "embedding", "floor": 0.45}, {}, ["scorer.floor"]),
        ({"kind": "embedding", "near_tie_margin": 0.02}, {}, ["scorer.near_tie_margin"]),
        (CASCADE, {}, ["scorer.tiers[1].floor"]),
        ({"kind": "embedding"}, {"policy": {"floor": 0.5}}, ["policy.floor"]),
    ],
)
@pytest.mark.parametrize("minor", [None, 0, 1])
def test_an_older_pack_declaring_an_embedding_threshold_is_refused_naming_it(
    scorer, extra, paths, minor
):
    with pytest.raises(PackError) as caught:
        load_pack(document(scorer, minor, **extra))
    assert [path for path, _ in caught.value.errors] == paths
    message = caught.value.errors[0][1]
    assert "as a cosine" in message and "calibrated probabilities" in message
    assert '"format_minor": 2' in message


@pytest.mark.parametrize(
    ("scorer", "extra"),
    [
        ({"kind": "embedding"}, {}),  # nothing declared: the tier fits its own floor
        ({"kind": "hybrid", "floor": 0.3}, {}),  # the hybrid's scores were probabilities
        ({"kind": "lexical"}, {"policy": {"floor": 0.5}}),
        (  # the policy's floor judges the lexical tier first; the embedding declares none
            {"kind": "cascade", "tiers": [{"kind": "lexical"}, {"kind": "embedding"}]},
            {"policy": {"floor": 0.5}},
        ),
    ],
)
def test_an_older_pack_without_an_embedding_threshold_loads_as_before(scorer, extra):
    pack = load_pack(document(scorer, None, **extra))
    assert json.loads(dump_pack(pack)).get("format_minor") is None


def test_a_pack_written_now_with_an_embedding_floor_states_the_probability_minor():
    pack = load_pack(document({"kind": "embedding", "floor": 0.45}, PROBABILITY_THRESHOLDS_MINOR))
    written = json.loads(dump_pack(pack))
    assert written["format_minor"] == PROBABILITY_THRESHOLDS_MINOR
    again = load_pack(written)
    assert again == pack and again.scorer.floor == 0.45


def test_a_cascade_tier_or_policy_floor_also_stamps_the_probability_minor():
    for doc in (
        document(CASCADE, PROBABILITY_THRESHOLDS_MINOR),
        document({"kind": "embedding"}, PROBABILITY_THRESHOLDS_MINOR, policy={"floor": 0.5}),
    ):
        written = json.loads(dump_pack(load_pack(doc)))
        assert written["format_minor"] == PROBABILITY_THRESHOLDS_MINOR


def test_an_older_packs_thresholds_are_refused_before_its_checksum_is_checked():
    # The refusal is about meaning, not tampering: the same error with or without a checksum.
    doc = document({"kind": "embedding", "floor": 0.45}, 1)
    doc["checksum"] = "sha256:" + "0" * 64
    with pytest.raises(PackError) as caught:
        load_pack(doc)
    assert [path for path, _ in caught.value.errors] == ["scorer.floor"]


def test_threshold_paths_ignore_what_is_not_a_pack_scorer():
    assert embedding_threshold_paths({}) == []
    assert embedding_threshold_paths({"scorer": "embedding"}) == []
    assert embedding_threshold_paths({"scorer": {"kind": "cascade", "tiers": "x"}}) == []


def test_a_pack_read_from_an_older_minor_equals_the_pack_written_now():
    # load(dump(p)) == p: a 1.1 document (a stored model's floor) reads as a pack of this minor.
    pack = load_pack(document({"kind": "lexical"}, None, out_of_scope=["tell me a joke"]))
    written = json.loads(dump_pack(pack))
    assert written["format_minor"] == 1
    assert load_pack(written) == pack and pack.format_minor == FORMAT_MINOR
