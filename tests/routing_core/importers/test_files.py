"""Exports are read within limits: zips in memory, bounded; YAML without aliases; lazily."""

from __future__ import annotations

import io
import subprocess
import sys
import zipfile

import pytest

from routing_core import PackError
from routing_core.importers.files import MAX_TOTAL_BYTES, parse_yaml, read_export, read_upload


def _zip(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_zip_that_unpacks_beyond_the_limit_is_refused_before_it_is_read():
    bomb = _zip({"intents/a.json": b"\0" * (MAX_TOTAL_BYTES + 1)})
    assert len(bomb) < 200_000
    with pytest.raises(PackError, match="unpacks to more than 64 MB"):
        read_export(bomb)


def test_a_zip_is_read_in_memory_with_its_paths_as_given_and_finder_folders_skipped():
    files = read_export(_zip({"agent/agent.json": b"{}", "__MACOSX/agent/._agent.json": b"x"}))
    assert files.paths() == ["agent/agent.json"]
    assert files.rooted_at("agent.json").paths() == ["agent.json"]


def test_an_upload_that_is_not_a_zip_is_one_file_under_its_base_name():
    assert read_upload(b"routes: []", "C:\\exports\\layer.yaml").paths() == ["layer.yaml"]


def test_bytes_that_are_not_a_zip_are_refused():
    with pytest.raises(PackError, match="upload: not a zip file"):
        read_export(b"PK\x03\x04 broken")


def test_importing_the_importers_loads_neither_django_nor_yaml():
    code = (
        "import sys, routing_core.importers; "
        "print(sorted(m for m in ('django', 'yaml') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_escaped_utf16_halves_in_yaml_join_into_the_character_they_spell():
    """A Rasa file written by a JSON tool escapes 😀 as two halves; YAML alone keeps them apart."""
    loaded = parse_yaml('x: "\\ud83d\\ude00 hi"\ny: ["\\ud800\\udc00"]\n', "nlu.yml")

    assert loaded == {"x": "😀 hi", "y": ["\U00010000"]}


def test_a_lone_escaped_half_stays_for_the_storable_check_to_name():
    assert parse_yaml('x: "\\ud83d alone"', "nlu.yml") == {"x": "\ud83d alone"}
