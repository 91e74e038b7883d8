"""The format-compatibility rule: a newer minor's optional fields are ignored, a newer major is not."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from routing_core import PackError, Router, dump_pack, load_pack
from routing_core.pack import FORMAT_MINOR, FORMAT_VERSION, digest
from tests.routing_core.conftest import PACKS


def current_doc() -> dict[str, Any]:
    """The sample pack as this version writes it."""
    pack = load_pack(json.loads((PACKS / "support.json").read_text(encoding="utf-8")))
    return json.loads(dump_pack(pack))


def newer_minor_doc() -> dict[str, Any]:
    """What a writer one minor ahead might send: optional fields this reader has never seen."""
    doc = current_doc()
    doc["format_minor"] = FORMAT_MINOR + 1
    doc["routes"][0]["out_of_scope_examples"] = ["what's the weather"]
    doc["policy"]["fitted_floor"] = 0.21
    doc["scorer"]["route_names"] = [r["name"] for r in doc["routes"]]
    doc["rules"][0]["match"]["note"] = "added later"
    doc["checksum"] = digest(doc)  # the newer writer hashed what it wrote
    return doc


def with_tier(tier: dict[str, Any], nested: bool) -> dict[str, Any]:
    """The sample pack (unhashed) scored by `tier`, or by a cascade of lexical then `tier`."""
    doc = current_doc()
    doc.pop("checksum")
    doc["scorer"] = {"kind": "cascade", "tiers": [{"kind": "lexical"}, tier]} if nested else tier
    return doc


def tier_of(doc: dict[str, Any], nested: bool) -> dict[str, Any]:
    """The tier `with_tier` placed."""
    scorer: dict[str, Any] = doc["scorer"]
    return scorer["tiers"][1] if nested else scorer


def test_a_newer_minor_pack_loads_and_reports_what_was_ignored(caplog):
    ignored: list[str] = []
    with caplog.at_level(logging.WARNING, logger="routing_core"):
        pack = load_pack(newer_minor_doc(), ignored=ignored)
    assert ignored == [
        "routes[0].out_of_scope_examples",
        "rules[0].match.note",
        "policy.fitted_floor",
        "scorer.route_names",
    ]
    assert "ignored routes[0].out_of_scope_examples" in caplog.text
    # Everything this reader knows is read exactly as from the pack without the extras.
    same = load_pack(current_doc())
    assert pack.routes == same.routes and pack.rules == same.rules
    assert (
        Router(pack).route("where is my parcel").route
        == Router(same).route("where is my parcel").route
    )


def test_a_newer_field_in_a_cascade_tier_is_ignored_by_its_path():
    """What a reader one minor behind does with `fit_weight` in a cascade's hybrid tier."""
    doc = current_doc()
    doc["format_minor"] = FORMAT_MINOR + 1
    doc["scorer"] = {"kind": "cascade", "tiers": [{"kind": "lexical"}, {"kind": "embedding"}]}
    doc["scorer"]["tiers"][1]["fitted_later"] = True
    doc.pop("checksum")
    doc["checksum"] = digest(doc)
    ignored: list[str] = []
    pack = load_pack(doc, ignored=ignored)
    assert ignored == ["scorer.tiers[1].fitted_later"]
    assert [t.kind for t in pack.scorer.tiers] == ["lexical", "embedding"]


def test_a_typo_in_a_pack_of_this_readers_own_minor_is_still_refused():
    doc = current_doc()
    doc["routes"][0]["exmaples"] = ["typo"]
    del doc["checksum"]
    with pytest.raises(PackError) as caught:
        load_pack(doc)
    assert ("routes[0].exmaples", "Extra inputs are not permitted") in caught.value.errors


def test_a_newer_minor_still_refuses_a_known_field_with_a_wrong_value():
    doc = newer_minor_doc()
    doc["policy"]["near_tie_margin"] = 7
    del doc["checksum"]
    with pytest.raises(PackError) as caught:
        load_pack(doc)
    assert [p for p, _ in caught.value.errors] == ["policy.near_tie_margin"]


def test_a_newer_major_is_refused_with_a_clear_message():
    doc = newer_minor_doc()
    doc["format_version"] = FORMAT_VERSION + 1
    del doc["checksum"]
    with pytest.raises(PackError) as caught:
        load_pack(doc)
    path, message = caught.value.errors[0]
    assert path == "format_version"
    assert "newer than this reader knows" in message and "upgrade routing-core" in message


def test_a_newer_minor_pack_changed_after_export_is_still_refused():
    doc = newer_minor_doc()
    doc["routes"][0]["out_of_scope_examples"] = ["tampered"]
    with pytest.raises(PackError, match="changed after export"):
        load_pack(doc)


def test_a_minor_0_pack_is_written_as_before_so_older_readers_keep_reading_it():
    # Packs of the format as it was before minors existed carry no `format_minor`, and their
    # checksum (the ETag agents send) is unchanged by the field's introduction.
    doc = current_doc()
    assert "format_minor" not in doc and "out_of_scope" not in doc
    stored = json.loads((PACKS / "support.json").read_text(encoding="utf-8"))
    assert load_pack(stored).checksum == load_pack(doc).checksum


def test_a_pack_is_stamped_with_the_lowest_minor_its_content_needs():
    # The sample pack uses no field a minor added: it is a 1.0 pack. Out-of-scope examples
    # (minor 1) make it a 1.1 pack, and the field is written only while it holds something.
    plain = load_pack(current_doc())
    with_examples = plain.model_copy(update={"out_of_scope": ("tell me a joke",)})

    doc = json.loads(dump_pack(with_examples))

    assert FORMAT_MINOR >= 1
    assert doc["format_minor"] == 1 and doc["out_of_scope"] == ["tell me a joke"]
    assert load_pack(doc).out_of_scope == ("tell me a joke",)
    assert "format_minor" not in json.loads(dump_pack(plain))


def test_the_minor_is_not_part_of_the_checksum():
    doc = current_doc()
    doc["format_minor"] = FORMAT_MINOR + 5
    assert load_pack(doc).checksum == load_pack(current_doc()).checksum


# The last commit before format minors existed: the reader deployed agents run today.
PREVIOUS_READER = "3021bc3"


def test_a_pack_this_version_writes_loads_in_the_previous_reader(tmp_path):
    """The real previous `routing_core`, from git, reads what this one dumps (minor 0)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", PREVIOUS_READER, "routing_core"],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        pytest.skip("not a git checkout with the previous reader's commit")
    subprocess.run(["tar", "-x", "-C", str(tmp_path)], input=archive.stdout, check=True)
    dumped = tmp_path / "pack.json"
    dumped.write_text(dump_pack(load_pack(current_doc())), encoding="utf-8")
    script = (
        "import sys, routing_core; from routing_core import load_pack, Router; "
        "assert routing_core.__file__.startswith(sys.argv[2]), routing_core.__file__; "
        "p = load_pack(sys.argv[1]); print(p.checksum, Router(p).route('where is my parcel').route)"
    )
    old = subprocess.run(
        [sys.executable, "-c", script, str(dumped), str(tmp_path)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,  # not this checkout: `-c` puts the working directory first on the path
        check=False,
        timeout=120,
    )
    assert old.returncode == 0, old.stderr[-2000:]
    checksum, route = old.stdout.split()
    assert checksum == load_pack(current_doc()).checksum  # the same ETag in both readers
    assert route == Router(load_pack(current_doc())).route("where is my parcel").route


@pytest.mark.parametrize("nested", [False, True])
def test_a_hybrid_that_fits_its_weight_is_a_minor_4_pack_and_one_that_does_not_reads_as_before(
    nested,
):
    """`fit_weight` is written only when set, with the minor that added it, so a reader from
    before it warns that it routes with the declared weight instead; unset, it is left out
    and the pack is what it was (here a 1.0 pack), in a cascade's tiers as at the top."""

    def with_hybrid(hybrid: dict[str, Any]) -> dict[str, Any]:
        return with_tier({"kind": "hybrid", **hybrid}, nested)

    def hybrid_of(doc: dict[str, Any]) -> dict[str, Any]:
        return tier_of(doc, nested)

    fitted = json.loads(dump_pack(load_pack(with_hybrid({"fit_weight": True}))))
    assert hybrid_of(fitted)["fit_weight"] is True and fitted["format_minor"] == 4
    assert hybrid_of(load_pack(fitted).model_dump())["fit_weight"] is True
    declared = json.loads(dump_pack(load_pack(with_hybrid({"embedding_weight": 0.3}))))
    assert "fit_weight" not in hybrid_of(declared) and "format_minor" not in declared
    assert hybrid_of(declared)["embedding_weight"] == 0.3


@pytest.mark.parametrize("kind", ["embedding", "hybrid"])
@pytest.mark.parametrize("nested", [False, True])
def test_a_tier_with_a_head_is_a_minor_5_pack_and_one_without_reads_as_before(kind, nested):
    """`head` is written only when set, with the minor that added it; unset (the default,
    what an absent field means), it is left out and the pack and its checksum are what they
    were before the field existed, in a cascade's tiers as at the top."""

    headed = json.loads(dump_pack(load_pack(with_tier({"kind": kind, "head": True}, nested))))
    assert tier_of(headed, nested)["head"] is True and headed["format_minor"] == 5
    assert tier_of(load_pack(headed).model_dump(), nested)["head"] is True
    plain = load_pack(with_tier({"kind": kind}, nested))
    off = load_pack(with_tier({"kind": kind, "head": False}, nested))
    assert "head" not in tier_of(json.loads(dump_pack(plain)), nested)
    assert plain.checksum == off.checksum and tier_of(plain.model_dump(), nested)["head"] is False
    assert "format_minor" not in json.loads(dump_pack(plain))
    ignored: list[str] = []
    newer = {**headed, "format_minor": FORMAT_MINOR + 1}
    newer["checksum"] = digest({k: v for k, v in newer.items() if k != "checksum"})
    assert tier_of(load_pack(newer, ignored=ignored).model_dump(), nested)["head"] is True
    assert ignored == []


def test_a_new_pack_of_an_embedding_kind_learns_the_head():
    from routing_core.pack import new_scorer_settings

    assert new_scorer_settings("embedding") == {"kind": "embedding", "head": True}
    assert new_scorer_settings("hybrid") == {"kind": "hybrid", "fit_weight": True, "head": True}
    assert new_scorer_settings("lexical") == {"kind": "lexical"}


def test_a_new_cascade_asks_the_hybrid_after_the_lexical_scorer_and_is_a_valid_pack():
    from routing_core.pack import new_scorer_settings

    cascade = new_scorer_settings("cascade")
    assert [tier["kind"] for tier in cascade["tiers"]] == ["lexical", "hybrid"]
    hybrid = cascade["tiers"][1]
    assert hybrid["fit_weight"] and hybrid["head"] and hybrid["take_foreign"]
    routes = [{"name": "x", "examples": ["a b c"]}, {"name": "y", "examples": ["d e f"]}]
    pack = load_pack({"profile": {"slug": "c", "name": "C"}, "routes": routes, "scorer": cascade})
    assert [tier.kind for tier in pack.scorer.tiers] == ["lexical", "hybrid"]
    assert pack.scorer.tiers[1].take_foreign  # type: ignore[union-attr]
    written = json.loads(dump_pack(pack))
    assert written["format_minor"] == 11 and written["scorer"]["tiers"][1]["take_foreign"]
    cascade["tiers"][1]["model"] = "multilingual-e5-small"  # a fresh copy, tiers and all
    assert "model" not in new_scorer_settings("cascade")["tiers"][1]


def test_a_route_with_a_display_name_is_a_minor_9_pack_that_routes_as_before():
    doc = current_doc()
    doc.pop("checksum")
    doc["routes"][0]["display_name"] = "Facturation et réclamations"
    named = load_pack(doc)
    written = json.loads(dump_pack(named))
    assert written["format_minor"] == 9
    assert written["routes"][0]["display_name"] == "Facturation et réclamations"
    assert all("display_name" not in r for r in written["routes"][1:])  # absent, not null
    assert load_pack(written).routes[0].display_name == "Facturation et réclamations"
    plain = load_pack(current_doc())
    for text in ("why was I charged twice", "réclamations", "where is my parcel"):
        assert (
            Router(named).route(text).to_event()["ranked"]
            == (Router(plain).route(text).to_event()["ranked"])
        )


def test_a_display_name_reader_of_minor_8_ignores_the_field_and_this_one_refuses_a_blank_one():
    doc = current_doc()
    doc["routes"][0]["display_name"] = "Réclamations"
    doc["format_minor"] = 9
    doc["checksum"] = digest(doc)
    assert load_pack(doc).routes[0].display_name == "Réclamations"
    doc["routes"][0]["display_name"] = "  "
    doc.pop("checksum")
    with pytest.raises(PackError, match=r"routes\[0\]\.display_name"):
        load_pack(doc)


def test_a_route_name_with_an_accent_is_refused_in_words_that_say_why():
    doc = current_doc()
    doc.pop("checksum")
    doc["routes"][0]["name"] = "réclamations"
    with pytest.raises(PackError) as caught:
        load_pack(doc)
    assert caught.value.lines()[0] == (
        "routes[0].name: an identifier uses only the letters a to z (no accents), digits, '-' "
        "and '_', no spaces, and starts with a letter or digit"
    )
