"""Authoring help: lint findings on purpose-built profiles, the overlap checkup, threshold tuning."""

from __future__ import annotations

import pytest
from django.urls import reverse

from studio.models import AuditEntry, OverlapCheck, Profile, Route, Rule, TestCase


@pytest.fixture
def messy(db) -> Profile:
    """One of every lint finding, on purpose."""
    p = Profile.objects.create(slug="messy", name="Messy", default_route="human")
    Route.objects.create(
        profile=p, name="billing", order=0, keywords=["order"],
        examples=["card charged twice", "refund the order"],
    )  # fmt: skip
    Route.objects.create(
        profile=p, name="shipping", order=1, keywords=["order"], never=["track my parcel"],
        examples=["card charged twice", "refund my order", "where is my parcel",
                  "track my parcel now", "parcel tracking", "delivery time"],
    )  # fmt: skip
    Route.objects.create(
        profile=p, name="human", order=2, action_kind="stuck", stuck_message="Bye.",
        examples=["a person please", "talk to someone", "human agent", "real human", "operator"],
    )  # fmt: skip
    Rule.objects.create(
        profile=p, route_name="human", keywords=["where is"], examples=["talk to a person"]
    )
    return p


def test_lint_shows_each_kind_of_finding_with_a_link_to_the_route(messy, viewer, client_for):
    html = client_for(viewer).get(reverse("lint", args=[messy.slug])).content.decode()
    shipping = messy.routes.get(name="shipping")

    for kind in (
        "duplicate-example",
        "near-duplicate",
        "shadowed-example",
        "rule-example-misses",
        "never-routes-here",
        "few-examples",
        "shared-keyword",
        "stuck-default",
    ):
        assert f'data-kind="{kind}"' in html, kind
    assert reverse("routes-edit", args=[messy.slug, shipping.pk]) in html
    assert reverse("rules-edit", args=[messy.slug, messy.rules.get().pk]) in html
    assert 'data-severity="error"' in html


def test_a_clean_profile_has_nothing_to_lint(profile, viewer, client_for):
    for route in profile.routes.all():
        route.examples = [*route.examples, *(f"{route.name} example {i}" for i in range(5))]
        route.save()

    html = client_for(viewer).get(reverse("lint", args=[profile.slug])).content.decode()

    assert 'data-testid="lint-finding"' not in html or 'data-kind="few-examples"' not in html


def test_lint_of_an_invalid_draft_says_why(profile, viewer, client_for):
    Profile.objects.filter(pk=profile.pk).update(default_route="nowhere")

    html = client_for(viewer).get(reverse("lint", args=[profile.slug])).content.decode()

    assert "not a valid pack" in html


def test_the_overlap_checkup_lists_examples_that_land_elsewhere(messy, viewer, client_for):
    client = client_for(viewer)

    response = client.post(reverse("overlap-start", args=[messy.slug]))
    check = OverlapCheck.objects.get()
    html = client.get(response["Location"]).content.decode()

    assert check.status == "done" and check.findings
    assert {"route", "example", "outcome", "other_route", "other_score"} <= set(check.findings[0])
    assert html.count('data-testid="overlap-finding"') == len(check.findings)


def test_overlap_findings_link_to_both_routes_and_a_deleted_one_is_plain_text(
    messy, viewer, client_for
):
    client = client_for(viewer)
    page = client.post(reverse("overlap-start", args=[messy.slug]))["Location"]
    finding = OverlapCheck.objects.get().findings[0]
    routes = dict(messy.routes.values_list("name", "pk"))

    html = client.get(page).content.decode()

    for name in (finding["route"], finding["other_route"]):
        assert f'href="{reverse("routes-edit", args=[messy.slug, routes[name]])}"' in html
    messy.routes.filter(name=finding["other_route"]).delete()
    html = client.get(page).content.decode()
    assert f'<span class="mono">{finding["other_route"]}</span>' in html


# -- tuning -------------------------------------------------------------------------------------------

# On the `profile` fixture, the in-scope cases score 1.0 for their route, and the out-of-scope
# message scores 0.656 for shipping: floors up to 0.6 let it through, 0.7 stops it and keeps
# every in-scope case, so the suggestion is floor 0.7 (ties go to the lower floor). A tenth
# margin changes nothing on these cases, so the suggestion keeps the profile's own.
TUNING_CASES = [
    ("download my invoice", "billing"),
    ("where is my parcel", "shipping"),
    ("my card", "billing"),
    ("payment for delivery", ""),
]


@pytest.fixture
def tuned(profile) -> Profile:
    for order, (message, expected) in enumerate(TUNING_CASES):
        TestCase.objects.create(
            profile=profile, message=message, expected_route=expected, order=order
        )
    return profile


def test_the_sweep_suggests_the_floor_that_stops_out_of_scope_cases(tuned, viewer, client_for):
    html = client_for(viewer).get(reverse("tuning", args=[tuned.slug])).content.decode()

    assert 'data-floor="0.7"' in html
    assert 'data-margin="0.15"' in html  # no case near-ties: the margin stays where it is
    assert "the mean of in-scope accuracy and out-of-scope recall" in html
    assert "Tuned and judged on the same cases" in html
    assert 'data-testid="sweep-chart"' in html and "<polyline" in html
    assert 'data-testid="apply-suggestion"' not in html  # a viewer sees no apply button


def test_applying_the_suggestion_is_one_click_for_an_editor(tuned, editor, client_for):
    client = client_for(editor)
    page = client.get(reverse("tuning", args=[tuned.slug])).content.decode()
    assert 'data-testid="apply-suggestion"' in page
    revision, draft = tuned.revision, tuned.draft_revision

    response = client.post(
        reverse("tuning-apply", args=[tuned.slug]),
        {"floor": "0.7", "margin": "0.15", "revision": revision},
    )

    tuned.refresh_from_db()
    assert response.status_code == 302
    assert (tuned.floor, tuned.near_tie_margin) == (0.7, 0.15)
    assert tuned.revision == revision + 1 and tuned.draft_revision > draft
    assert AuditEntry.objects.filter(action="profile.update", profile=tuned).exists()
    assert "already applied" in client.get(reverse("tuning", args=[tuned.slug])).content.decode()


def test_a_viewer_cannot_apply_a_suggestion(tuned, viewer, client_for):
    response = client_for(viewer).post(
        reverse("tuning-apply", args=[tuned.slug]),
        {"floor": "0.7", "margin": "0.15", "revision": tuned.revision},
    )

    tuned.refresh_from_db()
    assert response.status_code == 403 and tuned.floor is None


def test_a_stale_apply_is_refused_with_who_changed_it(tuned, editor, client_for):
    client = client_for(editor)

    response = client.post(
        reverse("tuning-apply", args=[tuned.slug]),
        {"floor": "0.7", "margin": "0.1", "revision": tuned.revision - 1},
        follow=True,
    )

    tuned.refresh_from_db()
    assert tuned.floor is None
    assert "Nothing applied: changed by" in response.content.decode()


def test_a_threshold_that_is_not_a_number_is_refused(tuned, editor, client_for):
    response = client_for(editor).post(
        reverse("tuning-apply", args=[tuned.slug]),
        {"floor": "high", "margin": "0.1", "revision": tuned.revision},
        follow=True,
    )

    tuned.refresh_from_db()
    assert tuned.floor is None and "Nothing applied: floor: " in response.content.decode()


def test_tuning_without_cases_says_what_to_add(profile, viewer, client_for):
    html = client_for(viewer).get(reverse("tuning", args=[profile.slug])).content.decode()

    assert "No test cases to tune on" in html


def test_the_sweep_runs_on_the_queue_and_the_page_shows_it_when_done(
    tuned, viewer, client_for, settings
):
    from studio.jobs.runner import run
    from studio.jobs.training import scoring
    from studio.models import TuningRun
    from tests.job_worker import DATABASE

    scoring(tuned)  # the model, trained inline: only the sweep waits below
    settings.TASKS = DATABASE  # queued for a worker; none runs in this test
    client = client_for(viewer)

    waiting = client.get(reverse("tuning", args=[tuned.slug])).content.decode()
    job = TuningRun.objects.get(profile=tuned)
    run("tuning", job.pk)  # what a worker does with it
    done = client.get(reverse("tuning", args=[tuned.slug])).content.decode()

    assert "Trying every floor and margin on 4 test cases: waiting for a worker." in waiting
    assert 'data-floor="0.7"' not in waiting and 'hx-trigger="every 2s"' in waiting
    assert 'data-floor="0.7"' in done and TuningRun.objects.count() == 1  # stored, not rerun
