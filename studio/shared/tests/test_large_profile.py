"""A 700-route × 30-example profile: nothing answers 5xx, nothing waits on training.

Its model takes over a minute to learn; here no worker runs at all, so any request that waited
for training would hang. Each one answers at once and says what is pending in words.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from studio.jobs.runner import run
from studio.models import ImportJob, Profile, Publication, TrainedModel
from studio.shared.tokens import create_api_token
from tests.job_worker import DATABASE

ROUTES, EXAMPLES = 700, 30
QUICK_S = 15.0  # generous on a loaded CI machine; training this profile takes over 60 s


def _big_pack() -> dict[str, Any]:
    """Distinct made-up words per route, so every route is learnable and none is a duplicate."""

    def word(i: int, j: int) -> str:
        return f"w{i}x{j}"

    routes = [
        {
            "name": f"route_{i}",
            "description": f"things about {word(i, 0)} and {word(i, 1)}",
            "examples": [
                f"please help with {word(i, j % 7)} {word(i, 7 + j % 5)} number {j}"
                for j in range(EXAMPLES)
            ],
        }
        for i in range(ROUTES)
    ]
    return {
        "format": "route-pack",
        "format_version": 1,
        "profile": {"slug": "big", "name": "Big"},
        "routes": routes,
    }


def _timed(send: Any, *args: Any, **kwargs: Any) -> Any:
    t0 = time.monotonic()
    response = send(*args, **kwargs)
    elapsed = time.monotonic() - t0
    assert response.status_code < 500, response.content[:500]
    assert elapsed < QUICK_S, f"{args[0]} took {elapsed:.1f} s"
    return response


@pytest.mark.slow
def test_a_700_route_profile_imports_answers_and_publishes_without_waiting(
    owner: Any, settings: Any
) -> None:
    settings.TASKS = DATABASE  # queued for workers, of which none runs: nothing trains here
    _, secret = create_api_token(owner, "ci")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    page = Client()
    page.force_login(owner)

    imported = _timed(
        api.post, "/api/imports", json.dumps(_big_pack()), content_type="application/json"
    )
    # The import is queued too: the request answers at once; a worker creates the profile.
    assert imported.status_code == 202, imported.content[:600]
    assert imported.json()["url"].startswith("/profiles/import/jobs/")
    run("import", ImportJob.objects.get().pk)  # what the worker does with it
    profile = Profile.objects.get(slug="big")

    played = _timed(
        page.post,
        reverse("playground", args=["big"]),
        {"message": "please help with w3x1", "action": "check"},
        HTTP_HX_REQUEST="true",
    )
    html = played.content.decode()
    assert played.status_code == 200
    assert "waiting for a worker to train it" in html and "The verdict appears when" in html

    routed = _timed(api.post, "/api/profiles/big/route", '{"message": "w3x1"}', "application/json")
    assert routed.status_code == 409 and "waiting for a worker" in routed.json()["detail"]
    assert routed["Retry-After"] == "2"

    review = _timed(page.get, reverse("publish", args=["big"]))
    assert review.status_code == 200 and "model is training" in review.content.decode()
    # The checks wait for the model too, so the gate is red: publishing now needs a reason.
    assert "lint waits for the draft&#x27;s model" in review.content.decode()

    published = _timed(
        page.post,
        reverse("publish", args=["big"]),
        {
            "note": "big",
            "environment": "staging",
            "draft_revision": profile.draft_revision,
            "reason": "staging only, the suite runs there",
        },
    )
    job = Publication.objects.get(profile=profile)
    assert published.status_code == 302
    assert published["Location"] == reverse("job", args=["big", "publication", job.pk])
    shown = _timed(page.get, published["Location"]).content.decode()
    assert job.status == "queued" and "Waiting for a worker to pick it up" in shown

    body = json.dumps({"reason": "staging only, the suite runs there"})
    by_api = _timed(api.post, "/api/profiles/big/versions", body, "application/json")
    assert by_api.status_code == 202 and by_api.json()["status"] == "queued"

    assert not TrainedModel.objects.filter(profile=profile, status="done").exists()
    assert profile.versions.count() == 0  # it will be published by a worker, with its model
