"""The queue's share per person and per profile, reuse of a waiting twin, and publishing first."""

from __future__ import annotations

from typing import Any

from django.contrib.messages import get_messages
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from studio.jobs import start_job
from studio.models import OverlapCheck, Profile, Publication, ReplayRun, TestCase, TestRun
from tests.job_worker import DATABASE


def _flash(response: Any) -> str:
    return " ".join(str(m) for m in get_messages(response.wsgi_request))


def test_a_person_with_three_analysis_jobs_unfinished_cannot_queue_a_fourth(
    profile: Profile, viewer: Any, client_for: Any
) -> None:
    for revision in (1, 2):
        TestRun.objects.create(profile=profile, started_by=viewer, draft_revision=revision)
    ReplayRun.objects.create(profile=profile, started_by=viewer, target="draft", status="running")

    response = client_for(viewer).post(reverse("overlap-start", args=["shop"]))

    assert response.status_code == 302 and response["Location"] == "/profiles/shop/overlap/"
    assert "Not started: you have 3 runs, checkups or replays waiting or running" in _flash(
        response
    )
    assert not OverlapCheck.objects.exists()


def test_a_profile_with_six_analysis_jobs_unfinished_takes_no_seventh(
    profile: Profile, viewer: Any, editor: Any, client_for: Any
) -> None:
    for revision in range(6):
        TestRun.objects.create(profile=profile, started_by=editor, draft_revision=100 + revision)

    response = client_for(viewer).post(reverse("replay-start", args=["shop"]))

    assert response.status_code == 302
    assert "'shop' has 6 runs, checkups or replays waiting or running" in _flash(response)
    assert not ReplayRun.objects.exists()


def test_the_same_replay_still_waiting_in_the_queue_is_reused(
    profile: Profile, viewer: Any, client_for: Any
) -> None:
    waiting = ReplayRun.objects.create(
        profile=profile, started_by=viewer, target="draft", draft_revision=profile.draft_revision
    )

    response = client_for(viewer).post(reverse("replay-start", args=["shop"]))

    assert response["Location"] == f"/profiles/shop/traffic/replays/{waiting.pk}/"
    assert ReplayRun.objects.count() == 1


def test_a_publication_is_taken_before_analysis_queued_ahead_of_it(
    profile: Profile, viewer: Any, owner: Any, settings: Any
) -> None:
    settings.TASKS = DATABASE  # jobs wait: no worker runs in this test
    analysis = [
        start_job(TestRun.objects.create(profile=profile, started_by=viewer)),
        start_job(ReplayRun.objects.create(profile=profile, started_by=viewer, target="draft")),
        start_job(OverlapCheck.objects.create(profile=profile, started_by=viewer)),
    ]
    publication = start_job(Publication.objects.create(profile=profile, started_by=owner))

    first = DBTaskResult.objects.ready().first()  # what a free worker takes next

    assert first is not None and str(first.id) == publication.task_id
    assert all(job.task_id != publication.task_id for job in analysis)


def test_the_publish_gates_own_run_is_not_held_to_the_share(profile: Profile, owner: Any) -> None:
    from studio.publishing.gate import review_gate

    TestCase.objects.create(profile=profile, message="update my card", expected_route="billing")
    for revision in range(6):
        TestRun.objects.create(profile=profile, started_by=owner, draft_revision=100 + revision)
    gate = review_gate(profile, user=owner)
    assert gate.run is not None and gate.run.draft_revision == profile.draft_revision
