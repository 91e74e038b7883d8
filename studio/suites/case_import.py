"""Test cases in bulk: read pasted or uploaded CSV / JSONL, report bad rows by line, import, export.

Each row is checked by `routing_core.cases.case_from_mapping` (the CLI's own reader), so a file
the studio accepts is a file `routing-core eval` accepts. Column names are the JSONL keys: `text`
(or `message`), `expected` (or `expected_route`; blank = must be unmatched), `incumbent`,
`expected_verdict`, `expected_triage`, `expected_tools` (must keep), `exact_tools` (only
those), `dropped_tools` (must not keep), `conversation`, `turn`. In CSV, a tool cell is blank
(not checked), `[]` (no tool at all) or names separated by `;`, and `exact_tools` is `true` or
blank.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from django.db import transaction
from django.db.models import Max

from routing_core import case_from_mapping, unstorable_reason
from studio.models import Profile, TestCase
from studio.shared.audit import audit
from studio.suites.runs import suite_order

Format = Literal["auto", "csv", "jsonl"]
ALIASES = {"message": "text", "expected_route": "expected"}
MAX_CASES = 20_000
# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection, OWASP).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# The columns an import reads, in the order an export writes them.
CSV_COLUMNS = [
    "text",
    "expected",
    "incumbent",
    "expected_verdict",
    "expected_triage",
    "expected_tools",
    "exact_tools",
    "dropped_tools",
    "conversation",
    "turn",
]
COLUMNS = frozenset(CSV_COLUMNS)


@dataclass
class Parsed:
    """The good rows (TestCase field values) and one message per bad row, naming its line."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def parse_cases(text: str, fmt: Format = "auto") -> Parsed:
    """Read CSV or JSONL (`auto`: JSONL when the first non-blank line starts with `{`)."""
    if fmt == "auto":
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        fmt = "jsonl" if first.startswith("{") else "csv"
    parsed = _parse_jsonl(text) if fmt == "jsonl" else _parse_csv(text)
    if len(parsed.rows) > MAX_CASES:
        parsed.errors.insert(0, f"{len(parsed.rows)} cases: at most {MAX_CASES} at a time")
        parsed.rows = []
    return parsed


def _parse_jsonl(text: str) -> Parsed:
    parsed = Parsed()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            parsed.errors.append(f"line {number}: invalid JSON: {exc.msg}")
            continue
        _add(parsed, raw, number)
    return parsed


def _parse_csv(text: str) -> Parsed:
    parsed = Parsed()
    lines = text.splitlines(keepends=True)
    lead = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    # strict: a quote that opens a cell and never closes is an error, not the rest of the file
    reader = csv.DictReader(io.StringIO("".join(lines[lead:])), strict=True)
    header = [ALIASES.get(h.strip(), h.strip()) for h in reader.fieldnames or []]
    unknown = [h for h in header if h not in COLUMNS]
    if "text" not in header or unknown:
        extra = f"; unknown column(s): {', '.join(unknown)}" if unknown else ""
        parsed.errors.append(f"line {lead + 1}: the header needs a 'text' column{extra}")
        return parsed
    reader.fieldnames = header
    for raw, start in _rows(reader, parsed, lead):
        if None in raw:  # DictReader's key for cells past the header
            parsed.errors.append(f"line {start}: more cells than columns")
            continue
        if not any((v or "").strip() for v in raw.values() if isinstance(v, str)):
            continue
        row: dict[str, Any] = {
            k: _unneutralised((v or "").strip()) for k, v in raw.items() if k is not None
        }
        for key in ("expected_tools", "dropped_tools"):
            row[key] = _csv_tools(row[key]) if row.get(key) else None
        row["exact_tools"] = _csv_bool(row.get("exact_tools", ""))
        _add(parsed, row, start)
    return parsed


def _rows(
    reader: csv.DictReader[str], parsed: Parsed, lead: int
) -> Iterator[tuple[dict[str | Any, Any], int]]:
    """Each row with the line it starts on; a malformed row is reported there and skipped."""
    while True:
        start = lead + reader.line_num + 1
        try:
            raw = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            unclosed = "unexpected end of data" in str(exc)
            why = _csv_problem(str(exc))
            parsed.errors.append(f"line {start}: malformed row: {why}")
            if unclosed:
                return
            continue
        yield raw, start


def _csv_problem(error: str) -> str:
    """The csv module's complaint in words a person can act on."""
    if "unexpected end of data" in error:
        return 'a quote (") opens a cell that is never closed'
    if "expected after" in error:
        return 'text follows the quote (") that closes a cell: quote the whole cell'
    return error


def _csv_tools(cell: str) -> list[str] | str:
    if cell.startswith("["):
        try:
            value = json.loads(cell)
        except json.JSONDecodeError:
            return cell  # case_from_mapping names the line
        return value if isinstance(value, list) else cell
    return [name.strip() for name in cell.split(";") if name.strip()]


def _csv_bool(cell: str) -> bool | str:
    """`true`/`yes`/`1` or blank/`false`/`no`/`0`; anything else is left for the reader to name."""
    text = cell.lower()
    if text in ("true", "yes", "1"):
        return True
    return False if text in ("", "false", "no", "0") else cell


def _add(parsed: Parsed, raw: Any, number: int) -> None:
    if isinstance(raw, dict):
        raw = {ALIASES.get(k, k): v for k, v in raw.items()}
    try:
        case = case_from_mapping(raw, number)
        turn = _turn(raw.get("turn"), number)
    except ValueError as exc:
        parsed.errors.append(str(exc))
        return
    if not case.text.strip():
        parsed.errors.append(f"line {number}: the text is empty")
        return
    row = {
        "message": case.text,
        "expected_route": case.expected or "",
        "incumbent": case.incumbent or "",
        "expected_verdict": case.expected_verdict or "",
        "expected_triage": case.expected_triage or "",
        "expected_tools": list(case.expected_tools) if case.expected_tools is not None else None,
        "dropped_tools": list(case.dropped_tools) if case.dropped_tools else None,
        "exact_tools": case.exact_tools,
        "conversation": case.conversation or "",
        "turn": turn,
    }
    unstorable = _unstorable(row)
    if unstorable:
        parsed.errors.append(f"line {number}: {unstorable}")
        return
    parsed.rows.append(row)


# Row fields by the column names a person wrote in the file.
_COLUMN_OF = {"message": "text", "expected_route": "expected"}


def _unstorable(row: dict[str, Any]) -> str | None:
    """The first cell the database cannot store (routing_core's one rule), named by its column."""
    for key, value in row.items():
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and (reason := unstorable_reason(text)):
                return f"'{_COLUMN_OF.get(key, key)}' {reason}"
    return None


def _turn(value: Any, number: int) -> int:
    if value in (None, ""):
        return 0
    try:
        turn = int(value)
    except (TypeError, ValueError):
        turn = -1
    if turn < 0 or isinstance(value, bool | float):
        raise ValueError(f"line {number}: 'turn' is a whole number (0, 1, 2, …)")
    return turn


def import_cases(profile: Profile, rows: list[dict[str, Any]], *, user: Any) -> int:
    """Append the rows to the profile's test cases in one transaction, with one audit entry."""
    with transaction.atomic():
        top = TestCase.objects.filter(profile=profile).aggregate(top=Max("order"))["top"]
        start = 0 if top is None else top + 1
        by = user if user is not None and user.is_authenticated else None
        TestCase.objects.bulk_create(
            [
                TestCase(profile=profile, order=start + i, updated_by=by, **row)
                for i, row in enumerate(rows)
            ],
            batch_size=1000,
        )
        audit(user, profile, "testcase.import", profile, None, {"imported": len(rows)})
    return len(rows)


def export_jsonl(profile: Profile) -> str:
    """The profile's cases as JSONL in run order: the input `routing-core eval` reads."""
    return "".join(
        json.dumps(_row(c), ensure_ascii=False) + "\n"
        for c in suite_order(profile.test_cases.all())
    )


def _row(case: TestCase) -> dict[str, Any]:
    row: dict[str, Any] = {"text": case.message, "expected": case.expected_route or None}
    optional = {
        "incumbent": case.incumbent,
        "expected_verdict": case.expected_verdict,
        "expected_triage": case.expected_triage,
        "conversation": case.conversation,
    }
    row.update({k: v for k, v in optional.items() if v})
    if case.expected_tools is not None:
        row["expected_tools"] = case.expected_tools
    if case.exact_tools:
        row["exact_tools"] = True
    if case.dropped_tools:
        row["dropped_tools"] = case.dropped_tools
    if case.conversation:
        row["turn"] = case.turn
    return row


def export_csv(profile: Profile) -> str:
    """The profile's cases as CSV (the columns `parse_cases` reads), safe to open in a spreadsheet.

    A cell a spreadsheet would run as a formula gets a leading `'`; importing the file removes it
    again, so export then import gives back the same cases.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for case in suite_order(profile.test_cases.all()):
        row = _row(case)
        for key in ("expected_tools", "dropped_tools"):
            tools = row.get(key)
            row[key] = "" if tools is None else (";".join(tools) if tools else "[]")
        row["exact_tools"] = "true" if row.get("exact_tools") else ""
        writer.writerow([neutralised(str(row.get(c) or "")) for c in CSV_COLUMNS])
    return out.getvalue()


def neutralised(cell: str) -> str:
    """The cell with a leading `'` when a spreadsheet would read it as a formula."""
    quoted = cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS)
    return "'" + cell if cell.startswith(FORMULA_STARTS) or quoted else cell


def _unneutralised(cell: str) -> str:
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS) else cell
