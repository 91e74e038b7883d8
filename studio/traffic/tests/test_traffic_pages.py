"""The Traffic, review, replay and agents pages over stored events, through the real URL stack."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from routing_core import Router
from studio.agents.events import EventBatchIn, ingest
from studio.models import (
    AuditEntry,
    Event,
    Profile,
    ReplayRun,
    Route,
    TestCase,
    TrafficSettings,
)
from studio.publishing.versions import promote, publish
from studio.shared.edits import save_item
from studio.shared.errors import Conflict
from studio.shared.packs import build_pack
from studio.shared.tokens import create_read_token
from studio.traffic import review
from studio.traffic.charts import turns_chart
from studio.traffic.review import review_queue, reviewed_count
from studio.traffic.rollups import rebuild
from studio.traffic.turns import period
from tests.job_worker import wait_for


def store(profile: Profile, rows: list[dict], days_ago: float = 0) -> list[Event]:
    """Route each row's message on the profile, apply its overrides to the event, and ingest."""
    router = Router(build_pack(profile))
    records = []
    for row in rows:
        event = router.route(row["message"], row.get("incumbent")).to_event()
        event.update(row.get("event", {}))
        records.append(
            {k: v for k, v in row.items() if k not in ("event", "incumbent")} | {"event": event}
        )
    ingest(profile, EventBatchIn.model_validate({"events": records}))
    stored = list(Event.objects.order_by("-pk")[: len(rows)])
    if days_ago:
        when = timezone.now() - timedelta(days=days_ago)
        Event.objects.filter(pk__in=[e.pk for e in stored]).update(received=when)
        rebuild(profile.pk)  # as if ingested then: the hours follow the turns
    return stored


UNMATCHED = {"verdict": "unmatched", "route": None, "by": "none"}
MENU = {"verdict": "menu", "route": None, "by": "menu", "offered": ["billing", "shipping"]}


@pytest.fixture
def traffic(profile):
    """This week: 4 billing, 1 unmatched, 1 menu; the week before: 2 shipping."""
    store(profile, [{"message": "why was I charged twice"}] * 4, days_ago=1)
    store(profile, [{"message": "what is the weather", "event": UNMATCHED}], days_ago=2)
    store(profile, [{"message": "parcel charged", "event": MENU}], days_ago=2)
    store(profile, [{"message": "where is my parcel"}] * 2, days_ago=9)
    return profile


def test_a_period_counts_shares_now_and_before(traffic):
    figures = period(traffic, 7)
    assert (figures.total, figures.total_before) == (6, 2)
    routes = {s.label: (s.now, s.before) for s in figures.routes}
    assert routes["billing"] == (4, 0) and routes["shipping"] == (0, 2)
    outcomes = {s.label: s.share for s in figures.outcomes}
    assert outcomes == {
        "nothing matched": pytest.approx(1 / 6),
        "a menu was offered": pytest.approx(1 / 6),
    }
    assert sum(n for _, n in figures.buckets) == 6 and len(figures.buckets) == 7


def test_the_traffic_page_draws_its_charts_as_svg_without_inline_style(traffic, viewer, client_for):
    page = client_for(viewer).get(reverse("traffic", args=["shop"]))
    html = page.content.decode()
    assert page.status_code == 200
    assert html.count('class="bar-now"') >= 7 + 3  # a bar a day, and the share bars
    assert "<svg" in html and "style=" not in html and "<script>" not in html
    assert 'data-testid="turns-total">6<' in html
    assert "+66.7 pts" in html  # billing: 0% before, 4 of 6 now


def test_a_profile_no_agent_reported_to_says_how_turns_arrive_instead_of_empty_charts(
    profile, viewer, owner, client_for
):
    url = reverse("traffic", args=[profile.slug])
    tokens = reverse("tokens", args=[profile.slug])

    html = client_for(viewer).get(url).content.decode()
    as_publisher = client_for(owner).get(url).content.decode()

    (said,) = re.findall(r'data-testid="no-turns-yet">(.*?)</p>', html)
    assert said.startswith("No turns reported yet.") and f'href="{tokens}"' in said
    assert "a publisher creates one" in said and "create one on the" in as_publisher
    assert "<svg" not in html and "No turns in this period" not in html
    assert 'data-testid="nothing-to-replay"' in html and 'data-testid="start-replay"' not in html


def test_a_period_without_turns_still_charts_when_turns_were_reported_before(
    profile, viewer, client_for
):
    store(profile, [{"message": "where is my parcel"}], days_ago=20)

    html = client_for(viewer).get(reverse("traffic", args=[profile.slug])).content.decode()

    assert 'data-testid="no-turns-yet"' not in html and "<svg" in html
    assert 'data-testid="start-replay"' in html


def test_the_review_queue_holds_unmatched_menus_near_ties_and_turns_left_at_once(profile):
    store(profile, [{"message": "why was I charged twice"}])  # decisive, nothing to review
    store(profile, [{"message": "what is the weather", "event": UNMATCHED}])
    store(profile, [{"message": "parcel charged", "event": MENU}])
    store(
        profile,
        [
            {
                "message": "cost",
                "event": {"decisive": False, "runner_up": {"route": "billing", "gap": 0.05}},
            }
        ],
    )
    store(profile, [{"message": "no text", "event": UNMATCHED}])
    Event.objects.filter(message="no text").update(message=None)
    store(profile, [
        {"message": "download my invoice", "conversation": "c7", "turn": 1},
        {"message": "where is my parcel", "conversation": "c7", "turn": 2, "incumbent": "billing"},
    ])  # fmt: skip
    store(profile, [  # the next turn stayed: nothing to review
        {"message": "why was I charged twice", "conversation": "c8", "turn": 1},
        {"message": "update my card", "conversation": "c8", "turn": 2, "incumbent": "billing"},
    ])  # fmt: skip
    reasons = {item.event.message: item.reasons for item in review_queue(profile)}
    assert reasons == {
        "what is the weather": ["nothing matched"],
        "parcel charged": ["a menu was offered"],
        "cost": ["a near tie"],
        "download my invoice": ["the next turn left this route at once"],
    }


def test_labelling_a_turn_makes_an_audited_test_case_and_takes_it_off_the_queue(
    profile, editor, client_for
):
    (event,) = store(profile, [{"message": "what is the weather", "event": UNMATCHED}])
    client = client_for(editor)
    response = client.post(
        reverse("traffic-label", args=["shop", event.pk]), {"route": "shipping", "as": "test"}
    )
    assert response.status_code == 302
    case = TestCase.objects.get(message="what is the weather")
    assert case.expected_route == "shipping"
    assert AuditEntry.objects.filter(action="testcase.create", user=editor).exists()
    event.refresh_from_db()
    assert (event.right_route, event.reviewed_by) == ("shipping", editor)
    assert review_queue(profile) == []
    assert "what is the weather" in client.get(reverse("tests", args=["shop"])).content.decode()


def test_labelling_a_turn_as_an_example_adds_it_to_the_route(profile, editor, client_for):
    (event,) = store(profile, [{"message": "parcel charged", "event": MENU}])
    client_for(editor).post(
        reverse("traffic-label", args=["shop", event.pk]), {"route": "billing", "as": "example"}
    )
    assert "parcel charged" in profile.routes.get(name="billing").examples
    assert AuditEntry.objects.filter(action="route.update").exists()


def test_an_example_labelled_while_someone_else_edits_the_route_is_merged_not_lost(
    profile, editor, owner, client_for, monkeypatch
):
    # Two people label turns of one route at once: the other's save lands between this
    # label's read of the route and its save.
    (event,) = store(profile, [{"message": "parcel charged", "event": MENU}])
    real_read = review._current_route
    others = iter(["a label from someone else"])

    def read_then_another_saves(profile, name):
        route = real_read(profile, name)
        for text in others:
            other = Route.objects.get(pk=route.pk)
            other.examples = [*other.examples, text]
            save_item(other, user=owner, expected_revision=other.revision)
        return route

    monkeypatch.setattr(review, "_current_route", read_then_another_saves)
    response = client_for(editor).post(
        reverse("traffic-label", args=["shop", event.pk]), {"route": "billing", "as": "example"}
    )

    assert response.status_code == 302
    examples = profile.routes.get(name="billing").examples
    assert {"parcel charged", "a label from someone else"} <= set(examples)


def test_a_route_that_keeps_changing_under_a_label_is_a_409_in_words(
    profile, editor, client_for, monkeypatch
):
    (event,) = store(profile, [{"message": "parcel charged", "event": MENU}])

    def always_stale(route, **kwargs):
        raise Conflict("changed by someone else")

    monkeypatch.setattr(review, "save_item", always_stale)
    response = client_for(editor).post(
        reverse("traffic-label", args=["shop", event.pk]), {"route": "billing", "as": "example"}
    )

    assert response.status_code == 409
    assert "billing was being edited by others; label it again" in response.content.decode()
    event.refresh_from_db()
    assert event.reviewed_at is None


def test_an_example_needs_a_route_and_a_viewer_cannot_label(profile, editor, viewer, client_for):
    (event,) = store(profile, [{"message": "parcel charged", "event": MENU}])
    url = reverse("traffic-label", args=["shop", event.pk])
    assert client_for(viewer).post(url, {"route": "billing", "as": "test"}).status_code == 403
    page = client_for(editor).post(url, {"route": "", "as": "example"}, follow=True)
    assert "Not saved: choose the route" in page.content.decode()
    event.refresh_from_db()
    assert event.reviewed_at is None


def _answer(client, event, how, route=""):
    return client.post(
        reverse("traffic-label", args=["shop", event.pk]), {"as": how, "route": route}, follow=True
    )


def test_looks_right_confirms_the_route_and_counts_as_reviewed(profile, editor, client_for):
    (event,) = store(profile, [{"message": "cost", "event": MENU | {"route": None}}])
    (other,) = store(profile, [{"message": "what is the weather", "event": UNMATCHED}])
    page = _answer(client_for(editor), event, "confirm", route="shipping").content.decode()
    assert "Marked “cost” as right (no route)." in page
    event.refresh_from_db()
    assert event.reviewed_at is not None and event.right_route == ""  # the select is ignored
    assert [item.event for item in review_queue(profile)] == [other]
    assert reviewed_count(profile) == 1
    assert not TestCase.objects.exists()


def test_dismiss_takes_a_turn_off_the_inbox_without_counting_it_reviewed(
    profile, editor, client_for
):
    (event,) = store(profile, [{"message": "what is the weather", "event": UNMATCHED}])
    page = _answer(client_for(editor), event, "dismiss").content.decode()
    assert "Dismissed “what is the weather”." in page
    assert review_queue(profile) == [] and reviewed_count(profile) == 0
    assert "Nothing waiting for review." in page


def test_the_same_message_to_the_same_route_is_one_row_with_a_count(profile, editor, client_for):
    store(profile, [{"message": "what is the weather", "event": UNMATCHED}] * 2)
    store(profile, [{"message": "What is  the weather", "event": UNMATCHED}])
    store(profile, [{"message": "what is the weather", "event": MENU}])  # no route either
    store(profile, [{"message": "parcel charged", "event": MENU}])
    items = review_queue(profile)
    assert [(i.event.message, i.count) for i in items] == [
        ("parcel charged", 1),
        ("what is the weather", 4),
    ]
    client = client_for(editor)
    page = client.get(reverse("traffic-review", args=["shop"])).content.decode()
    assert page.count('data-testid="review-item"') == 2 and "×4" in page
    answer = _answer(client, items[1].event, "confirm").content.decode()
    assert "with the 3 other turns like it" in answer
    assert [i.event.message for i in review_queue(profile)] == ["parcel charged"]
    assert reviewed_count(profile) == 4


def test_a_short_turn_is_shown_with_the_turns_before_it(profile, editor, client_for):
    store(profile, [
        {"message": "hello", "conversation": "c9", "turn": 1},
        {"message": "my parcel never came", "conversation": "c9", "turn": 2},
        {"message": "where is my parcel", "conversation": "c9", "turn": 3, "incumbent": "shipping"},
        {"message": "yes", "conversation": "c9", "turn": 4, "incumbent": "shipping",
         "event": UNMATCHED},
    ])  # fmt: skip
    item = next(i for i in review_queue(profile) if i.event.message == "yes")
    assert item.is_short
    assert [e.message for e in item.before] == [
        "hello",
        "my parcel never came",
        "where is my parcel",
    ]
    page = client_for(editor).get(reverse("traffic-review", args=["shop"])).content.decode()
    assert '<details class="turns-before" open' in page
    assert page.index("my parcel never came") < page.index("“yes”")


def test_the_turns_before_stop_at_a_turn_that_was_not_kept(profile):
    store(profile, [
        {"message": "hello", "conversation": "c9", "turn": 1},
        {"message": "my parcel never came", "conversation": "c9", "turn": 3},
        {"message": "thanks!", "conversation": "c9", "turn": 4, "event": UNMATCHED},
    ])  # fmt: skip
    item = next(i for i in review_queue(profile) if i.event.message == "thanks!")
    assert [e.message for e in item.before] == ["my parcel never came"]


def test_the_conversation_up_to_a_turn_is_saved_as_a_multi_turn_case(profile, editor, client_for):
    store(profile, [
        {"message": "my parcel never came", "conversation": "c9", "turn": 1},
        {"message": "yes please", "conversation": "c9", "turn": 2, "incumbent": "shipping",
         "event": UNMATCHED},
    ])  # fmt: skip
    (item,) = review_queue(profile)
    page = _answer(client_for(editor), item.event, "conversation", "shipping").content.decode()
    assert "Saved “yes please” as a test case of the conversation up to it." in page
    cases = list(TestCase.objects.order_by("turn"))
    assert [(c.message, c.turn, c.expected_route) for c in cases] == [
        ("my parcel never came", 1, "shipping"),
        ("yes please", 2, "shipping"),
    ]
    assert cases[0].conversation == cases[1].conversation != ""
    assert review_queue(profile) == [] and reviewed_count(profile) == 1


def test_a_turn_without_turns_before_cannot_be_saved_as_a_conversation(profile, editor, client_for):
    (event,) = store(profile, [{"message": "what is the weather", "event": UNMATCHED}])
    page = _answer(client_for(editor), event, "conversation", "shipping").content.decode()
    assert "Not saved: the turns before this one were not kept" in page
    assert 'data-testid="save-conversation"' not in page
    assert not TestCase.objects.exists()


def test_only_a_publisher_changes_what_is_kept(profile, owner, editor, client_for):
    url = reverse("traffic", args=["shop"])
    assert client_for(editor).post(url, {"retention_days": "7"}).status_code == 403
    client_for(owner).post(url, {"retention_days": "7"})
    kept = TrafficSettings.objects.get(profile=profile)
    assert (kept.keep_message_text, kept.retention_days) == (False, 7)


def test_a_replay_of_stored_turns_on_the_draft_lists_the_flips(profile, viewer, client_for):
    store(profile, [{"message": "parcel charged"}] * 3 + [{"message": "why was I charged twice"}])
    profile.rules.update(
        keywords=["real person", "parcel"]
    )  # the draft now sends parcels to a person
    profile.draft_revision += 1
    profile.save()
    client = client_for(viewer)
    response = client.post(reverse("replay-start", args=["shop"]), {"target": "draft"})
    run = ReplayRun.objects.get()
    assert response["Location"] == reverse("replay", args=["shop", run.pk])
    assert run.status == "done"
    assert (run.report["replayed"], run.report["changed"]) == (4, 3)
    (group,) = run.report["groups"]
    assert (group["old"], group["new"], group["count"]) == ("shipping", "human", 3)
    html = client.get(response["Location"]).content.decode()
    assert "shipping → human" in html and "“parcel charged”" in html


def test_the_agents_page_and_the_publish_page_name_an_agent_on_an_older_engine(
    profile, owner, client_for
):
    promote(publish(profile, user=owner), "production", user=owner)
    _, secret = create_read_token(profile, "old agent", user=owner)
    Client().get(
        "/api/profiles/shop/packs/production",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
        HTTP_USER_AGENT="routing-core/0.0.1 python/3.11",
    )
    client = client_for(owner)
    agents = client.get(reverse("agents", args=["shop"])).content.decode()
    assert "old agent" in agents and "0.0.1" in agents and "upgrade it before you publish" in agents
    publish_page = client.get(reverse("publish", args=["shop"])).content.decode()
    assert re.search(r"old agent on production: routing_core 0\.0\.1", publish_page)


def test_a_replay_runs_on_a_worker_process_over_several_chunks_and_stores_the_flips(
    job_worker, profile, viewer
):
    from studio.traffic.replays import CHUNK, start_replay

    store(profile, [{"message": "parcel charged"}] * 500)
    for _ in range(CHUNK // 500 + 1):  # batches of at most 500
        store(profile, [{"message": "why was I charged twice"}] * 500)
    profile.rules.update(keywords=["real person", "parcel"])
    run = start_replay(profile, "draft", user=viewer)
    wait_for(lambda: ReplayRun.objects.get(pk=run.pk).finished_at, what="the replay")
    run.refresh_from_db()
    assert run.status == "done" and run.done == run.total == 500 * (CHUNK // 500 + 2)
    assert run.report["changed"] == 500 and "turns" not in run.report["groups"][0]
    assert run.changes.count() == 500  # every changed turn, as a row naming its event


def test_a_replay_page_shows_a_page_of_changed_turns_at_a_time(profile, viewer, client_for):
    from studio.traffic.replays import PAGE

    store(profile, [{"message": f"parcel charged {i}"} for i in range(PAGE * 2 + 20)])
    store(profile, [{"message": "why was I charged twice"}] * 5)
    profile.rules.update(keywords=["real person", "parcel"])
    client = client_for(viewer)
    response = client.post(reverse("replay-start", args=["shop"]), {"target": "draft"})
    run = ReplayRun.objects.get()
    assert run.report["changed"] == PAGE * 2 + 20
    assert "parcel" not in json.dumps(run.report)  # counts only: the texts stay in the events

    seen, url, pages = [], response["Location"], 0
    while url:
        html = client.get(url).content.decode()
        turns = re.findall(r"“(parcel charged \d+)”", html)
        assert 0 < len(turns) <= PAGE
        seen += turns
        pages += 1
        more = re.search(r'href="([^"]+)" data-testid="next-page"', html)
        url = response["Location"] + more.group(1).replace("&amp;", "&") if more else ""
    assert pages == 3 and sorted(seen) == sorted(
        f"parcel charged {i}" for i in range(PAGE * 2 + 20)
    )

    Event.objects.filter(message=seen[0]).delete()  # retention, say: the first one shown
    html = client.get(response["Location"]).content.decode()
    assert "(this turn was deleted since)" in html


def test_turning_text_off_offers_to_remove_the_stored_texts_now(profile, owner, client_for):
    store(profile, [{"message": "why was I charged twice"}, {"message": "download my invoice"}])
    client = client_for(owner)

    saved = client.post(
        reverse("traffic", args=["shop"]), {"retention_days": "30"}, follow=True
    ).content.decode()
    assert "unless you remove them now" in saved and 'data-testid="scrub-texts"' in saved

    response = client.post(reverse("traffic-scrub", args=["shop"]))

    job = profile.scrub_runs.get()
    assert response["Location"] == f"/profiles/shop/jobs/scrub/{job.pk}/"
    assert job.status == "done" and job.done == 2
    assert "Removing stored message texts" in client.get(response["Location"]).content.decode()
    for event in Event.objects.all():
        assert event.message is None
        evidence = event.event["evidence"]
        assert evidence is None or (evidence["text"] is None and evidence["terms"] == [])
    page = client.get(reverse("traffic", args=["shop"])).content.decode()
    assert 'data-testid="scrub-texts"' not in page
    assert AuditEntry.objects.filter(action="traffic.scrub").exists()


def test_texts_are_not_removed_while_they_are_kept_or_by_an_editor(
    profile, owner, editor, client_for
):
    store(profile, [{"message": "why was I charged twice"}])
    assert client_for(editor).post(reverse("traffic-scrub", args=["shop"])).status_code == 403
    client_for(owner).post(reverse("traffic-scrub", args=["shop"]))
    assert Event.objects.get().message == "why was I charged twice"


# -- dates: calendar days and whole hours where the viewer is ------------------------------------


def _at(when: datetime, profile: Profile, n: int) -> None:
    stored = store(profile, [{"message": "why was I charged twice"}] * n)
    Event.objects.filter(pk__in=[e.pk for e in stored]).update(received=when)
    rebuild(profile.pk)


def test_turns_land_on_the_calendar_day_they_were_sent(profile):
    sent = datetime(2026, 12, 2, 6, 10, tzinfo=UTC)  # a Wednesday
    _at(sent, profile, 200)

    figures = period(profile, 7, now=datetime(2026, 12, 2, 12, 0, tzinfo=UTC))

    counted = {f"{at:%a %d}": n for at, n in figures.buckets if n}
    assert counted == {"Wed 02": 200}
    assert f"{figures.buckets[-1][0]:%a %d %H:%M}" == "Wed 02 00:00"


def test_the_one_day_axis_reads_whole_hours(profile):
    _at(datetime(2026, 12, 2, 6, 10, tzinfo=UTC), profile, 200)

    figures = period(profile, 1, now=datetime(2026, 12, 2, 6, 11, tzinfo=UTC))
    chart = turns_chart(figures.buckets, hourly=True)

    assert len(figures.buckets) == 24
    assert {f"{at:%H:%M}": n for at, n in figures.buckets if n} == {"06:00": 200}
    assert chart.x_ticks and all(t.label.endswith(":00") for t in chart.x_ticks)


@pytest.mark.parametrize(("zone", "offset"), [("UTC", 0), ("Pacific/Honolulu", -10)])
def test_the_days_are_the_viewers(zone, offset, profile, viewer, client_for):
    sent = (timezone.now() - timedelta(days=1)).replace(hour=6, minute=10, tzinfo=UTC)
    _at(sent, profile, 200)
    client = client_for(viewer)
    client.cookies["tz"] = zone

    html = client.get(reverse("traffic", args=[profile.slug])).content.decode()

    local = sent + timedelta(hours=offset)  # Honolulu keeps no summer time
    assert f"<title>{local:%a %d %b}: 200 turns</title>" in html
    assert f"Days in {zone} time." in html


@pytest.mark.parametrize(("peak", "labels"), [(0, ["0", "1"]), (1, ["0", "1"]), (3, ["0", "1", "3"]), (8, ["0", "4", "8"])])  # fmt: skip
def test_the_turns_axis_labels_each_line_with_the_count_it_stands_at(peak, labels):
    start = datetime(2026, 12, 2, tzinfo=UTC)
    chart = turns_chart([(start, peak), (start + timedelta(days=1), 0)], hourly=False)

    assert [t.label for t in chart.y_ticks] == labels
    for tick in chart.y_ticks:  # a label's height is its count's share of the axis
        share = (chart.bottom - tick.at) / (chart.bottom - chart.top)
        assert share == pytest.approx(int(tick.label) / max(peak, 1))


def test_a_re_asked_turn_is_in_the_inbox_in_plain_words_and_can_be_shown_alone(
    profile, viewer, client_for
):
    store(profile, [
        {"message": "where is my parcel", "conversation": "r1", "turn": 1},
        {"message": "no, I meant my invoice", "conversation": "r1", "turn": 2,
         "incumbent": "shipping"},
    ])  # fmt: skip
    store(profile, [{"message": "what is the weather", "event": UNMATCHED}])
    re_asked = "the user re-asked after this route"
    reasons = {item.event.message: item.reasons for item in review_queue(profile)}
    assert re_asked in reasons["where is my parcel"]
    assert reasons["what is the weather"] == ["nothing matched"]
    only = review_queue(profile, reason="reasked")
    assert [item.event.message for item in only] == ["where is my parcel"]

    client = client_for(viewer)
    url = reverse("traffic-review", args=["shop"])
    page = client.get(url, {"reason": "reasked"}).content.decode()
    assert page.count('data-testid="review-item"') == 1
    assert "“where is my parcel”" in page and re_asked in page
    assert "what is the weather" not in page
    assert '<option value="reasked" selected>' in page
    everything = client.get(url, {"reason": "nonsense"}).content.decode()
    assert "what is the weather" in everything and "where is my parcel" in everything
    Event.objects.update(reasked=False)
    none_left = client.get(url, {"reason": "reasked"}).content.decode()
    assert "No turn waiting for review with “the user re-asked after this route”" in none_left


def test_an_answer_from_a_filtered_inbox_goes_back_to_it(profile, editor, client_for):
    store(profile, [
        {"message": "where is my parcel", "conversation": "r2", "turn": 1},
        {"message": "where is my parcel", "conversation": "r2", "turn": 2,
         "incumbent": "shipping"},
    ])  # fmt: skip
    event = Event.objects.get(conversation="r2", turn=1)
    assert event.reasked
    answer = client_for(editor).post(
        reverse("traffic-label", args=["shop", event.pk]), {"as": "dismiss", "reason": "reasked"}
    )
    assert answer.status_code == 302
    assert answer["Location"] == reverse("traffic-review", args=["shop"]) + "?reason=reasked"
