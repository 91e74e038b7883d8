"""A job's page, its Cancel button and the playground's note on its model, as people see them.

The queue itself runs with a real worker in test_jobs.py; here jobs are queued on the database
backend with no worker, so each state stays put while the page is read.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from studio.jobs.training import scoring
from studio.models import Route, TestRun, TrainedModel
from studio.shared.edits import save_item
from studio.suites.runs import start_run
from tests.job_worker import DATABASE


@pytest.fixture
def queue_only(settings: Any) -> None:
    settings.TASKS = DATABASE  # jobs wait: no worker runs in these tests


def test_a_queued_run_says_it_waits_and_can_be_cancelled(
    profile: Any, viewer: Any, client_for: Any, queue_only: None
) -> None:
    run = start_run(profile, user=viewer)
    client = client_for(viewer)
    page = client.get(reverse("test-run", args=[profile.slug, run.pk])).content.decode()
    assert "waiting for a worker" in page and "Cancel the run" in page

    response = client.post(reverse("job-cancel", args=[profile.slug, "test_run", run.pk]))

    run.refresh_from_db()
    assert response.status_code == 302 and run.status == "cancelled"
    page = client.get(response["Location"]).content.decode()
    assert "Cancelled after 0 of" in page and 'hx-trigger="every 500ms"' not in page


def test_a_job_page_shows_progress_then_the_reason_it_failed(
    profile: Any, viewer: Any, client_for: Any
) -> None:
    run = TestRun.objects.create(profile=profile, status="running", done=3, total=10)
    client = client_for(viewer)
    url = reverse("job", args=[profile.slug, "test_run", run.pk])

    running = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    TestRun.objects.filter(pk=run.pk).update(status="failed", error="The run failed: disk full")
    failed = client.get(url).content.decode()

    assert "30%" in running and 'hx-trigger="every 1s"' in running and "Cancel" in running
    assert "The run failed: disk full" in failed and 'hx-trigger="every 1s"' not in failed


def test_a_publication_job_needs_the_publisher_role(
    profile: Any, editor: Any, client_for: Any
) -> None:
    url = reverse("job", args=[profile.slug, "publication", 1])
    assert client_for(editor).get(url).status_code == 403


def test_the_playground_says_where_its_scores_come_from_until_the_new_model_is_ready(
    profile: Any, editor: Any, viewer: Any, client_for: Any, settings: Any
) -> None:
    first = scoring(profile)  # trained inline (ImmediateBackend): the model of revision 1
    assert first.exact and first.source is not None
    settings.TASKS = DATABASE  # the next one waits for a worker
    route = Route.objects.get(profile=profile, name="shipping")
    route.examples = [*route.examples, "my parcel never came"]
    save_item(route, user=editor, expected_revision=route.revision)
    client = client_for(viewer)

    played = client.post(
        reverse("playground", args=[profile.slug]),
        {"message": "where is my parcel", "action": "check"},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    status_url = reverse("playground-model", args=[profile.slug]) + "?waiting=1"
    waiting = client.get(status_url)

    revision = first.source.draft_revision
    assert (
        f"scores from the model of revision {revision}; waiting for a worker to train it" in played
    )
    assert 'data-testid="verdict-route">shipping<' in played  # answered, from the older model
    assert "Examples changed" in waiting.content.decode() and "HX-Trigger" not in waiting

    pending = scoring(profile).pending
    assert pending is not None
    from studio.jobs.runner import run as run_job

    run_job("training", pending.pk)  # what a worker does with it
    ready = client.get(status_url)

    assert TrainedModel.objects.get(pk=pending.pk).status == "done"
    assert "model-ready" in ready["HX-Trigger"] and "Examples changed" not in ready.content.decode()


def test_an_import_is_not_shown_among_a_profiles_jobs(
    profile: Any, owner: Any, client_for: Any
) -> None:
    from studio.models import ImportJob

    job = ImportJob.objects.create(profile=profile, into_draft=True, format="pack")
    url = reverse("job", args=[profile.slug, "import", job.pk])
    assert client_for(owner).get(url).status_code == 404  # its page is /profiles/import/jobs/


def test_a_job_page_of_a_valid_profile_shows_no_problem_badge(
    profile: Any, owner: Any, client_for: Any
) -> None:
    run = TestRun.objects.create(profile=profile, status="done", done=10, total=10)

    page = client_for(owner).get(reverse("job", args=[profile.slug, "test_run", run.pk]))
    html = page.content.decode()

    assert 'data-testid="pack-badge">valid pack<' in html
    assert "0 problems" not in html
