"""`routing-core import`, run as a person would: through a subprocess."""

from __future__ import annotations

import json

from routing_core import Router, load_pack
from tests.routing_core.importers.conftest import EXPORTS
from tests.routing_core.test_cli import cli


def test_import_writes_a_valid_pack_and_prints_what_came_over(tmp_path):
    out = tmp_path / "hotel.json"
    result = cli(
        "import", "dialogflow-es", str(EXPORTS / "dialogflow_es"), "-o", str(out), "--slug", "hotel"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == (
        f"imported 3 routes, 8 examples, 2 out-of-scope examples, 0 rules from dialogflow-es, "
        f"language en → {out}"
    )
    assert (
        "  intents/Default Fallback Intent.json: fallback intent 'Default Fallback Intent': "
        "2 phrase(s) came over as out-of-scope examples" in lines
    )
    assert "  intent 'spa.hours': no examples: an empty intent" in lines
    assert "  lexicon 'room-type': 5 word(s) became keywords of room_book" in lines
    pack = load_pack(out)
    assert (pack.profile.slug, pack.profile.name) == ("hotel", "Hotel Desk")
    assert pack.out_of_scope == ("what is the capital of France", "tell me a joke")
    assert Router(pack).route("book a suite for friday").route == "room_book"
    assert cli("validate", str(out)).returncode == 0


def test_without_an_output_the_pack_goes_to_stdout_and_the_summary_to_stderr():
    result = cli("import", "semantic-router", str(EXPORTS / "semantic_router" / "layer.yaml"))
    assert result.returncode == 0, result.stderr
    assert [r["name"] for r in json.loads(result.stdout)["routes"]] == ["billing", "shipping"]
    assert result.stderr.startswith(
        "imported 2 routes, 6 examples, 0 out-of-scope examples, 0 rules from semantic-router"
    )


def test_an_export_that_cannot_be_imported_exits_2_with_path_and_reason(tmp_path):
    broken = tmp_path / "nlu.yml"
    broken.write_text("nlu:\n- intent: greet\n  examples: [\n")
    result = cli("import", "rasa", str(broken), "-o", str(tmp_path / "out.json"))
    assert result.returncode == 2
    assert result.stderr.startswith("nlu.yml: not valid YAML: ")
    assert not (tmp_path / "out.json").exists()


def test_an_unknown_language_exits_2_naming_the_choices():
    result = cli("import", "dialogflow-cx", str(EXPORTS / "dialogflow_cx"), "--language", "de")
    assert result.returncode == 2
    assert result.stderr == "language: the agent has no 'de' phrases; it has: en, fr\n"


def test_an_unknown_format_is_a_usage_error():
    result = cli("import", "watson", "x")
    assert result.returncode == 2
    assert "invalid choice: 'watson'" in result.stderr


def test_lex_and_clu_exports_import_from_the_command_line(tmp_path):
    for fmt, path in (("lex-v2", EXPORTS / "lex_v2"), ("azure-clu", EXPORTS / "azure_clu.json")):
        out = tmp_path / f"{fmt}.json"
        result = cli("import", fmt, str(path), "-o", str(out))
        assert result.returncode == 0, result.stderr
        assert len(load_pack(out).routes) == (2 if fmt == "lex-v2" else 3)
