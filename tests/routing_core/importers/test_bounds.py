"""What an import may parse is bounded before it is built, deep nesting is a clean refusal, and a
caller can cancel an import while it is parsed (routing_core/importers/files.py)."""

from __future__ import annotations

import json
import re

import pytest

from routing_core import PackError
from routing_core.importers import ImportCancelled, import_export
from routing_core.importers.files import MAX_DEPTH, MAX_NODES, parse_json, parse_yaml
from routing_core.importers.result import MAX_IMPORT_ITEMS
from tests.routing_core.importers.test_files import _zip
from tests.routing_core.test_cli import cli

# Ours, or libyaml's own (it stops flow collections at 1,000 levels, reading ahead of us).
TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep|exceeded maximum nesting depth"


def test_a_small_zip_of_millions_of_example_lines_is_refused_before_they_are_split():
    block = "nlu:\n- intent: greet\n  examples: |\n" + "    - a\n" * 4_000_000  # 32 MB
    upload = _zip({"data/nlu.yml": block[: 16 * 1024 * 1024 - 64].encode()})
    assert len(upload) < 100_000
    with pytest.raises(PackError, match=f"more than {MAX_IMPORT_ITEMS:,} lines"):
        import_export("rasa", upload, filename="export.zip")


def test_a_yaml_list_of_too_many_items_is_refused_before_it_is_built():
    listed = "nlu:\n- intent: greet\n  examples:\n" + "  - a\n" * (MAX_NODES + 1)
    with pytest.raises(PackError, match=f"more than {MAX_NODES:,} values"):
        import_export("rasa", listed.encode(), filename="nlu.yml")


def test_a_json_of_too_many_values_is_refused_before_it_is_parsed():
    with pytest.raises(PackError, match=f"more than {MAX_NODES:,} values"):
        parse_json("[" + ",".join(["1"] * (MAX_NODES + 1)) + "]", "big.json")


def test_repeated_examples_are_bounded_in_what_they_cost_and_report():
    # Each repeat is a note: an export of repeats stops at the items' bound, not at memory.
    # 200,000 lines pass the lines' bound; each is an example gone through and a note.
    listed = "nlu:\n- intent: greet\n  examples: |\n" + "    - hello\n" * 200_000
    with pytest.raises(PackError, match="too large"):
        import_export("rasa", listed.encode(), filename="nlu.yml")


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 10_000])
def test_deeply_nested_yaml_is_a_clean_refusal(depth):
    with pytest.raises(PackError, match=TOO_DEEP):
        parse_yaml("a: " + "[" * depth + "]" * depth, "deep.yml")
    with pytest.raises(PackError, match=TOO_DEEP):
        parse_yaml("- " * depth + "a", "deep.yml")  # block sequences, one in another


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
def test_deeply_nested_json_is_a_clean_refusal(depth):
    with pytest.raises(PackError, match=f"nested more than {MAX_DEPTH} levels deep"):
        parse_json('{"a": ' + "[" * depth + "]" * depth + "}", "deep.json")


def test_nesting_within_the_bound_is_read():
    assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH, "ok.json") is not None
    assert parse_yaml("[" * MAX_DEPTH + "]" * MAX_DEPTH, "ok.yml") is not None


@pytest.mark.parametrize(
    ("format", "name", "text"),
    [
        ("rasa", "nlu.yml", "nlu: " + "[" * 10_000 + "]" * 10_000),
        (
            "semantic-router",
            "layer.json",
            json.dumps({"routes": []})[:-1] + "," + '"x":' + "[" * 100_000 + "]" * 100_000 + "}",
        ),
    ],
)
def test_the_command_line_refuses_deep_nesting_with_exit_2_and_no_traceback(
    tmp_path, format, name, text
):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = cli("import", format, str(path))
    assert result.returncode == 2
    assert re.search(TOO_DEEP, result.stderr), result.stderr
    assert "Traceback" not in result.stderr


def test_a_cancel_lands_while_the_export_is_parsed():
    listed = "nlu:\n- intent: greet\n  examples:\n" + "  - hello\n" * 20_000
    asked = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) >= 2

    with pytest.raises(ImportCancelled):
        import_export("rasa", listed.encode(), filename="nlu.yml", cancelled=cancelled)
    assert len(asked) == 2  # asked while the YAML was read, before any example was collected
    # without a cancel the same export imports
    assert import_export("rasa", listed.encode(), filename="nlu.yml").example_count == 1
