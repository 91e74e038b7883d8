"""Test suites: cases, runs, stored figures checked by hand, the results page and its permissions."""

from __future__ import annotations

import re
import time
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from studio.models import AuditEntry, OverlapCheck, Profile, TestCase, TestRun, Tool
from studio.suites.runs import start_run, suite_order
from tests.studio.fixtures import add_conversation, htmx

# Seven cases whose outcome on the `profile` fixture was worked out by hand:
SUITE = [
    ("download my invoice", "billing"),  # billing ✓
    ("where is my parcel", "shipping"),  # shipping ✓
    ("I want a real person", "human"),  # rule → human ✓
    ("where is my parcel", "billing"),  # → shipping ✗
    ("hello there", ""),  # unmatched ✓ (out of scope)
    ("what is the weather on mars", ""),  # → shipping ✗ (out of scope)
    ("parcel invoice", "shipping"),  # near-tie → menu ✗
]


def _add_cases(profile: Profile, rows: list[tuple[str, str]], **extra: object) -> None:
    for order, (message, expected) in enumerate(rows):
        TestCase.objects.create(
            profile=profile, message=message, expected_route=expected, order=order, **extra
        )


def _run(client, profile: Profile) -> TestRun:
    response = client.post(reverse("test-run-start", args=[profile.slug]))
    assert response.status_code == 302
    return TestRun.objects.get(pk=int(response["Location"].rstrip("/").rsplit("/", 1)[1]))


@pytest.mark.usefixtures("without_background")
def test_a_run_stores_the_figures_worked_out_by_hand(profile, viewer, client_for):
    _add_cases(profile, SUITE)

    run = _run(client_for(viewer), profile)

    f = run.figures
    assert run.status == "done" and run.total == 7 and run.passed == 4
    assert f["pass_rate"] == round(4 / 7, 4)
    assert f["in_scope_accuracy"] == 0.6  # 3 of 5 in-scope cases
    assert f["oos_recall"] == 0.5  # 1 of 2 out-of-scope cases left unmatched
    assert f["oos_precision"] == 1.0  # the one turn left unmatched was out of scope
    assert f["menu_rate"] == round(1 / 7, 4)
    assert f["per_route"]["billing"] == {
        "precision": 1.0,
        "recall": 0.5,
        "f1": 0.6667,
        "support": 2,
    }
    assert f["per_route"]["shipping"] == {
        "precision": 0.3333,
        "recall": 0.5,
        "f1": 0.4,
        "support": 2,
    }
    assert f["per_route"]["human"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "support": 1}
    assert sorted((c["expected"], c["predicted"], c["count"]) for c in f["confusions"]) == [
        ("(unmatched)", "shipping", 1),
        ("billing", "shipping", 1),
        ("shipping", "(menu)", 1),
    ]


@pytest.mark.usefixtures("without_background")
def test_the_results_page_shows_the_figures_and_the_failures(profile, viewer, client_for):
    _add_cases(profile, SUITE)
    client = client_for(viewer)
    run = _run(client, profile)

    html = client.get(reverse("test-run", args=[profile.slug, run.pk])).content.decode()

    assert re.search(r'data-testid="accuracy">60\.0%<', html)
    assert re.search(r'data-testid="oos-recall">50\.0%<', html)
    assert re.search(r'data-testid="oos-precision">100\.0%<', html)
    assert re.search(r'data-testid="menu-rate">14\.3%<', html)
    assert "route: expected billing, got shipping" in html
    assert html.count('data-testid="result-row"') == 3  # the failed cases, by default
    assert 'data-testid="confusion-matrix"' in html and "Slowest cases" in html
    assert "first case" in html and "not counted (it warms the caches)" in html


def test_a_confusion_cell_lists_the_cases_behind_it(profile, viewer, client_for):
    _add_cases(profile, SUITE)
    client = client_for(viewer)
    run = _run(client, profile)
    url = reverse("test-run", args=[profile.slug, run.pk])

    page = client.get(url).content.decode()
    fragment = client.get(
        url, {"expected": "billing", "predicted": "shipping"}, **htmx(HTTP_HX_TARGET="case-list")
    ).content.decode()

    assert "?expected=billing&amp;predicted=shipping" in page
    assert fragment.lstrip().startswith('<section class="card" id="case-list"')
    assert fragment.count('data-testid="result-row"') == 1
    assert "where is my parcel" in fragment


def test_polling_a_finished_run_returns_the_run_fragment_without_a_poll(
    profile, viewer, client_for
):
    _add_cases(profile, SUITE[:2])
    client = client_for(viewer)
    run = _run(client, profile)

    fragment = client.get(
        reverse("test-run", args=[profile.slug, run.pk]), **htmx(HTTP_HX_TARGET="run")
    ).content.decode()

    assert fragment.lstrip().startswith('<section id="run" data-status="done"')
    assert "every 500ms" not in fragment


def test_a_running_run_polls_itself_every_half_second(profile, viewer, client_for):
    run = TestRun.objects.create(profile=profile, total=10, done=4)

    html = client_for(viewer).get(reverse("test-run", args=[profile.slug, run.pk])).content.decode()

    assert 'hx-trigger="every 500ms"' in html
    assert 'value="4"' in html and "4 of 10 cases" in html


def test_each_turn_of_a_conversation_starts_where_the_previous_one_landed(
    profile, viewer, client_for
):
    # Added out of order: the suite runs them by turn.
    add_conversation(
        profile,
        [
            (2, "where is my parcel", "shipping", "move"),
            (1, "download my invoice", "billing", "move"),
            (3, "how long does delivery take", "shipping", "stay"),
        ],
    )

    run = _run(client_for(viewer), profile)

    assert [(r["turn"], r["incumbent"], r["verdict"]) for r in run.results] == [
        (1, None, "move"),
        (2, "billing", "move"),
        (3, "shipping", "stay"),
    ]
    assert run.passed == 3


def test_the_first_turns_incumbent_starts_the_conversation(profile):
    TestCase.objects.create(
        profile=profile, message="how long does delivery take", expected_route="shipping",
        expected_verdict="stay", incumbent="shipping", conversation="c", turn=1,
    )  # fmt: skip

    run = start_run(profile, user=None)

    assert run.results[0]["incumbent"] == "shipping" and run.passed == 1


def test_conversations_run_together_where_they_start(profile):
    rows = [
        TestCase(profile=profile, message="a", order=0, conversation="x", turn=2, pk=1),
        TestCase(profile=profile, message="b", order=1, pk=2),
        TestCase(profile=profile, message="c", order=2, conversation="x", turn=1, pk=3),
    ]

    assert [c.message for c in suite_order(rows)] == ["c", "a", "b"]


@pytest.mark.usefixtures("without_background")
def test_the_tests_page_shows_the_last_run_and_the_pass_rate_over_time(profile, viewer, client_for):
    _add_cases(profile, SUITE)
    client = client_for(viewer)
    _run(client, profile)
    TestCase.objects.filter(expected_route="billing", message="where is my parcel").delete()
    _run(client, profile)

    html = client.get(reverse("tests", args=[profile.slug])).content.decode()

    assert re.search(r'data-testid="last-pass-rate">66\.7%<', html)  # 4 of 6
    assert html.count('class="chart-dot s-pass"') == 2
    assert "<polyline" in html


def test_a_run_of_an_invalid_draft_fails_with_the_reason(profile, viewer, client_for):
    _add_cases(profile, SUITE[:1])
    Profile.objects.filter(pk=profile.pk).update(default_route="nowhere")

    run = _run(client_for(viewer), profile)

    assert run.status == "failed" and "not a valid pack" in run.error


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_a_run_happens_in_the_background(profile):
    _add_cases(profile, SUITE)

    run = start_run(profile, user=None)
    deadline = time.monotonic() + 20
    while run.is_running and time.monotonic() < deadline:
        time.sleep(0.05)
        run.refresh_from_db()

    assert run.status == "done" and run.done == run.total == 7


# -- editing cases ----------------------------------------------------------------------------------


def test_an_editor_adds_a_case_and_it_is_audited(profile, editor, client_for):
    response = client_for(editor).post(
        reverse("tests-add", args=[profile.slug]),
        {"message": "<b>refund</b> me", "expected_route": "billing", "expected_tools": "[]",
         "turn": 0},
    )  # fmt: skip

    case = profile.test_cases.get()
    assert response.status_code == 302
    assert (case.message, case.expected_route, case.expected_tools) == (
        "<b>refund</b> me",
        "billing",
        [],
    )
    assert AuditEntry.objects.filter(action="testcase.create").exists()


@pytest.mark.parametrize("typed", ["no tools", "No  Tools", "[]"])
def test_a_case_that_must_keep_no_tool_is_typed_in_words_and_shown_so(
    profile, editor, client_for, typed
):
    client = client_for(editor)
    client.post(
        reverse("tests-add", args=[profile.slug]),
        {"message": "refund me", "expected_route": "billing", "expected_tools": typed, "turn": 0},
    )

    case = profile.test_cases.get()
    edit = client.get(reverse("tests-edit", args=[profile.slug, case.pk])).content.decode()
    assert case.expected_tools == []
    assert re.search(r'name="expected_tools"[^>]*value="no tools"', edit)
    assert "“no tools”: the turn must keep none at all." in edit


def test_the_case_form_saves_tools_to_keep_to_drop_and_exactly(profile, editor, client_for):
    client = client_for(editor)
    client.post(
        reverse("tests-add", args=[profile.slug]),
        {"message": "refund me", "expected_route": "billing", "expected_tools": "refund_order",
         "exact_tools": "on", "dropped_tools": "track_parcel, cancel_order", "turn": 0},
    )  # fmt: skip

    case = profile.test_cases.get()
    html = client.get(reverse("tests", args=[profile.slug])).content.decode()
    assert (case.expected_tools, case.exact_tools, case.dropped_tools) == (
        ["refund_order"],
        True,
        ["track_parcel", "cancel_order"],
    )
    assert "only tools refund_order" in html and "drops track_parcel, cancel_order" in html


def test_user_typed_text_is_escaped(profile, editor, client_for):
    _add_cases(profile, [("<script>alert(1)</script>", "billing")])
    client = client_for(editor)
    _run(client, profile)

    pages = [
        client.get(reverse("tests", args=[profile.slug])).content.decode(),
        client.get(reverse("test-run", args=[profile.slug, TestRun.objects.get().pk]), {"show": "all"}).content.decode(),
    ]  # fmt: skip

    for html in pages:
        assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html


def test_editing_a_case_inline_returns_its_row(profile, editor, client_for):
    _add_cases(profile, SUITE[:1])
    case = profile.test_cases.get()
    url = reverse("tests-edit", args=[profile.slug, case.pk])
    client = client_for(editor)

    form = client.get(url, **htmx()).content.decode()
    page = client.get(url).content.decode()
    saved = client.post(
        url,
        {
            "message": "my invoice",
            "expected_route": "billing",
            "revision": case.revision,
            "turn": 0,
        },
        **htmx(),
    )

    assert form.lstrip().startswith(f'<tr id="{case.dom_id}" class="edit-row">')
    assert "<html" in page and 'class="edit-row"' in page
    assert saved.status_code == 200 and saved.content.decode().lstrip().startswith(
        f'<tr id="{case.dom_id}">'
    )
    assert profile.test_cases.get().message == "my invoice"


def test_a_stale_edit_of_a_case_is_refused(profile, editor, client_for):
    _add_cases(profile, SUITE[:1])
    case = profile.test_cases.get()

    response = client_for(editor).post(
        reverse("tests-edit", args=[profile.slug, case.pk]),
        {"message": "x", "expected_route": "", "revision": case.revision - 1, "turn": 0},
        **htmx(),
    )

    assert response.status_code == 409 and "reload" in response.content.decode()
    assert profile.test_cases.get().message == "download my invoice"


def test_an_editor_deletes_a_case_after_confirming(profile, editor, client_for):
    _add_cases(profile, SUITE[:1])
    case = profile.test_cases.get()
    url = reverse("tests-delete", args=[profile.slug, case.pk])
    client = client_for(editor)

    confirm = client.get(url, **htmx()).content.decode()
    client.post(url, **htmx())

    assert "Delete" in confirm and not profile.test_cases.exists()


# -- permissions ------------------------------------------------------------------------------------


def test_a_viewer_reads_and_runs_but_cannot_change_cases(profile, viewer, client_for):
    _add_cases(profile, SUITE[:1])
    case = profile.test_cases.get()
    client = client_for(viewer)
    slug = profile.slug
    reads = ["tests", "tests-import", "tests-export", "lint", "overlap", "tuning"]
    writes = [
        reverse("tests-add", args=[slug]),
        reverse("tests-import", args=[slug]),
        reverse("tests-edit", args=[slug, case.pk]),
        reverse("tests-delete", args=[slug, case.pk]),
        reverse("tuning-apply", args=[slug]),
    ]

    assert {n: client.get(reverse(n, args=[slug])).status_code for n in reads} == dict.fromkeys(
        reads, 200
    )
    assert client.post(reverse("test-run-start", args=[slug])).status_code == 302
    assert client.post(reverse("overlap-start", args=[slug])).status_code == 302
    assert {u: client.post(u, {"message": "x"}).status_code for u in writes} == dict.fromkeys(
        writes, 403
    )
    assert profile.test_cases.count() == 1


def test_a_user_without_a_role_cannot_run_or_read(profile, outsider, client_for):
    client = client_for(outsider)

    assert client.get(reverse("tests", args=[profile.slug])).status_code == 403
    assert client.post(reverse("test-run-start", args=[profile.slug])).status_code == 403
    assert not TestRun.objects.exists()


def test_the_runs_of_another_profile_are_not_found_here(profile, viewer, client_for):
    other = Profile.objects.create(slug="other", name="Other")
    run = TestRun.objects.create(profile=other)

    response = client_for(viewer).get(reverse("test-run", args=[profile.slug, run.pk]))

    assert response.status_code == 404


# -- runs whose worker died (studio/jobs/recovery; a real killed worker: test_jobs.py) ---------------


def _orphaned(job, *, attempts: int, seconds: float = 60):
    """The row a worker leaves when it is killed mid-job: running, its heartbeat stopped."""
    type(job).objects.filter(pk=job.pk).update(
        status="running",
        worker="gone:1",
        attempts=attempts,
        heartbeat_at=timezone.now() - timedelta(seconds=seconds),
    )


def test_a_run_whose_worker_died_is_run_again_when_its_page_is_shown(profile, viewer, client_for):
    TestCase.objects.create(
        profile=profile, message="download my invoice", expected_route="billing"
    )
    orphan = TestRun.objects.create(profile=profile, total=1)
    _orphaned(orphan, attempts=1)

    client_for(viewer).get(reverse("test-run", args=[profile.slug, orphan.pk]))

    orphan.refresh_from_db()
    assert (orphan.status, orphan.attempts, orphan.passed) == ("done", 2, 1)


def test_a_run_whose_worker_died_twice_fails_with_the_reason_and_can_run_again(
    profile, viewer, client_for
):
    TestCase.objects.create(
        profile=profile, message="download my invoice", expected_route="billing"
    )
    dead = TestRun.objects.create(profile=profile, total=1)
    _orphaned(dead, attempts=2)
    client = client_for(viewer)

    html = client.get(reverse("test-run", args=[profile.slug, dead.pk])).content.decode()

    dead.refresh_from_db()
    assert dead.status == "failed" and dead.finished_at is not None
    assert "stopped responding 2 times (killed or crashed)" in dead.error
    assert 'data-status="failed"' in html and "stopped responding" in html
    assert 'hx-trigger="every 500ms"' not in html  # the page stops polling
    again = client.post(reverse("test-run-start", args=[profile.slug]))
    assert TestRun.objects.get(pk=again["Location"].rstrip("/").split("/")[-1]).passed == 1


def test_a_run_whose_worker_beats_keeps_running(profile, viewer, client_for):
    alive = TestRun.objects.create(profile=profile, total=10)
    _orphaned(alive, attempts=1, seconds=1)  # well within STUDIO_JOB_STALE_AFTER_S

    client_for(viewer).get(reverse("tests", args=[profile.slug]))

    alive.refresh_from_db()
    assert (alive.status, alive.attempts) == ("running", 1)


def test_the_cases_and_overlap_pages_recover_their_dead_jobs_too(profile, viewer, client_for):
    run = TestRun.objects.create(profile=profile, total=1)
    check = OverlapCheck.objects.create(profile=profile)
    for job in (run, check):
        _orphaned(job, attempts=2)
    client = client_for(viewer)

    client.get(reverse("tests", args=[profile.slug]))
    html = client.get(reverse("overlap", args=[profile.slug])).content.decode()

    run.refresh_from_db()
    check.refresh_from_db()
    assert run.status == check.status == "failed"
    assert "stopped responding" in html


def test_a_job_write_that_meets_a_locked_database_waits_and_succeeds():
    from django.db import OperationalError

    from studio.jobs.sqlite import retry_locked

    calls = []

    def flaky_write() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise OperationalError("database table is locked: studio_testrun")
        return "written"

    assert retry_locked(flaky_write, pause_s=0) == "written"
    assert len(calls) == 3


def test_other_database_errors_are_not_retried():
    from django.db import OperationalError

    from studio.jobs.sqlite import retry_locked

    calls = []

    def broken_write() -> None:
        calls.append(1)
        raise OperationalError("no such table: studio_testrun")

    with pytest.raises(OperationalError, match="no such table"):
        retry_locked(broken_write, pause_s=0)
    assert len(calls) == 1


def test_a_case_keeps_passing_when_a_tool_the_turn_also_keeps_is_added(profile, editor):
    TestCase.objects.create(
        profile=profile,
        message="refund my invoice",
        expected_route="billing",
        expected_tools=["refund_order"],
        dropped_tools=["track_parcel"],
    )
    TestCase.objects.create(
        profile=profile,
        message="refund my invoice",
        expected_route="billing",
        expected_tools=["hydrate_context", "refund_order"],
        exact_tools=True,
    )
    Tool.objects.create(profile=profile, name="lookup_invoice", trigger_keywords=["invoice"])
    Tool.objects.create(profile=profile, name="track_parcel", trigger_keywords=["parcel"])

    run = start_run(profile, user=editor)

    keep, exact = run.results
    assert keep["passed"] and "lookup_invoice" in keep["tools"]
    assert exact["failures"] == [
        "tools: expected exactly hydrate_context, refund_order, got " + ", ".join(exact["tools"])
    ]
