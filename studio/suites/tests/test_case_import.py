"""Bulk import of test cases: CSV and JSONL, bad rows by line number, good rows only on confirm."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from studio.models import AuditEntry
from studio.suites.case_import import export_csv, export_jsonl, import_cases, parse_cases

GOOD_CSV = """text,expected,incumbent,expected_tools,conversation,turn
where is my parcel,shipping,,,,
"download my invoice, please",billing,shipping,hydrate_context;refund_order,c1,1
the meaning of life,,,[],,
"""

BAD_CSV = """text,expected,expected_verdict
where is my parcel,shipping,move
download my invoice,billing,jump
,billing,
the meaning of life,,
"""

JSONL = "\n".join(
    [
        json.dumps({"text": "where is my parcel", "expected": "shipping"}),
        "",
        '{"text": "broken',
        json.dumps({"text": "hi", "expected": 3}),
        json.dumps(
            {"message": "the meaning of life", "expected": None, "turn": 2, "conversation": "c"}
        ),
    ]
)


def test_csv_rows_become_test_case_fields():
    parsed = parse_cases(GOOD_CSV)

    assert parsed.errors == []
    assert parsed.rows[1] == {
        "message": "download my invoice, please",
        "expected_route": "billing",
        "incumbent": "shipping",
        "expected_verdict": "",
        "expected_triage": "",
        "expected_tools": ["hydrate_context", "refund_order"],
        "exact_tools": False,
        "dropped_tools": None,
        "conversation": "c1",
        "turn": 1,
    }
    assert parsed.rows[2]["expected_route"] == "" and parsed.rows[2]["expected_tools"] == []
    assert parsed.rows[0]["expected_tools"] is None


def test_bad_csv_rows_are_reported_by_line_number():
    parsed = parse_cases(BAD_CSV)

    assert parsed.errors == [
        "line 3: 'expected_verdict' is one of move, stay, menu, unmatched",
        "line 4: the text is empty",
    ]
    assert [r["message"] for r in parsed.rows] == ["where is my parcel", "the meaning of life"]


def test_bad_jsonl_lines_are_reported_by_line_number():
    parsed = parse_cases(JSONL)

    assert parsed.errors[0].startswith("line 3: invalid JSON")
    assert parsed.errors[1] == "line 4: 'expected' is a route name or null"
    assert [(r["message"], r["turn"]) for r in parsed.rows] == [
        ("where is my parcel", 0),
        ("the meaning of life", 2),
    ]


def test_a_csv_row_with_more_cells_than_columns_is_a_bad_row():
    assert parse_cases("text,expected\nhi,billing,extra\n").errors == [
        "line 2: more cells than columns"
    ]


def test_a_csv_without_a_text_column_is_refused_at_line_one():
    assert parse_cases("msg,expected\nhi,billing\n", "csv").errors == [
        "line 1: the header needs a 'text' column; unknown column(s): msg"
    ]


@pytest.mark.parametrize("turn", ["-1", "two", "1.5"])
def test_a_turn_is_a_whole_number(turn):
    parsed = parse_cases(f"text,turn\nhi,{turn}\n")

    assert parsed.errors == ["line 2: 'turn' is a whole number (0, 1, 2, …)"]


def test_a_clean_paste_is_imported_at_once(profile, editor, client_for):
    response = client_for(editor).post(
        reverse("tests-import", args=[profile.slug]), {"text": GOOD_CSV, "format": "auto"}
    )

    assert response.status_code == 302
    assert profile.test_cases.count() == 3
    assert AuditEntry.objects.get(action="testcase.import").after == {"imported": 3}


def test_bad_rows_are_previewed_and_nothing_is_saved_until_confirmed(profile, editor, client_for):
    client = client_for(editor)
    url = reverse("tests-import", args=[profile.slug])

    preview = client.post(url, {"text": BAD_CSV, "format": "csv"})
    html = preview.content.decode()

    assert preview.status_code == 422
    assert "line 3: &#x27;expected_verdict&#x27; is one of" in html
    assert "line 4: the text is empty" in html
    assert 'data-testid="confirm-import"' in html and "Import 2 good rows" in html
    assert not profile.test_cases.exists()

    confirmed = client.post(url, {"text": BAD_CSV, "format": "csv", "confirm": "yes"})

    assert confirmed.status_code == 302
    assert sorted(profile.test_cases.values_list("message", flat=True)) == [
        "the meaning of life",
        "where is my parcel",
    ]


def test_the_preview_keeps_the_text_so_line_numbers_survive_the_round_trip(
    profile, editor, client_for
):
    text = "\n" + BAD_CSV  # a leading blank line: the browser drops one newline after <textarea>
    html = (
        client_for(editor)
        .post(reverse("tests-import", args=[profile.slug]), {"text": text, "format": "csv"})
        .content.decode()
    )

    assert '<textarea name="text" hidden>\n\ntext,expected' in html
    assert "line 4: &#x27;expected_verdict&#x27; is one of" in html


def test_an_uploaded_jsonl_file_is_imported(profile, editor, client_for):
    upload = SimpleUploadedFile("cases.jsonl", JSONL.encode(), content_type="application/x-ndjson")

    response = client_for(editor).post(
        reverse("tests-import", args=[profile.slug]),
        {"upload": upload, "format": "auto", "confirm": "yes"},
    )

    assert response.status_code == 302
    assert profile.test_cases.count() == 2


def test_an_empty_import_is_refused(profile, editor, client_for):
    response = client_for(editor).post(reverse("tests-import", args=[profile.slug]), {"text": " "})

    assert response.status_code == 422 and "Paste some cases" in response.content.decode()


def test_export_gives_back_what_was_imported(profile, editor, client_for):
    client_for(editor).post(reverse("tests-import", args=[profile.slug]), {"text": GOOD_CSV})

    lines = [json.loads(line) for line in export_jsonl(profile).splitlines()]

    assert lines[0] == {"text": "where is my parcel", "expected": "shipping"}
    assert lines[1]["expected_tools"] == ["hydrate_context", "refund_order"]
    assert lines[1]["conversation"] == "c1" and lines[1]["turn"] == 1
    assert lines[2] == {"text": "the meaning of life", "expected": None, "expected_tools": []}


TOOLS_CSV = """text,expected,expected_tools,exact_tools,dropped_tools
refund it,refunds,refund_order,,cancel_order;track_shipment
only the refund,refunds,refund_order,true,
"""


def test_must_keep_must_drop_and_exact_tools_survive_csv_and_jsonl(profile, editor):
    parsed = parse_cases(TOOLS_CSV)
    assert parsed.errors == []
    import_cases(profile, parsed.rows, user=editor)

    keep, exact = profile.test_cases.order_by("order")
    lines = [json.loads(line) for line in export_jsonl(profile).splitlines()]
    again = parse_cases(export_csv(profile)).rows

    assert (keep.expected_tools, keep.exact_tools, keep.dropped_tools) == (
        ["refund_order"],
        False,
        ["cancel_order", "track_shipment"],
    )
    assert (exact.exact_tools, exact.dropped_tools) == (True, None)
    assert lines[0]["dropped_tools"] == ["cancel_order", "track_shipment"]
    assert "exact_tools" not in lines[0] and lines[1]["exact_tools"] is True
    assert [(r["expected_tools"], r["exact_tools"], r["dropped_tools"]) for r in again] == [
        (["refund_order"], False, ["cancel_order", "track_shipment"]),
        (["refund_order"], True, None),
    ]


def test_a_bad_exact_tools_cell_is_named_by_line():
    parsed = parse_cases("text,exact_tools\nhi,maybe\n")

    assert parsed.errors == ["line 2: 'exact_tools' is true or false"]
