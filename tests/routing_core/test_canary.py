"""Canary buckets (docs/pack-format.md, Conversation buckets): stable, spread evenly, and a
conversation stays on its side whatever happens to the share."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from routing_core import load_pack
from routing_core.canary import CanaryRouter, bucket, on_candidate
from routing_core.cli import main
from routing_core.conformance import buckets
from routing_core.router import Router
from tests.routing_core.conftest import minimal_doc

SUITE = Path(__file__).resolve().parents[2] / "conformance"
LIVE = Router(load_pack(minimal_doc(version=1)))
CANDIDATE = Router(load_pack(minimal_doc(version=2)))
IDS = [f"conversation-{i}" for i in range(1000)]


def spec_bucket(conversation: str) -> int:
    """The function as the specification words it, written again from the text."""
    digest = hashlib.sha256(conversation.encode("utf-8")).digest()
    return (int.from_bytes(digest[:8], byteorder="big", signed=False) % 10000) // 100


def test_the_bucket_is_the_specified_function():
    assert all(bucket(c) == spec_bucket(c) for c in IDS)
    assert bucket("abc") == 0 and bucket("") == 16


def test_an_unpaired_surrogate_counts_as_the_replacement_character():
    assert bucket("\ud800-x") == bucket("\ufffd-x")
    assert bucket("\ud83d\ude00") == bucket("😀")  # a pair held as two code points joins


def test_buckets_spread_evenly():
    counts = [0] * 100
    for i in range(20_000):
        counts[bucket(f"c{i}")] += 1
    assert min(counts) > 150 and max(counts) < 250  # 200 expected in each


def test_a_30_percent_canary_takes_about_30_percent_of_conversations():
    router = CanaryRouter(LIVE, CANDIDATE, 30)
    sides = [router.route("where is my parcel", conversation=c)[0] for c in IDS]
    assert 260 <= sides.count("candidate") <= 340
    assert all((s == "candidate") == on_candidate(c, 30) for c, s in zip(IDS, sides, strict=True))


def test_a_conversation_never_switches_side_when_the_share_changes():
    router = CanaryRouter(LIVE, CANDIDATE, 30)
    first = {c: router.side(c) for c in IDS}
    for share in (60, 10, 100, 0):
        router.set_candidate(CANDIDATE, share)
        assert {c: router.side(c) for c in IDS} == first
    newcomer = "a-new-conversation"
    assert router.side(newcomer) == "live"  # the share in force now (0) places new ones


def test_each_turn_is_decided_by_its_sides_pack():
    router = CanaryRouter(LIVE, CANDIDATE, 50)
    for c in IDS[:50]:
        side, decision = router.route("hello", conversation=c)
        assert decision.pack[1] == (2 if side == "candidate" else 1)


def test_withdrawing_the_candidate_sends_its_conversations_back_to_live():
    router = CanaryRouter(LIVE, CANDIDATE, 100)
    assert router.side("c") == "candidate"
    router.set_candidate(None, 0)
    assert router.side("c") == "live"
    router.set_candidate(CANDIDATE, 100)
    assert router.side("c") == "candidate"  # a new rollout places it afresh


def test_turns_without_a_conversation_stay_on_live_and_memory_is_bounded():
    router = CanaryRouter(LIVE, CANDIDATE, 100, remember=10)
    assert router.side(None) == "live"
    for c in IDS[:20]:
        router.side(c)
    router.set_candidate(CANDIDATE, 0)
    assert router.side(IDS[0]) == "live"  # forgotten: placed again by the share in force
    assert router.side(IDS[19]) == "candidate"  # remembered


@pytest.mark.parametrize("share", [-1, 101])
def test_a_share_is_a_percentage(share):
    with pytest.raises(ValueError, match="percentage"):
        CanaryRouter(LIVE, CANDIDATE, share)


def test_the_committed_buckets_are_the_engines_and_a_wrong_hash_fails(tmp_path, capsys):
    assert json.loads((SUITE / buckets.FILE).read_text())["cases"] == buckets.cases()
    count, report = buckets.check(SUITE, lambda c: (bucket(c) + 1) % 100)
    assert count == len(buckets.cases()) and len(report) == count
    (tmp_path / "cases").mkdir()
    broken = json.loads((SUITE / buckets.FILE).read_text())
    broken["cases"][0]["bucket"] += 1
    (tmp_path / buckets.FILE).write_text(json.dumps(broken))
    for name in ("tiny",):
        for part in ("cases", "packs"):
            (tmp_path / part).mkdir(exist_ok=True)
            (tmp_path / part / f"{name}.json").write_bytes(
                (SUITE / part / f"{name}.json").read_bytes()
            )
    assert main(["conformance", "check", "--pack", "--dir", str(tmp_path)]) == 1
    assert 'bucket "": expected 17, got 16' in capsys.readouterr().out
