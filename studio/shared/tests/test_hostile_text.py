"""NUL characters, lone surrogates and broken CSV quotes: a 422 that names the field or line.

Run on SQLite and on PostgreSQL; on PostgreSQL a NUL reaching the database was a `DataError`
and a lone surrogate a `UnicodeEncodeError` (500) before routing_core's one rule refused them.
"""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from studio.models import Profile
from studio.shared.packs import build_pack_dict
from studio.shared.tokens import create_api_token
from studio.suites.case_import import parse_cases

NUL, SURROGATE = "\x00", "\ud83d"


@pytest.fixture
def script(owner):
    _, secret = create_api_token(owner, "ci")
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


def pack_with(profile, where: str, text: str) -> dict:
    doc = build_pack_dict(profile)
    doc["profile"]["slug"] = "imported"
    if where == "profile.name":
        doc["profile"]["name"] = text
    else:
        doc["routes"][1]["examples"] = ["fine", text]
    return doc


@pytest.mark.parametrize(
    ("where", "bad", "path", "words"),
    [
        ("profile.name", f"Shop{NUL}", "profile.name", "NUL character"),
        ("example", f"where is {NUL} it", "routes[1].examples[1]", "NUL character"),
        ("profile.name", f"Shop {SURROGATE}", "profile.name", "unpaired surrogate"),
        ("example", f"parcel {SURROGATE}", "routes[1].examples[1]", "unpaired surrogate"),
    ],
)
def test_an_imported_pack_with_unstorable_text_is_a_422_naming_the_field(
    profile, script, where, bad, path, words
):
    response = script.post(
        "/api/imports", json.dumps(pack_with(profile, where, bad)), content_type="application/json"
    )
    assert response.status_code == 422
    errors = response.json()["errors"]
    assert [e[0] if isinstance(e, list) else e["path"] for e in errors] == [path]
    assert words in json.dumps(errors)
    assert not Profile.objects.filter(slug="imported").exists()


@pytest.mark.parametrize(
    ("name", "content", "line", "column"),
    [
        ("cases.csv", f"text,expected\nfine,billing\nwhere{NUL}is it,shipping\n", 3, "text"),
        ("cases.csv", f"text,expected\nfine,billing\nok,bill{NUL}ing\n", 3, "expected"),
        (
            "cases.jsonl",
            '{"text": "fine"}\n{"text": "parcel \\ud83d", "expected": "shipping"}\n',
            2,
            "text",
        ),
        ("cases.jsonl", '{"text": "hi", "conversation": "c\\u0000"}\n', 1, "conversation"),
    ],
)
def test_an_uploaded_case_file_with_unstorable_text_is_a_422_naming_the_line(
    profile, editor, client_for, name, content, line, column
):
    upload = SimpleUploadedFile(name, content.encode("utf-8", "surrogatepass"))
    response = client_for(editor).post(
        reverse("tests-import", args=[profile.slug]),
        {"upload": upload, "format": "auto"},
    )
    html = response.content.decode()
    assert response.status_code == 422
    assert f"line {line}: &#x27;{column}&#x27; contains" in html
    assert not profile.test_cases.exists()  # a preview stores nothing


def test_a_confirmed_import_keeps_the_good_rows_and_stores_no_bad_one(profile, editor, client_for):
    text = f"text,expected\nwhere is my parcel,shipping\nbad{NUL},billing\n"
    upload = SimpleUploadedFile("cases.csv", text.encode())  # a file skips the form's NUL check
    response = client_for(editor).post(
        reverse("tests-import", args=[profile.slug]),
        {"upload": upload, "format": "csv", "confirm": "yes"},
    )
    assert response.status_code == 302
    assert list(profile.test_cases.values_list("message", flat=True)) == ["where is my parcel"]


def test_an_unterminated_quote_is_a_malformed_row_with_its_line():
    parsed = parse_cases('text,expected\n"unterminated,billing\nx,y,z,w\n', "csv")
    assert parsed.rows == []
    assert parsed.errors == ['line 2: malformed row: a quote (") opens a cell that is never closed']


def test_a_quoted_cell_over_two_lines_is_still_one_case_and_later_lines_keep_their_numbers():
    parsed = parse_cases('text,expected\n"two\nlines",billing\nx,nowhere,extra\n', "csv")
    assert [r["message"] for r in parsed.rows] == ["two\nlines"]
    assert parsed.errors == ["line 4: more cells than columns"]


def test_text_after_a_closing_quote_is_a_malformed_row_and_the_next_rows_still_read():
    parsed = parse_cases('text,expected\n"ab"c,billing\nfine,billing\n', "csv")
    assert [r["message"] for r in parsed.rows] == ["fine"]
    assert parsed.errors == [
        'line 2: malformed row: text follows the quote (") that closes a cell: quote the whole cell'
    ]


def test_a_profile_with_one_very_long_word_publishes_diffs_lints_and_answers_the_playground(
    profile, owner, viewer, client_for
):
    from studio.publishing.versions import pack_diff, publish
    from studio.shared import drafts
    from studio.shared.packs import pack_report

    billing = profile.routes.get(name="billing")
    billing.examples = [*billing.examples, "a" * 2000]  # one word, at the field's limit
    billing.description = "b" * 8000
    billing.save()
    drafts.clear_cache()

    answer = client_for(viewer).post(
        "/api/profiles/shop/route", {"message": "a" * 2000}, content_type="application/json"
    )
    assert answer.status_code == 200 and answer.json()["decision"]["route"] == "billing"
    assert pack_report(profile).is_valid
    version = publish(profile, user=owner)
    assert pack_diff(profile, str(version.number), "draft") is not None
