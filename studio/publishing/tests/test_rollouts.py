"""Rollouts through the API and the pull: the header, the 304 fast path, re-asks, conditions."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from routing_core import Router, load_pack
from routing_core.rollout import ROLLOUT_HEADER, parse_rollout
from studio.models import AuditEntry, Event, Rollout, RolloutStatus, TokenScope
from studio.publishing.rollout_guards import figures, verdict
from studio.publishing.versions import promote, publish
from studio.shared.tokens import create_api_token, create_read_token

API = "/api/profiles/shop"


@pytest.fixture
def two_versions(profile, owner):
    live = publish(profile, user=owner)
    promote(live, "production", user=owner)
    profile.near_tie_margin = 0.2
    profile.save()
    return live, publish(profile, user=owner, environment=None)


@pytest.fixture
def api(owner) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {create_api_token(owner, 'script')[1]}"}


def start(api, **body) -> dict:
    response = Client().post(
        f"{API}/environments/production/rollout",
        json.dumps({"version": 2, "mode": "canary", "share": 30, **body}),
        content_type="application/json",
        **api,
    )
    assert response.status_code == 201, response.content
    return response.json()


def test_a_pull_names_the_rollout_and_still_answers_304_until_it_changes(
    profile, owner, two_versions, api
):
    pull = {"HTTP_AUTHORIZATION": f"Bearer {create_read_token(profile, 'a', user=owner)[1]}"}
    url = f"{API}/packs/production"
    before = Client().get(url, **pull)
    assert ROLLOUT_HEADER not in before
    rollout = start(api)
    first = Client().get(url, HTTP_IF_NONE_MATCH=before["ETag"], **pull)
    assert first.status_code == 200 and first["ETag"] != before["ETag"]
    named = parse_rollout(first[ROLLOUT_HEADER])
    assert named is not None and (named.id, named.mode, named.share) == (
        rollout["id"],
        "canary",
        30,
    )
    again = Client().get(url, HTTP_IF_NONE_MATCH=first["ETag"], **pull)
    assert again.status_code == 304 and again[ROLLOUT_HEADER] == first[ROLLOUT_HEADER]
    candidate = Client().get(url + "/candidate", **pull)
    assert load_pack(candidate.content).checksum == named.checksum == two_versions[1].checksum
    Client().post(f"{API}/rollouts/{rollout['id']}/stop", **api)
    after = Client().get(url, HTTP_IF_NONE_MATCH=first["ETag"], **pull)
    assert after.status_code == 200 and ROLLOUT_HEADER not in after
    assert Client().get(url + "/candidate", **pull).status_code == 404


def test_a_second_rollout_on_the_environment_is_a_conflict_and_bad_settings_are_refused(
    two_versions, api
):
    start(api)
    again = Client().post(
        f"{API}/environments/production/rollout",
        json.dumps({"version": 2, "mode": "canary", "share": 30}),
        content_type="application/json",
        **api,
    )
    assert again.status_code == 409 and "has a rollout already" in again.json()["detail"]
    bad = Client().post(
        f"{API}/environments/staging/rollout",
        json.dumps({"version": 2, "mode": "canary", "share": 0}),
        content_type="application/json",
        **api,
    )
    assert bad.status_code == 422
    assert [e["path"] for e in bad.json()["errors"]] == ["share"]


def _report(profile, owner, records: list[dict]) -> None:
    token = create_read_token(profile, "ev", user=owner, scope=TokenScope.EVENTS)[1]
    response = Client().post(
        f"{API}/events",
        json.dumps({"events": records}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 202, response.content


def _turn(router, conversation, turn, message, rollout=None) -> dict:
    record = {"conversation": conversation, "turn": turn, "message": message}
    record["event"] = router.route(message).to_event()
    if rollout is not None:
        record["rollout"] = rollout
    return record


def test_a_repeat_or_a_correction_marks_the_turn_before_as_re_asked_whatever_the_order(
    profile, owner, two_versions
):
    router = Router(load_pack(two_versions[0].pack_json))
    _report(profile, owner, [_turn(router, "c2", 1, "no, I meant my invoice")])
    _report(
        profile,
        owner,
        [
            _turn(router, "c1", 0, "where is my parcel"),
            _turn(router, "c1", 1, "where is my parcel??"),
            _turn(router, "c1", 2, "thanks, and my invoice?"),
            _turn(router, "c2", 0, "why was I charged twice"),
        ],
    )
    reasked = set(Event.objects.filter(reasked=True).values_list("conversation", "turn"))
    assert reasked == {("c1", 0), ("c2", 0)}


def test_re_asks_on_the_candidate_break_a_condition(profile, owner, two_versions, api):
    rollout = Rollout.objects.get(pk=start(api, max_reask_rise=10, min_turns=4)["id"])
    router = Router(load_pack(two_versions[0].pack_json))
    arm = {"id": rollout.pk, "mode": "canary", "live_version": 1, "candidate_version": 2}
    live, candidate = {**arm, "arm": "live"}, {**arm, "arm": "candidate"}
    records = []
    for i in range(4):
        records += [
            _turn(router, f"l{i}", 0, "where is my parcel", live),
            _turn(router, f"l{i}", 1, "and my invoice", live),
            _turn(router, f"k{i}", 0, "where is my parcel", candidate),
            _turn(router, f"k{i}", 1, "where is my parcel please", candidate),
        ]
    _report(profile, owner, records)
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.HALTED, rollout.figures
    assert rollout.reason.startswith("the re-asks rose by 50 points")
    halted = AuditEntry.objects.get(action="rollout.halted")
    assert halted.after["figures"]["candidate"]["reask_rate"] == 50.0


def test_conditions_are_judged_only_after_the_set_number_of_turns(two_versions, api):
    rollout = Rollout.objects.get(pk=start(api, max_unmatched_rise=1, min_turns=10)["id"])
    found = figures(rollout)
    assert verdict(rollout, found) == ("wait", "0 of the 10 turns to judge on")
    found["candidate"]["turns"], found["unmatched_rise"] = 10, 0.5
    found["live"]["unmatched_rate"], found["candidate"]["unmatched_rate"] = 1.0, 1.5
    assert verdict(rollout, found)[0] == "hold"
    found["unmatched_rise"], found["candidate"]["unmatched_rate"] = 3.0, 4.0
    assert verdict(rollout, found)[0] == "halt"


def test_the_start_form_refuses_a_bad_share_with_the_reason_and_keeps_what_was_typed(
    two_versions, owner, client_for
):
    client = client_for(owner)
    response = client.post(
        "/profiles/shop/rollouts/new/",
        {
            "version": "2",
            "environment": "production",
            "mode": "canary",
            "share": "0",
            "max_unmatched_rise": "3",
            "min_turns": "250",
            "on_hold": "promote",
        },
    )
    assert response.status_code == 422
    page = response.content.decode()
    assert "A canary serves 1 to 100 percent of conversations" in page
    assert 'value="3"' in page and 'value="250"' in page
    assert 'value="promote" selected' in page and 'value="canary" checked' in page
    assert not Rollout.objects.exists()


def test_a_publisher_stops_a_rollout_from_its_page_and_the_history_keeps_it(
    two_versions, owner, client_for, api
):
    rollout = start(api, mode="shadow")
    client = client_for(owner)
    page = client.get(f"/profiles/shop/rollouts/{rollout['id']}/")
    assert page.status_code == 200 and "Shadow: every turn is answered by version 1" in (
        page.content.decode()
    )
    client.post(f"/profiles/shop/rollouts/{rollout['id']}/act/", {"action": "stop"})
    assert Rollout.objects.get().status == RolloutStatus.STOPPED
    assert AuditEntry.objects.filter(action="rollout.stopped").exists()
