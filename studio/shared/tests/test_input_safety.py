"""Hostile input: markup in every text field, invalid Unicode, oversized fields, CSV injection,
path tricks in uploads. Nothing is executed, stored broken, or refused without a clear reason."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from routing_core import MAX_ITEMS, MAX_MESSAGE_CHARS, MAX_ROUTES, Router
from studio.agents.events import EventBatchIn, ingest
from studio.models import Event, ImportJob, Profile, ReplayRun, Route, Rule, TestCase, Tool
from studio.publishing.rollouts import Conditions, start_rollout
from studio.publishing.versions import promote, publish
from studio.shared.packs import build_pack, build_pack_dict
from studio.shared.tests.test_access_matrix import PAGES, World, _kwargs
from studio.shared.tokens import create_api_token, create_read_token
from studio.suites.case_import import export_csv, parse_cases
from studio.suites.runs import start_run
from studio.traffic.replays import start_replay

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
PAYLOADS = (SCRIPT, IMG, "<img src=x onerror=alert(1)>")


@pytest.fixture
def hostile(profile: Profile, owner: Any) -> World:
    """The small profile with markup in every text field a person can fill in."""
    Profile.objects.filter(pk=profile.pk).update(
        name=f"Shop {SCRIPT}", description=IMG, question_pattern=r"<script>alert\(1\)</script>"
    )
    Route.objects.filter(profile=profile, name="billing").update(
        description=f"invoices {SCRIPT}",
        examples=[f"invoice {SCRIPT}", f"charged twice {IMG}"],
        keywords=[SCRIPT],
        never=[IMG],
    )
    Route.objects.filter(profile=profile, name="human").update(stuck_message=SCRIPT)
    Rule.objects.filter(profile=profile).update(keywords=["real person", SCRIPT])
    Tool.objects.filter(profile=profile, name="refund_order").update(
        description=SCRIPT, trigger_keywords=["refund", IMG]
    )
    TestCase.objects.create(
        profile=profile, message=f"hello {SCRIPT}", expected_route="human", conversation=IMG
    )
    profile.refresh_from_db()
    version = publish(profile, user=owner, note=f"release {SCRIPT} {IMG}")
    promote(version, "production", user=owner)
    candidate = publish(profile, user=owner, note=f"candidate {IMG}", environment=None)
    rollout = start_rollout(
        profile, "production", candidate, mode="shadow", share=0, conditions=Conditions(),
        user=owner,
    )  # fmt: skip
    # The draft moves on, so the diff shows old and new markup side by side.
    Route.objects.filter(profile=profile, name="billing").update(description=f"changed {IMG}")
    Profile.objects.filter(pk=profile.pk).update(draft_revision=99)
    create_read_token(profile, SCRIPT, user=owner)
    create_api_token(owner, IMG)
    start_run(profile, user=owner)
    event, replay = _hostile_traffic(profile, owner)
    route = profile.routes.get(name="billing")
    imported = ImportJob.objects.create(
        format="rasa",
        filename=f"nlu {SCRIPT}.yml",
        status="failed",
        started_by=owner,
        problems=[[f"intent {IMG}", f"no examples {SCRIPT}"]],
        slug="x",
        name=SCRIPT,
    )
    ids = {
        "import": imported.pk,
        "event": event.pk,
        "replay": replay.pk,
        "route": route.pk,
        "rule": profile.rules.get().pk,
        "tool": profile.tools.get(name="refund_order").pk,
        "case": profile.test_cases.get().pk,
        "run": profile.test_runs.get().pk,
        "version": version.number,
        "audit": 1,
        "candidate": candidate.number,
        "rollout": rollout.pk,
    }
    return World(profile, profile, {"admin": owner}, ids)


def _hostile_traffic(profile: Profile, owner: Any) -> tuple[Event, ReplayRun]:
    """A reported turn, an agent and a replay, each with markup where an agent controls text."""
    _, secret = create_read_token(profile, IMG, user=owner)
    Client().get(
        "/api/profiles/shop/packs/production",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
        HTTP_USER_AGENT=f"routing-core/{SCRIPT} python/3.12",
    )
    event = Router(build_pack(profile)).route("real person").to_event()
    event.update(verdict="unmatched", route=None, by="none")
    record = {"message": f"real person {SCRIPT}", "conversation": IMG, "event": event}
    ingest(profile, EventBatchIn.model_validate({"events": [record]}))
    return Event.objects.get(profile=profile), start_replay(profile, "draft", user=owner)


def _assert_escaped(response: Any, where: str) -> None:
    assert response.status_code < 500, where
    if response.get("Content-Type", "").startswith("text/html"):
        body = response.content.decode()
        for payload in PAYLOADS:
            assert payload not in body, where


def test_markup_in_every_text_field_is_escaped_on_every_page(hostile, client_for):
    client = client_for(hostile.users["admin"])
    shown = 0
    for name, calls in PAGES.items():
        if not any(c.method == "get" for c in calls) or name in {"logout", "audit-restore"}:
            continue
        url = reverse(name, kwargs=_kwargs(name, hostile, hostile.profile.slug))
        for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
            response = client.get(url, **headers)
            _assert_escaped(response, f"{name} {headers}")
            shown += "&lt;script&gt;alert(1)&lt;/script&gt;" in response.content.decode()
    assert shown > 10  # the markup is shown, as text, on most pages


def test_markup_is_escaped_in_the_playgrounds_highlighted_evidence_and_transcript(
    hostile, client_for
):
    client = client_for(hostile.users["admin"])
    url = reverse("playground", args=[hostile.profile.slug])
    message = f"hi {SCRIPT} {IMG}"

    for action in ("check", "send"):
        for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
            response = client.post(url, {"message": message, "action": action}, **headers)
            _assert_escaped(response, f"{action} {headers}")
    checked = client.post(url, {"message": message, "action": "check"})

    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in checked.content.decode()
    assert checked.context["outcome"].decision.by == "rule"  # the evidence is the markup


def test_markup_is_escaped_in_the_diff_and_the_publish_review(hostile, client_for):
    client = client_for(hostile.users["admin"])
    slug = hostile.profile.slug

    diff = client.get(reverse("diff", args=[slug]), {"old": "1", "new": "draft"})
    review = client.get(reverse("publish", args=[slug]))

    for response in (diff, review):
        _assert_escaped(response, response.request["PATH_INFO"])
        assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in response.content.decode()


# -- invalid Unicode and oversized fields -----------------------------------------------------------


def _api(owner: Any) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {create_api_token(owner, 'input')[1]}")


@pytest.mark.parametrize(
    "field, raw",
    [
        ("description", '"a\\u0000b"'),
        ("description", '"lone \\ud800 surrogate"'),
        ("examples", '["fine", "bad \\udfff"]'),
        ("name", '"nul\\u0000"'),
    ],
)
def test_the_api_refuses_nul_and_lone_surrogates_in_text_with_a_422(profile, owner, field, raw):
    body = f'{{"name": {raw}}}' if field == "name" else f'{{"name": "fresh", "{field}": {raw}}}'

    response = _api(owner).post(
        f"/api/profiles/{profile.slug}/routes", body, content_type="application/json"
    )

    assert response.status_code == 422
    assert field in json.dumps(response.json()["errors"])
    assert profile.routes.count() == 3


def test_a_form_refuses_a_nul_character_and_keeps_what_was_typed(profile, editor, client_for):
    response = client_for(editor).post(
        reverse("routes-add", args=[profile.slug]),
        {"name": "new\x00route", "description": "typed by hand"},
    )

    assert response.status_code == 422
    assert "typed by hand" in response.content.decode()
    assert "Null characters are not allowed" in response.content.decode()
    assert profile.routes.count() == 3


def test_the_route_endpoint_refuses_a_message_over_the_limit_naming_it(profile, owner):
    body = {"message": "x" * (MAX_MESSAGE_CHARS + 1)}

    response = _api(owner).post(
        f"/api/profiles/{profile.slug}/route", body, content_type="application/json"
    )

    assert response.status_code == 422
    [error] = response.json()["errors"]
    assert error["path"].endswith("message") and str(MAX_MESSAGE_CHARS) in error["message"]


def test_the_playground_page_says_a_message_is_too_long_and_keeps_it(profile, viewer, client_for):
    typed = "refund " * (MAX_MESSAGE_CHARS // 7 + 1)

    response = client_for(viewer).post(
        reverse("playground", args=[profile.slug]), {"message": typed, "action": "check"}
    )

    page = response.content.decode()
    assert 'data-testid="message-error"' in page and str(MAX_MESSAGE_CHARS) in page
    assert typed.strip() in page
    assert response.context["outcome"] is None if "outcome" in response.context else True


def test_a_route_with_more_examples_than_a_pack_allows_is_refused_naming_the_limit(profile, owner):
    body = {"name": "crowded", "examples": [f"example {i}" for i in range(MAX_ITEMS + 1)]}

    response = _api(owner).post(
        f"/api/profiles/{profile.slug}/routes", body, content_type="application/json"
    )

    assert response.status_code == 422
    assert str(MAX_ITEMS) in json.dumps(response.json())
    assert not profile.routes.filter(name="crowded").exists()


def test_a_profile_at_the_route_limit_refuses_one_more_naming_the_limit(profile, owner):
    Route.objects.bulk_create(
        Route(profile=profile, name=f"r{i}", order=10 + i) for i in range(MAX_ROUTES - 3)
    )

    response = _api(owner).post(
        f"/api/profiles/{profile.slug}/routes",
        {"name": "one_more"},
        content_type="application/json",
    )

    assert response.status_code == 422
    assert str(MAX_ROUTES) in json.dumps(response.json())
    assert profile.routes.count() == MAX_ROUTES


def test_an_api_body_over_the_upload_limit_is_a_413_in_the_error_shape(profile, owner, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    pack = build_pack_dict(profile)
    pack["description"] = "x" * 20_000

    response = _api(owner).post(
        f"/api/profiles/{profile.slug}/import", pack, content_type="application/json"
    )

    assert response.status_code == 413
    assert response.json() == {
        "detail": "the request body is larger than the 9 KB limit",
        "errors": [],
    }


def test_a_test_case_file_over_the_upload_limit_is_refused_with_a_clear_error(
    profile, editor, client_for, settings
):
    settings.STUDIO_MAX_IMPORT_BYTES = 1024
    upload = SimpleUploadedFile("cases.csv", b"text,expected\n" + b"hello,billing\n" * 200)

    response = client_for(editor).post(
        reverse("tests-import", args=[profile.slug]), {"upload": upload, "format": "auto"}
    )

    assert response.status_code == 422
    assert "The file is larger than the 1 KB limit." in response.content.decode()
    assert profile.test_cases.count() == 0


# -- CSV injection and path tricks ------------------------------------------------------------------

FORMULAS = ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "\tpadded", "'=quoted"]


def test_the_csv_export_neutralises_every_cell_a_spreadsheet_would_run(profile):
    for i, text in enumerate(FORMULAS):
        TestCase.objects.create(profile=profile, message=text, order=i, conversation="=cmd|x")

    rows = list(csv.reader(io.StringIO(export_csv(profile))))

    cells = [cell for row in rows[1:] for cell in row if cell]
    assert cells and all(not cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in cells)
    assert rows[1][0] == '\'=HYPERLINK("http://x")' and rows[-1][0] == "''=quoted"


def test_a_csv_export_imports_back_to_the_same_cases(profile):
    for i, text in enumerate([*FORMULAS[:4], "plain text, with a comma"]):
        TestCase.objects.create(
            profile=profile, message=text, order=i, expected_route="billing", expected_tools=[]
        )

    parsed = parse_cases(export_csv(profile), "csv")

    assert parsed.errors == []
    assert [row["message"] for row in parsed.rows] == [*FORMULAS[:4], "plain text, with a comma"]
    assert {row["expected_tools"] == [] for row in parsed.rows} == {True}


def test_the_csv_download_is_an_attachment_named_after_the_profile(profile, viewer, client_for):
    response = client_for(viewer).get(reverse("tests-export-csv", args=[profile.slug]))

    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="shop-cases.csv"'


@pytest.mark.parametrize("name", ["../../etc/passwd", "..\\..\\evil.json", "/tmp/evil.json"])
def test_an_uploaded_files_name_is_never_used_as_a_path(profile, owner, client_for, name, tmp_path):
    pack = json.dumps(build_pack_dict(profile)).encode()
    before = set(Path("/tmp").iterdir())
    client = client_for(owner)

    pack_import = client.post(
        reverse("import-draft", args=[profile.slug]), {"file": SimpleUploadedFile(name, pack)}
    )
    cases_import = client.post(
        reverse("tests-import", args=[profile.slug]),
        {"upload": SimpleUploadedFile(name, b"text,expected\nhello,billing\n"), "format": "auto"},
    )

    assert (pack_import.status_code, cases_import.status_code) == (302, 302)
    assert profile.test_cases.get().message == "hello"
    assert not any(
        "evil" in p.name or p.name == "passwd" for p in set(Path("/tmp").iterdir()) - before
    )
