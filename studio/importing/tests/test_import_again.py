"""A refused import keeps its file: trying again with another format, slug or language does
not mean choosing the file again (docs/users/importing.md)."""

from __future__ import annotations

from datetime import timedelta

from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from studio.importing.tests.test_importing import RASA, URL
from studio.models import ImportJob, Profile
from studio.shared.roles import grant


def _upload() -> SimpleUploadedFile:
    return SimpleUploadedFile("nlu.yml", RASA, "application/yaml")


def test_after_a_failed_job_the_same_file_is_imported_with_the_format_corrected(editor, client_for):
    client = client_for(editor)
    # The wrong tool chosen: the job fails on the file's contents.
    client.post(URL, {"format": "dialogflow-es", "file": _upload(), "slug": "air"}, follow=True)
    failed = ImportJob.objects.get()
    assert failed.status == "failed" and not Profile.objects.exists()

    form = client.get(f"{URL}?again={failed.pk}").content.decode()
    assert 'data-testid="kept-file"' in form and "<strong>nlu.yml</strong>" in form
    assert f'name="again" value="{failed.pk}"' in form

    response = client.post(URL, {"format": "rasa", "slug": "air", "again": failed.pk}, follow=True)

    profile = Profile.objects.get(slug="air")
    assert sorted(profile.routes.values_list("name", flat=True)) == ["baggage", "greet"]
    assert response.status_code == 200
    failed.refresh_from_db()
    assert bytes(failed.upload) == b""  # used once, not kept twice


def test_a_slug_refused_on_the_form_keeps_the_file_for_the_next_press(profile, editor, client_for):
    client = client_for(editor)
    refused = client.post(URL, {"format": "rasa", "file": _upload(), "slug": profile.slug})
    html = refused.content.decode()
    assert refused.status_code == 422
    assert 'data-testid="kept-file"' in html and "<strong>nlu.yml</strong>" in html
    kept = ImportJob.objects.get(status="failed")

    again = client.post(URL, {"format": "rasa", "slug": "airline", "again": kept.pk}, follow=True)

    assert again.status_code == 200
    assert Profile.objects.get(slug="airline").routes.count() == 2


def test_another_persons_kept_file_is_not_offered(editor, django_user_model, client_for):
    client_for(editor).post(URL, {"format": "dialogflow-es", "file": _upload()}, follow=True)
    theirs = ImportJob.objects.get()
    other_editor = django_user_model.objects.create_user("maria", password="pw")
    grant(other_editor, "editor")

    response = client_for(other_editor).post(URL, {"format": "rasa", "again": theirs.pk})

    assert response.status_code == 422
    assert "choose the export file" in response.content.decode()
    assert not Profile.objects.exists()


def test_a_kept_file_waits_a_day_then_is_emptied(editor, client_for):
    client = client_for(editor)
    client.post(URL, {"format": "dialogflow-es", "file": _upload()}, follow=True)
    job = ImportJob.objects.get()
    ImportJob.objects.filter(pk=job.pk).update(finished_at=timezone.now() - timedelta(days=2))

    form = client.get(f"{URL}?again={job.pk}").content.decode()

    assert 'data-testid="kept-file"' not in form
    job.refresh_from_db()
    assert bytes(job.upload) == b""


def test_a_new_file_replaces_the_kept_one(editor, client_for):
    client = client_for(editor)
    client.post(URL, {"format": "dialogflow-es", "file": _upload()}, follow=True)
    first = ImportJob.objects.get()

    client.post(URL, {"format": "rasa", "file": _upload(), "again": first.pk, "slug": "x"})

    first.refresh_from_db()
    assert bytes(first.upload) == b"" and Profile.objects.filter(slug="x").exists()
