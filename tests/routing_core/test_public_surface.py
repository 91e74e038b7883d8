"""routing_core's public surface: pinned, documented, cheap to import, and the only way in.

The exported names are pinned as httpx pins its own (tests/test_exported_members.py there):
adding or removing one is a decision this test makes visible. The studio, the benchmarks and
the scripts are clients like any agent: an import of theirs that reaches past the surface
(an internal module, an underscored name) fails here with the file and line.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import routing_core

ROOT = Path(__file__).resolve().parents[2]

EXPORTED = [
    "BACKGROUND_MIN_EXAMPLES",
    "Case",
    "CaseResult",
    "ConversationReport",
    "DEFAULT_ACTION_VERBS",
    "DEFAULT_KNOWLEDGE_VERBS",
    "DEFAULT_QUESTION_PATTERN",
    "Decision",
    "EvalReport",
    "EventReporter",
    "FORMAT_MINOR",
    "FORMAT_VERSION",
    "Finding",
    "LexicalScorerSettings",
    "LlmScorerSettings",
    "MAX_ITEMS",
    "MAX_MESSAGE_CHARS",
    "MAX_ROUTES",
    "MENU",
    "OUT_OF_SCOPE_WANTED",
    "Pack",
    "PackError",
    "PackFetcher",
    "Policy",
    "ROUTE_NAME_PATTERN",
    "Ranked",
    "RemoteRouter",
    "Router",
    "Rule",
    "RuleSet",
    "UNMATCHED",
    "WrongTurn",
    "background_left_out",
    "build_pack",
    "build_pack_file",
    "case_from_mapping",
    "decision_schema",
    "dump_pack",
    "engine_version",
    "evaluate",
    "format_location",
    "lint_pack",
    "load_cases",
    "load_pack",
    "message_language_gap",
    "new_scorer_settings",
    "overlap_checkup",
    "pack_schema",
    "redact",
    "scrub_evidence",
    "starter_out_of_scope",
    "unstorable_reason",
]

# The documented public modules (routing_core's docstring lists the same ones).
PUBLIC_MODULES = {
    "routing_core",
    "routing_core.canary",
    "routing_core.fleet_status",
    "routing_core.importers",
    "routing_core.languages",
    "routing_core.lexicons",
    "routing_core.limits",
    "routing_core.remote",
    "routing_core.repair",
    "routing_core.replay",
    "routing_core.replay_engines",
    "routing_core.reporting",
    "routing_core.rollout",
    "routing_core.reasks",
    "routing_core.scorers",
    "routing_core.scorers.calibration",
    "routing_core.scorers.embedding",
    "routing_core.scorers.lexical",
    "routing_core.scorers.llm",
    "routing_core.scorers.stored",
    "routing_core.server",
    "routing_core.signing",
    "routing_core.telemetry",
    "routing_core.conformance",
    "routing_core.suggest",
    "routing_core.tuning",
}

# Benchmarks that time an internal on purpose reach it by name; nothing else may.
BENCHMARKED_INTERNALS = {
    # times the word-term cache, so it clears it between runs
    ("bench/lexical_quick.py", "routing_core.scorers._terms", "word_terms"),
    # measures ingesting the very POST bodies the reporter sends
    ("bench/bench_traffic.py", "routing_core.reporting", "_bodies"),
    # measures each static table: chooses the one a build learns on (`_static.TABLE`), and
    # what the semantic view would do unasked (`_model.SEMANTIC_MIN_MISSES`)
    ("bench/bench_languages.py", "routing_core.scorers", "_static"),
    ("bench/bench_languages.py", "routing_core.scorers", "_model"),
    # times the keyword matcher against the regex alternation it replaced
    ("bench/bench_keywords.py", "routing_core.keywords", "KeywordGroups"),
    ("bench/bench_keywords.py", "routing_core.keywords", "KeywordMatcher"),
    ("bench/bench_keywords.py", "routing_core.text", "compile_keywords"),
    ("bench/bench_keywords.py", "routing_core.text", "keyword_pattern"),
}

# Names every module with postponed annotations and lazy imports has; not exports.
_PLUMBING = {"annotations", "TYPE_CHECKING", "Any"}


def test_the_exported_names_are_pinned() -> None:
    assert sorted(routing_core.__all__) == EXPORTED
    assert routing_core.__all__ == sorted(routing_core.__all__)


def test_every_exported_name_exists_and_is_documented() -> None:
    for name in routing_core.__all__:
        value = getattr(routing_core, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"routing_core.{name} has no docstring"
            assert value.__doc__ is not None, f"routing_core.{name} only inherits a docstring"
        else:  # a constant: the package docstring says what it is
            assert f"`{name}`" in (routing_core.__doc__ or ""), f"{name} is not documented"


def test_no_public_name_of_the_package_is_left_out_of_all() -> None:
    for name in routing_core.__all__:
        getattr(routing_core, name)  # the lazy ones too
    public = {
        name
        for name, value in vars(routing_core).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    }
    assert public - _PLUMBING == set(routing_core.__all__)


def test_the_public_modules_are_the_documented_ones() -> None:
    documented = set(re.findall(r"`(routing_core(?:\.(?!_)\w+)+)`", routing_core.__doc__ or ""))
    assert documented | {"routing_core"} == PUBLIC_MODULES
    for module in PUBLIC_MODULES:
        importlib.import_module(module)


def test_importing_routing_core_loads_neither_django_nor_what_only_building_needs() -> None:
    code = "import sys, routing_core; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.split())
    heavy = {"django", "scipy", "routing_core.build", "routing_core.scorers.lexical"}
    heavy |= {"routing_core.remote", "routing_core.reporting", "cryptography"}
    assert not heavy & loaded


def test_a_lazy_name_is_the_defining_module_s_own_object() -> None:
    from routing_core.build import build_pack
    from routing_core.remote import RemoteRouter

    assert routing_core.build_pack is build_pack
    assert routing_core.RemoteRouter is RemoteRouter
    assert "build_pack" in dir(routing_core)
    with pytest.raises(AttributeError, match="no attribute 'not_exported'"):
        routing_core.not_exported  # noqa: B018


def client_files(folder: Path) -> Iterator[Path]:
    """The Python files under `folder`: `*.py`, and scripts whose first line names python.

    Tests are left out wherever they live (the studio keeps each area's tests beside it):
    a test may look inside the engine to check what it explains.
    """
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or {"__pycache__", "tests"} & set(path.parts):
            continue
        if path.suffix == ".py":
            yield path
        elif not path.suffix:
            with path.open("rb") as handle:
                first = handle.readline()
            if first.startswith(b"#!") and b"python" in first:
                yield path


def off_surface(source: str, relative: str) -> Iterator[str]:
    """`file:line: what` for each routing_core import of the file that is not public."""
    for node in ast.walk(ast.parse(source, relative)):
        for module, name in _imported(node):
            if (relative, module, name) in BENCHMARKED_INTERNALS:
                continue
            why = _not_public(module, name)
            if why:
                yield f"{relative}:{node.lineno}: {why}"


def _imported(node: ast.AST) -> Iterator[tuple[str, str | None]]:
    """(module, name) pairs a node imports from routing_core; name None for `import m`."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == "routing_core":
                yield alias.name, None
    elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
        for alias in node.names if node.module.split(".")[0] == "routing_core" else ():
            yield node.module, alias.name


def _not_public(module: str, name: str | None) -> str | None:
    """Why `from module import name` (or `import module`) is not public, or None."""
    if name is not None and f"{module}.{name}" in PUBLIC_MODULES:
        return None
    if module not in PUBLIC_MODULES:
        what = module if name is None else f"{module}.{name}"
        return f"{what}: {module} is internal (see routing_core's docstring)"
    if name is None:
        return None
    exported = getattr(importlib.import_module(module), "__all__", None)
    if name.startswith("_") or (exported is not None and name not in exported):
        return f"{module}.{name} is not exported by {module}"
    return None


CLIENTS = ["studio", "bench", "scripts"]


@pytest.mark.parametrize("folder", CLIENTS)
def test_clients_import_routing_core_through_its_public_surface_only(folder: str) -> None:
    found = [
        line
        for path in client_files(ROOT / folder)
        for line in off_surface(path.read_text("utf-8"), path.relative_to(ROOT).as_posix())
    ]
    assert not found, "imports past routing_core's public surface:\n" + "\n".join(found)


def test_the_surface_check_names_each_import_past_it_with_its_line() -> None:
    source = "\n".join(
        [
            "from routing_core import Router, load_pack",
            "from routing_core.scorers import stored, RouteText",
            "def late():",
            "    from routing_core.codec import load_pack",
            "from routing_core.reporting import _bodies",
            "import routing_core.scorers._terms",
            "from routing_core.importers import not_in_all",
            "from routing_core.scorers._terms import word_terms",
        ]
    )
    found = sorted(off_surface(source, "bench/probe.py"))
    assert [line.split(": ")[0] for line in found] == [
        "bench/probe.py:4",
        "bench/probe.py:5",
        "bench/probe.py:6",
        "bench/probe.py:7",
        "bench/probe.py:8",
    ]
    assert "routing_core.codec is internal" in found[0]
    assert "routing_core.reporting._bodies is not exported" in found[1]
    # The one benchmark allowed to time the term cache, and only that one.
    assert not list(off_surface(source.splitlines()[-1], "bench/lexical_quick.py"))
