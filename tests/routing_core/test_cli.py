"""The `routing-core` command line, run as a person would: through a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.routing_core.conftest import PACKS

SUPPORT = str(PACKS / "support.json")


def cli(*args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "routing_core.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=check,
    )


def test_validate_prints_a_one_line_summary_and_exits_0():
    result = cli("validate", SUPPORT)
    assert result.returncode == 0
    assert result.stdout.startswith("ok: support v3 — 6 routes, 2 rules, 6 tools, sha256:")


def test_validate_prints_one_path_reason_line_per_problem_and_exits_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "profile": {"slug": "x", "name": "X"},
                "routes": [{"name": "A"}, {"name": "b"}],
                "default_route": "zz",
            }
        )
    )
    result = cli("validate", str(bad))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("routes[0].name: ")
    assert "default_route: no route named 'zz'" in lines
    assert "Traceback" not in result.stderr


def test_validate_of_a_missing_file_is_a_clean_error():
    result = cli("validate", "/nonexistent/pack.json")
    assert (
        result.returncode == 2
        and "Traceback" not in result.stderr
        and "cannot read" in result.stderr
    )


def test_route_prints_a_readable_verdict():
    result = cli("route", SUPPORT, "where is my parcel")
    assert result.returncode == 0
    first = result.stdout.splitlines()[0]
    assert first.startswith("move shipping (by scorer")
    assert "triage:" in result.stdout and "tools:" in result.stdout and "█" in result.stdout


def test_route_shows_a_rule_win_with_its_evidence():
    result = cli("route", SUPPORT, "I want a real person", "--incumbent", "billing")
    assert result.stdout.startswith("move human (by rule")
    assert "evidence: 'real person'" in result.stdout
    assert "stuck: I'm handing you to a colleague." in result.stdout


def test_route_json_prints_the_event():
    result = cli("route", SUPPORT, "reset my password", "--json")
    event = json.loads(result.stdout)
    assert event["schema"] == "route-decision/1"
    assert event["route"] == "account" and event["pack"]["slug"] == "support"


def test_build_makes_a_valid_pack_from_a_route_list(tmp_path):
    routes = tmp_path / "routes.json"
    routes.write_text(
        json.dumps(
            [
                {"name": "greet", "examples": ["hello there", "hi"]},
                {"name": "bye", "examples": ["goodbye", "see you"], "description": "leaving"},
            ]
        )
    )
    out = tmp_path / "pack.json"
    assert cli("build", str(routes), "--slug", "demo", "-o", str(out)).returncode == 0
    assert cli("validate", str(out)).stdout.startswith("ok: demo v0 — 2 routes")
    assert cli("route", str(out), "goodbye friend").stdout.startswith("move bye")


def test_build_refuses_something_that_is_not_a_route_list(tmp_path):
    routes = tmp_path / "routes.json"
    routes.write_text('{"name": "x"}')
    result = cli("build", str(routes))
    assert result.returncode == 2 and "expected a JSON list of route objects" in result.stderr


@pytest.fixture
def cases(tmp_path) -> Path:
    path = tmp_path / "cases.jsonl"
    rows = [
        {"text": "where is my parcel", "expected": "shipping"},
        {"text": "reset my password", "expected": "account"},
        {"text": "I want a real person", "expected": "human"},
        {"text": "what's the weather on mars", "expected": None},
        {"text": "track my package", "expected": "shipping", "incumbent": "billing"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_eval_json_has_the_documented_keys(cases):
    result = cli("eval", SUPPORT, str(cases), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert set(report) >= {
        "n",
        "pass_rate",
        "top1_accuracy",
        "in_scope_accuracy",
        "oos_recall",
        "oos_precision",
        "menu_rate",
        "per_route",
        "confusions",
        "latency_us",
    }
    assert report["n"] == 5 and set(report["latency_us"]) == {"p50", "p99", "first"}
    assert report["per_route"]["shipping"]["support"] == 2


def test_eval_prints_a_text_report(cases):
    result = cli("eval", SUPPORT, str(cases))
    assert "top-1 accuracy" in result.stdout and "latency p50 / p99" in result.stdout


def test_eval_fails_under_the_pass_rate_asked_for_and_keeps_its_json_whole(cases):
    """A CI gate: the five cases above pass, and one more expects the wrong route."""
    wrong = {"text": "where is my parcel", "expected": "billing"}
    cases.write_text(cases.read_text() + json.dumps(wrong) + "\n")
    report = json.loads(cli("eval", SUPPORT, str(cases), "--json", check=True).stdout)
    assert (report["n"], round(report["pass_rate"] * 6)) == (6, 5)

    at = cli("eval", SUPPORT, str(cases), "--json", "--fail-under", str(100 * 5 / 6))
    above = cli("eval", SUPPORT, str(cases), "--json", "--fail-under", "84")

    assert at.returncode == 0 and at.stderr == ""
    assert above.returncode == 1 and json.loads(above.stdout)["n"] == 6
    assert "failed: 5 of 6 cases pass (83.33%), under --fail-under 84%" in above.stderr
    assert cli("eval", SUPPORT, str(cases), "--fail-under", "0").returncode == 0


@pytest.mark.parametrize("value", ["101", "-1", "most"])
def test_eval_refuses_a_fail_under_that_is_not_a_percentage(cases, value):
    result = cli("eval", SUPPORT, str(cases), "--fail-under", value)
    assert result.returncode == 2 and "--fail-under" in result.stderr


def test_eval_of_no_cases_is_an_error_not_a_pass(tmp_path):
    """A CI job pointed at an empty file has checked nothing: it must not go green."""
    empty = tmp_path / "cases.jsonl"
    empty.write_text("\n")
    result = cli("eval", SUPPORT, str(empty))
    assert result.returncode == 2 and "no cases" in result.stderr


def test_eval_names_the_line_of_a_bad_case(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text('{"text": "ok", "expected": "billing"}\n{"expected": 3}\n')
    result = cli("eval", SUPPORT, str(path))
    assert result.returncode == 2 and "line 2" in result.stderr


def test_schema_prints_the_pack_json_schema():
    schema = json.loads(cli("schema", check=True).stdout)
    assert schema["title"] == "Pack" and "routes" in schema["properties"]


def test_schema_decision_prints_the_decision_event_s_schema():
    """What an agent in another language validates the events it logs with."""
    schema = json.loads(cli("schema", "--decision", check=True).stdout)
    assert schema["properties"]["schema"] == {"const": "route-decision/1"}
    assert set(schema["properties"]["verdict"]["enum"]) == {"move", "stay", "menu", "unmatched"}


def test_lint_lists_findings_and_exits_1_on_errors(tmp_path):
    pack = tmp_path / "pack.json"
    pack.write_text(
        json.dumps(
            {
                "profile": {"slug": "x", "name": "X"},
                "routes": [
                    {"name": "a", "examples": ["same words here"]},
                    {"name": "b", "examples": ["Same words here"]},
                ],
            }
        )
    )
    result = cli("lint", str(pack))
    assert result.returncode == 1
    assert "error   routes[0].examples[0]: the same example is under a, b" in result.stdout
    assert result.stdout.strip().endswith("error(s)")


def test_lint_with_recent_messages_names_routes_missing_their_language(tmp_path):
    messages = tmp_path / "recent.txt"
    spanish = "¿Por qué me cobraron dos veces este mes en la tarjeta?"
    english = "I would like to know why I was charged twice this month"
    messages.write_text("\n".join([spanish] * 12 + [english] * 40 + ["ok", ""]), encoding="utf-8")

    result = cli("lint", SUPPORT, "--messages", str(messages))

    assert (
        "23% of recent messages (of those whose language is clear) are in Spanish;"
        " these routes have no Spanish examples" in result.stdout
    )
    assert "Spanish" not in cli("lint", SUPPORT).stdout


def test_lint_of_the_sample_pack_has_no_errors():
    result = cli("lint", SUPPORT)
    assert result.returncode == 0, result.stdout


def test_validate_of_a_newer_minor_pack_exits_0_and_names_what_it_ignored(tmp_path):
    from routing_core.pack import FORMAT_MINOR, digest

    doc = json.loads(Path(SUPPORT).read_text(encoding="utf-8"))
    doc.pop("checksum", None)
    doc["format_minor"] = FORMAT_MINOR + 1
    doc["routes"][0]["out_of_scope_examples"] = ["weather"]
    doc["checksum"] = digest(doc)
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(doc))
    result = cli("validate", str(newer))
    assert result.returncode == 0 and result.stdout.startswith("ok: support v3")
    assert "routes[0].out_of_scope_examples: ignored, a field of a newer format minor" in (
        result.stderr
    )
