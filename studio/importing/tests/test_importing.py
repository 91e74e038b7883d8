"""'Import from another tool': the upload is queued, a worker creates one audited profile.

The tests' job backend runs a job as it is queued, so a POST comes back with the job ended;
studio/importing/tests/test_import_jobs.py runs imports on a real worker process.
"""

from __future__ import annotations

import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from studio.importing.imports import execute_import
from studio.jobs import Cancelled
from studio.models import AuditEntry, ImportJob, Profile
from studio.shared.packs import build_pack
from tests.routing_core.importers.conftest import EXPORTS

URL = "/profiles/import/from/"


def _zip_of(folder) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def _es_upload() -> SimpleUploadedFile:
    return SimpleUploadedFile("hotel.zip", _zip_of(EXPORTS / "dialogflow_es"), "application/zip")


def _import(client, **fields):
    data = {"format": "dialogflow-es", "file": _es_upload(), **fields}
    return client.post(URL, data, follow=True)


def test_the_new_profile_card_offers_the_import(editor, client_for):
    html = client_for(editor).get("/profiles/").content.decode()
    assert 'href="/profiles/import/from/"' in html


def test_the_upload_answers_with_the_jobs_page(editor, client_for):
    response = client_for(editor).post(URL, {"format": "dialogflow-es", "file": _es_upload()})
    job = ImportJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/profiles/import/jobs/{job.pk}/"


def test_the_job_creates_the_profile_with_its_routes_and_audits_the_report(editor, client_for):
    response = _import(client_for(editor), slug="hotel", name="Front desk")
    html = response.content.decode()
    assert 'Created\n      <a href="/profiles/hotel/"' in html
    assert "with 3 routes and 2 out-of-scope examples from the import." in html
    assert "8 examples" in html
    assert "spa.hours" in html and "no examples: an empty intent" in html
    assert (
        "2 examples of what the agent must not take became the profile's out-of-scope "
        "examples, so that messages like them go to no route (what is the capital of France; "
        "tell me a joke)" in html
    )
    profile = Profile.objects.get(slug="hotel")
    assert profile.name == "Front desk"
    # the fallback intent's phrases are the profile's out-of-scope examples, and its pack's
    assert profile.out_of_scope == ["what is the capital of France", "tell me a joke"]
    assert build_pack(profile).out_of_scope == ("what is the capital of France", "tell me a joke")
    routes = list(profile.routes.order_by("order"))
    assert [r.name for r in routes] == ["default_welcome_intent", "checkout-late", "room_book"]
    assert routes[2].keywords == ["double", "double bed", "twin", "suite", "junior suite"]
    entry = AuditEntry.objects.get(profile=profile, action="profile.import-from")
    assert entry.username == "editor"
    assert entry.after["out_of_scope"] == ["what is the capital of France", "tell me a joke"]
    assert "intent 'spa.hours': no examples: an empty intent" in entry.after["left out"]
    assert AuditEntry.objects.filter(profile=profile, action="profile.import").exists()
    job = ImportJob.objects.get()
    assert job.status == "done" and job.profile == profile
    assert bytes(job.upload) == b""  # the upload is kept only until the job ends


def test_a_taken_slug_is_refused_and_nothing_half_made(profile, editor, client_for):
    Profile.objects.create(slug="hotel", name="Someone else's")
    response = _import(client_for(editor), slug="hotel")
    html = response.content.decode()
    assert response.status_code == 422
    assert "a profile &#x27;hotel&#x27; exists already: choose another slug" in html
    assert Profile.objects.get(slug="hotel").routes.count() == 0


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"format": "rasa", "file": SimpleUploadedFile("nlu.yml", b"nlu: [\n")},
            "nlu.yml: not valid YAML",
        ),
        (
            {"format": "dialogflow-cx", "file": SimpleUploadedFile("x.zip", b"PK\x03\x04junk")},
            "x.zip: not a zip file",
        ),
        (
            {"format": "dialogflow-es", "file": SimpleUploadedFile("notes.txt", b"hello")},
            "agent.json: not found: this is not a Dialogflow ES agent export",
        ),
    ],
)
def test_a_bad_file_gives_a_clear_error_and_keeps_what_was_typed(
    editor, client_for, fields, message
):
    client = client_for(editor)
    response = client.post(URL, {**fields, "slug": "keep-me", "name": "Kept"}, follow=True)
    html = response.content.decode()
    assert "Nothing was imported" in html and message in html
    assert not Profile.objects.exists()
    job = ImportJob.objects.get()
    assert job.status == "failed" and bytes(job.upload) == fields["file"].open().read()
    again = client.get(f"{URL}?again={job.pk}").content.decode()
    assert f'href="{URL}?again={job.pk}"' in html
    assert 'value="keep-me"' in again and 'value="Kept"' in again
    assert f'value="{fields["format"]}" selected' in again


def test_an_unknown_language_names_the_languages_there_are(editor, client_for):
    response = _import(client_for(editor), language="fr")
    assert "the agent has no &#x27;fr&#x27; examples; it has: de, en" in response.content.decode()


def test_an_oversized_upload_is_refused_before_it_is_stored(editor, client_for, monkeypatch):
    monkeypatch.setattr("studio.importing.packs.MAX_IMPORT_BYTES", 2048)
    monkeypatch.setattr("studio.importing.views.MAX_IMPORT_BYTES", 2048)
    response = _import(client_for(editor))
    assert response.status_code == 422
    assert "file: the file is larger than the 2 KB import limit" in response.content.decode()
    assert not Profile.objects.exists() and not ImportJob.objects.exists()


def test_viewers_cannot_import_and_anonymous_people_are_sent_to_sign_in(viewer, client_for):
    assert client_for(viewer).get(URL).status_code == 403
    assert client_for(viewer).post(URL, {"format": "rasa"}).status_code == 403
    response = client_for(None).get(URL)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_form_needs_a_csrf_token(editor):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    response = client.post(URL, {"format": "dialogflow-es", "file": _es_upload()})
    assert response.status_code == 403
    assert not Profile.objects.exists() and not ImportJob.objects.exists()


def test_a_lex_bot_in_another_locale_can_be_imported(editor, client_for):
    client = client_for(editor)
    upload = SimpleUploadedFile("HotelBot.zip", _zip_of(EXPORTS / "lex_v2"), "application/zip")
    data = {"format": "lex-v2", "file": upload, "language": "es_US"}
    response = client.post(URL, data, follow=True)
    assert "in the language <code>es_US</code>" in response.content.decode()
    profile = Profile.objects.get(slug="hotel_bot")
    assert [r.examples for r in profile.routes.all()] == [
        ["quiero reservar una habitación", "reserva un cuarto"]
    ]


def test_a_queued_import_shows_its_wait_polls_and_can_be_cancelled(editor, client_for, settings):
    from tests.job_worker import DATABASE

    settings.TASKS = DATABASE  # queued for a worker, of which none runs here
    client = client_for(editor)
    response = client.post(URL, {"format": "dialogflow-es", "file": _es_upload()}, follow=True)
    job = ImportJob.objects.get()
    page = response.content.decode()
    assert job.status == "queued" and bytes(job.upload)  # kept for the worker
    assert "Waiting for a worker to pick it up" in page
    assert f'hx-get="/profiles/import/jobs/{job.pk}/" hx-trigger="every 1s"' in page

    fragment = client.get(f"/profiles/import/jobs/{job.pk}/", HTTP_HX_REQUEST="true")
    assert fragment.content.decode().lstrip().startswith('<section id="import-job"')

    cancelled = client.post(f"/profiles/import/jobs/{job.pk}/cancel/", HTTP_HX_REQUEST="true")
    assert "Cancelled: nothing was imported." in cancelled.content.decode()
    job.refresh_from_db()
    assert job.status == "cancelled" and bytes(job.upload) == b""
    assert not Profile.objects.exists()


def test_a_cancel_asked_for_while_the_export_is_parsed_stops_the_parse(editor):
    # routing_core's importers ask `cancelled()` while they read: a large export no longer
    # runs to its end after "Cancel" (the job's progress is only written between steps).
    job = ImportJob.objects.create(
        format="dialogflow-es",
        filename="hotel.zip",
        upload=_zip_of(EXPORTS / "dialogflow_es"),
        started_by=editor,
        status="running",
        cancel_requested=True,
        total=3,
    )
    with pytest.raises(Cancelled):
        execute_import(job, lambda done, total: None)
    assert not Profile.objects.exists()
    job.refresh_from_db()
    assert bytes(job.upload) == b""


RASA = b"""version: "3.1"
nlu:
- intent: greet
  examples: |
    - hello there
    - good morning
- intent: baggage
  examples: |
    - my bag is lost
    - how many bags can I take
    - my bag is lost
"""


def _rasa(client, **fields):
    upload = SimpleUploadedFile("nlu.yml", RASA, "application/yaml")
    return client.post(URL, {"format": "rasa", "file": upload, **fields}, follow=True)


def test_import_notes_count_from_one_in_words(editor, client_for):
    html = _rasa(client_for(editor)).content.decode()

    # The repeat is the 3rd example of the 2nd intent.
    assert "nlu.yml, nlu entry 2 → example 3: repeats an example of &#x27;baggage&#x27;" in html
    assert "nlu[1]" not in html and "examples[2]" not in html


def test_a_file_with_no_rasa_yaml_says_so_in_a_sentence(editor, client_for):
    upload = SimpleUploadedFile("notes.zip", _zip_of(EXPORTS / "dialogflow_es"), "application/zip")
    html = client_for(editor).post(URL, {"format": "rasa", "file": upload}, follow=True)
    text = html.content.decode()

    assert "<li>No Rasa YAML file (.yml) was found</li>" in text
    assert "$:" not in text


def test_a_rasa_file_without_a_name_is_named_for_where_it_came_from(editor, client_for):
    _rasa(client_for(editor))

    profile = Profile.objects.get()
    assert profile.name == "Rasa import (nlu.yml)" and profile.slug == "rasa_nlu"


def test_a_taken_slug_is_refused_on_the_form_before_any_job_is_queued(profile, editor, client_for):
    response = _rasa(client_for(editor), slug="shop", name="Airline")
    html = response.content.decode()

    assert response.status_code == 422
    assert not ImportJob.objects.exclude(status="failed").exists()  # nothing queued
    assert "a profile &#x27;shop&#x27; exists already: choose another slug" in html
    assert 'value="Airline"' in html and 'value="rasa" selected' in html
