"""A publisher starts a shadow rollout, reads the disagreements and the chart of live against
candidate over time, sets a condition, watches it halt."""

from __future__ import annotations

import re

from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from routing_core import Router, load_pack
from studio.agents.events import EventBatchIn, ingest
from studio.models import Profile, Rollout, Version
from studio.publishing.versions import promote, publish
from tests.e2e.conftest import sign_in


def _versions(profile: Profile) -> tuple[Version, Version]:
    """Version 1 live on production, and a version 2 whose routes speak of something else."""
    user = User.objects.get(username="demo")
    live = publish(profile, user=user)
    promote(live, "production", user=user)
    for route in profile.routes.all():
        route.examples = [f"sing me a song about {route.name} zebras", f"planet {route.name}"]
        route.description, route.keywords, route.never = f"songs and planets {route.name}", [], []
        route.save()
    return live, publish(profile, user=user, environment=None)


def _report_shadow_turns(profile: Profile, rollout: Rollout, messages: list[str]) -> None:
    """What an agent in shadow reports: the live decision, the candidate's beside it."""
    live = Router(load_pack(rollout.live.pack_json))
    candidate = Router(load_pack(rollout.candidate.pack_json))
    records = []
    for i, message in enumerate(messages):
        shadow = candidate.route(message)
        records.append(
            {
                "conversation": f"c{i}",
                "turn": 0,
                "message": message,
                "event": live.route(message).to_event(),
                "rollout": {
                    "id": rollout.pk,
                    "mode": "shadow",
                    "arm": "live",
                    "shadow": {"route": shadow.route, "verdict": shadow.verdict},
                },
            }
        )
    ingest(profile, EventBatchIn.model_validate({"events": records}))


def _lost_by_the_candidate(live: Version, candidate: Version) -> list[str]:
    """Example messages the live version routes and the candidate leaves unmatched."""
    old, new = Router(load_pack(live.pack_json)), Router(load_pack(candidate.pack_json))
    texts = [t for r in load_pack(live.pack_json).routes for t in r.examples]
    lost = [t for t in texts if new.route(t).verdict == "unmatched" != old.route(t).verdict]
    assert lost, "the candidate must lose some turns for this test"
    return lost


def test_a_publisher_starts_a_shadow_rollout_sets_a_condition_and_watches_it_halt(
    page: Page, live_server, demo
) -> None:
    profile = Profile.objects.get(slug="support")
    live, candidate = _versions(profile)
    lost = _lost_by_the_candidate(live, candidate)
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/profiles/support/versions/")
    page.locator("#version-2").get_by_role("link", name="Try on production…").click()
    page.get_by_role("radio", name=re.compile("Shadow")).check()
    page.get_by_role("button", name="Start the rollout").click()
    status = page.get_by_test_id("rollout-status")
    expect(status).to_contain_text("Running")

    rollout = Rollout.objects.get()
    _report_shadow_turns(profile, rollout, lost[:5])
    page.reload()
    expect(page.get_by_test_id("disagreement-rate")).to_contain_text("on 5 of 5 turns (100.0%)")
    expect(page.get_by_test_id("rollout-samples")).to_contain_text(lost[0])
    expect(page.get_by_test_id("rollout-moves")).to_contain_text("none")
    # Live against candidate over time: a chart that names itself, its figures one click away.
    chart = page.get_by_role("img", name=re.compile("Share of turns nothing matched, per hour"))
    expect(chart).to_be_visible()
    expect(chart.locator("circle.s-acc")).not_to_have_count(0)  # the live pack's hours
    expect(chart.locator("circle.s-menu")).not_to_have_count(0)  # the candidate's
    expect(chart.locator("desc")).to_contain_text("The candidate pack: nothing matched on 100%")
    hours = page.get_by_test_id("rollout-hours")
    expect(hours).to_be_hidden()
    page.get_by_text("The same figures as a table").click()
    expect(hours).to_be_visible()
    expect(hours).to_contain_text("100.0%")

    conditions = page.locator("#rollout-conditions")
    conditions.get_by_label("Halt if the unmatched rate rises by more than").fill("5")
    conditions.get_by_label("Judge after at least").fill("10")
    conditions.get_by_role("button", name="Save the conditions").click()
    expect(page.locator(".flash")).to_contain_text("Conditions saved")

    _report_shadow_turns(profile, rollout, (lost * 10)[:10])
    page.reload()
    expect(status).to_have_attribute("data-status", "halted")
    expect(status).to_contain_text("Halted: the unmatched rate rose by")
    page.goto(f"{live_server.url}/profiles/support/versions/")
    expect(page.get_by_test_id("rollout-link-production")).to_have_count(0)
