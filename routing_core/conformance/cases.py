"""Writing the suite's files from the reference engine, and comparing a runtime's answers.

A case file is `{"suite", "pack", "checksum", "about", "cases": [...]}`; a case is a message,
its incumbent, its conversation and turn, and `expect`: the decision fields a runtime must
give (route, verdict, tier, menu, action, triage label, tools kept, and each route's score
and relevance, compared to `TOLERANCE`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from routing_core.codec import dump_pack, load_pack
from routing_core.conformance.suite import SPECS, Spec, Turn, spec_turns
from routing_core.decision import Decision
from routing_core.router import Router

SUITE = "route-conformance/1"
TOLERANCE = 1e-6
# The fields of `expect` compared exactly (every one but `ranked`).
EXACT_FIELDS = ("route", "verdict", "by", "offered", "action", "triage", "tools_kept")

# A runtime: (pack name, case) -> the observed fields, in the shape of `expect`.
Runtime = Callable[[str, Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class CaseFile:
    """One pack's cases as read from the suite."""

    name: str
    pack_path: Path
    checksum: str
    cases: list[dict[str, Any]]


def expected(decision: Decision) -> dict[str, Any]:
    """The compared fields of a decision, unrounded (the reference engine's `expect`)."""
    return {
        "route": decision.route,
        "verdict": decision.verdict,
        "by": decision.by,
        "offered": list(decision.offered),
        "action": decision.action.kind if decision.action else None,
        "triage": decision.triage.label if decision.triage else None,
        "tools_kept": list(decision.tools.kept),
        "ranked": [
            {"route": r.route, "score": _number(r.score), "relevance": _number(r.relevance)}
            for r in decision.ranked
        ],
    }


def from_event(body: Mapping[str, Any]) -> dict[str, Any]:
    """The compared fields of a server's answer (`POST /v1/route`, docs/server.md)."""
    action = body.get("action")
    triage = body.get("triage")
    return {
        "route": body.get("route"),
        "verdict": body.get("verdict"),
        "by": body.get("by"),
        "offered": body.get("offered"),
        "action": action.get("kind") if isinstance(action, dict) else None,
        "triage": triage.get("label") if isinstance(triage, dict) else None,
        "tools_kept": (body.get("tools") or {}).get("kept"),
        "ranked": (body.get("exact") or {}).get("ranked"),
    }


def differences(expect: Mapping[str, Any], got: Mapping[str, Any]) -> list[str]:
    """What `got` does not reproduce of `expect`, one line per field."""
    lines = [
        f"{name}: expected {expect.get(name)!r}, got {got.get(name)!r}"
        for name in EXACT_FIELDS
        if expect.get(name) != got.get(name)
    ]
    want = {r["route"]: r for r in expect.get("ranked") or []}
    have = {r.get("route"): r for r in got.get("ranked") or [] if isinstance(r, dict)}
    if set(want) != set(have):
        lines.append(f"ranked: routes {sorted(want)} expected, got {sorted(map(str, have))}")
        return lines
    for route, row in want.items():
        for key in ("score", "relevance"):
            if not _close(row[key], have[route].get(key)):
                lines.append(
                    f"ranked[{route}].{key}: expected {row[key]!r}, got {have[route].get(key)!r}"
                )
    return lines


def generate(directory: Path, only: set[str] | None = None) -> list[Path]:
    """Build each pack with the library, write it, route its turns on it, write its cases."""
    written = []
    for spec in SPECS:
        if only and spec.name not in only:
            continue
        pack_path = directory / "packs" / f"{spec.name}.json"
        pack_path.parent.mkdir(parents=True, exist_ok=True)
        pack_path.write_text(dump_pack(spec.build(), indent=None if spec.compact else 1) + "\n")
        # Expectations come from the pack as written: exactly what every runtime reads.
        router = Router(load_pack(pack_path.read_bytes()))
        cases = list(_cases(spec, router))
        document = {
            "suite": SUITE,
            "pack": f"packs/{spec.name}.json",
            "checksum": router.pack.checksum,
            "about": spec.about,
            "cases": cases,
        }
        case_path = directory / "cases" / f"{spec.name}.json"
        case_path.parent.mkdir(parents=True, exist_ok=True)
        case_path.write_text(_case_file_text(document))
        written += [pack_path, case_path]
    return written


def read_suite(directory: Path, only: set[str] | None = None) -> list[CaseFile]:
    """Every case file under `directory/cases` (or those named in `only`).

    Raises:
        ValueError: a missing or unreadable suite, or a name that is not in it.
    """
    paths = sorted((directory / "cases").glob("*.json"))
    if not paths:
        raise ValueError(f"no conformance cases in {directory / 'cases'}")
    files = []
    for path in paths:
        if only and path.stem not in only:
            continue
        document = json.loads(path.read_text(encoding="utf-8"))
        if document.get("suite") != SUITE:
            raise ValueError(f"{path}: not a {SUITE} file")
        files.append(
            CaseFile(
                path.stem, directory / document["pack"], document["checksum"], document["cases"]
            )
        )
    missing = (only or set()) - {f.name for f in files}
    if missing:
        raise ValueError(f"not in the suite: {', '.join(sorted(missing))}")
    return files


def check(files: list[CaseFile], runtime: Runtime) -> tuple[int, list[str]]:
    """Run every case on `runtime`; the number of cases run and one line per difference."""
    report: list[str] = []
    count = 0
    for case_file in files:
        for case in case_file.cases:
            count += 1
            got = runtime(case_file.name, case)
            for line in differences(case["expect"], got):
                report.append(f"{case['id']}: {line}")
    return count, report


def in_process(files: list[CaseFile]) -> Runtime:
    """This library as the runtime under test: a Router per pack file."""
    routers = {f.name: Router(load_pack(f.pack_path.read_bytes())) for f in files}
    for f in files:
        if routers[f.name].pack.checksum != f.checksum:
            raise ValueError(f"{f.pack_path}: its checksum is not the one its cases were made on")

    def run(name: str, case: Mapping[str, Any]) -> dict[str, Any]:
        return expected(routers[name].route(case["message"], case.get("incumbent")))

    return run


def _cases(spec: Spec, router: Router) -> Iterator[dict[str, Any]]:
    for i, turn in enumerate(spec_turns(spec)):
        yield _case(f"{spec.name}/{i:03d}", router, turn, None, None)
    for c, messages in enumerate(spec.conversations):
        incumbent: str | None = None
        for t, message in enumerate(messages):
            conversation = f"{spec.name}-conversation-{c}"
            case = _case(f"{conversation}/{t}", router, Turn(message, incumbent), conversation, t)
            # The next turn starts where this one landed (a menu or nothing: where it was).
            incumbent = case["expect"]["route"] or incumbent
            yield case


def _case(
    case_id: str, router: Router, turn: Turn, conversation: str | None, index: int | None
) -> dict[str, Any]:
    decision = router.route(turn.message, turn.incumbent)
    return {
        "id": case_id,
        "message": turn.message,
        "incumbent": turn.incumbent,
        "conversation": conversation,
        "turn": index,
        "expect": expected(decision),
    }


def _case_file_text(document: dict[str, Any]) -> str:
    """One case a line: a diff of a regenerated suite shows which cases changed."""
    head = {k: v for k, v in document.items() if k != "cases"}
    lines = [json.dumps(case, ensure_ascii=False) for case in document["cases"]]
    opening = json.dumps(head, indent=1, ensure_ascii=False)[:-2]
    return opening + ',\n "cases": [\n  ' + ",\n  ".join(lines) + "\n ]\n}\n"


def _number(value: float) -> float | str:
    """A score as stored: to 1e-9 (the check's tolerance is 1e-6), non-finite ones as text."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return round(value, 9)


def _close(want: Any, got: Any) -> bool:
    if isinstance(want, str) or isinstance(got, str):
        return bool(want == got)
    if not isinstance(got, int | float) or isinstance(got, bool):
        return False
    return bool(abs(float(want) - float(got)) <= TOLERANCE)
