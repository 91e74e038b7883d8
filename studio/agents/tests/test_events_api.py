"""Agents and their events through the real URL stack: pulls recorded, events validated and stored."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from routing_core import Router
from studio.agents.events import expire_events
from studio.agents.fleet import agent_engine, can_read, unable_to_read
from studio.models import Agent, Event, Profile, TokenScope, TrafficSettings
from studio.publishing.versions import promote, publish
from studio.shared.packs import build_pack
from studio.shared.tokens import create_read_token, revoke

API = "/api/profiles"
UA = "routing-core/0.0.9 python/3.12"


def bearer(secret: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


@pytest.fixture
def event_token(profile, owner) -> str:
    return create_read_token(profile, "agent events", user=owner, scope=TokenScope.EVENTS)[1]


def _records(profile: Profile, messages: list[str]) -> list[dict]:
    router = Router(build_pack(profile))
    return [
        {"conversation": "c1", "turn": i, "message": m, "event": router.route(m).to_event()}
        for i, m in enumerate(messages)
    ]


def post(secret: str, body: object, slug: str = "shop"):
    return Client().post(
        f"{API}/{slug}/events", json.dumps(body), content_type="application/json", **bearer(secret)
    )


def test_an_event_token_stores_a_batch_with_its_columns_and_redacted_text(profile, event_token):
    records = _records(profile, ["why was I charged twice, mail jo@x.org", "hello there"])
    response = post(event_token, {"events": records})
    assert response.status_code == 202 and response.json() == {"accepted": 2}
    first, second = Event.objects.order_by("turn")
    assert first.message == "why was I charged twice, mail [email]"
    assert (first.route, first.verdict, first.conversation, first.turn) == (
        records[0]["event"]["route"] or "",
        records[0]["event"]["verdict"],
        "c1",
        0,
    )
    assert first.event["schema"] == "route-decision/1" and first.event["tools"]
    assert second.verdict == records[1]["event"]["verdict"]


def test_a_profile_that_keeps_no_text_stores_none(profile, event_token):
    TrafficSettings.objects.create(profile=profile, keep_message_text=False)
    records = _records(profile, ["download my invoice", "why was I charged twice"])
    quoted = [r["event"]["evidence"] for r in records]
    assert any(e and (e["text"] or e["terms"]) for e in quoted)  # the agent sent quotes
    post(event_token, {"events": records})
    for event in Event.objects.all():
        assert event.message is None
        evidence = event.event["evidence"]
        assert evidence is None or (evidence["text"] is None and evidence["terms"] == [])


def test_evidence_an_agent_sent_unredacted_is_stored_redacted(profile, event_token):
    (record,) = _records(profile, ["why was I charged twice"])
    record["message"] = "why was I charged twice, mail jo@x.org"
    record["event"]["evidence"] = {
        "source": "rule",
        "route": "billing",
        "text": "jo@x.org",
        "terms": [{"term": "charged", "weight": 1.0}, {"term": "smithson", "weight": 0.5}],
    }
    post(event_token, {"events": [record]})
    stored = Event.objects.get()
    assert stored.message == "why was I charged twice, mail [email]"
    assert stored.event["evidence"]["text"] == "[email]"
    assert [t["term"] for t in stored.event["evidence"]["terms"]] == ["charged"]


@pytest.mark.parametrize(
    "change",
    [
        {"event": {"schema": "route-decision/9"}},
        {"event": {"verdict": "maybe"}},
        {"message": "x" * 4001},
        {"turn": -1},
        {"extra": 1},
    ],
)
def test_an_invalid_event_refuses_the_whole_batch(profile, event_token, change):
    good = _records(profile, ["download my invoice", "update my card"])
    bad = {**good[1], **{k: v for k, v in change.items() if k != "event"}}
    if "event" in change:
        bad["event"] = {**good[1]["event"], **change["event"]}
    response = post(event_token, {"events": [good[0], bad]})
    assert response.status_code == 422
    assert Event.objects.count() == 0


def test_a_batch_over_500_events_is_refused(profile, event_token):
    records = _records(profile, ["download my invoice"]) * 501
    assert post(event_token, {"events": records}).status_code == 422


def test_only_an_event_token_of_the_profile_may_send_events(profile, owner, event_token):
    records = {"events": _records(profile, ["download my invoice"])}
    pull_secret = create_read_token(profile, "puller", user=owner)[1]
    other = Profile.objects.create(slug="other", name="Other")
    others = create_read_token(other, "x", user=owner, scope=TokenScope.EVENTS)[1]
    assert post(pull_secret, records).status_code == 401
    assert post(others, records).status_code == 404
    revoked, secret = create_read_token(profile, "old", user=owner, scope=TokenScope.EVENTS)
    revoke(revoked, user=owner)
    assert post(secret, records).status_code == 401
    assert Event.objects.count() == 0


def test_an_event_token_cannot_pull_a_pack(profile, owner, event_token):
    promote(publish(profile, user=owner), "production", user=owner)
    response = Client().get(f"{API}/shop/packs/production", **bearer(event_token))
    assert response.status_code == 401


def test_each_pull_upserts_the_agent_with_its_version_and_the_version_served(profile, owner):
    promote(publish(profile, user=owner), "production", user=owner)
    token, secret = create_read_token(profile, "agent", user=owner)
    first = Client().get(f"{API}/shop/packs/production", HTTP_USER_AGENT=UA, **bearer(secret))
    seen = Agent.objects.get()
    again = Client().get(
        f"{API}/shop/packs/production",
        HTTP_USER_AGENT="routing-core/0.2.0 python/3.13",
        HTTP_IF_NONE_MATCH=first["ETag"],
        **bearer(secret),
    )
    assert again.status_code == 304
    agent = Agent.objects.get()  # still one row
    assert (agent.token, agent.environment, agent.served_version) == (token, "production", 1)
    assert agent.engine_version == "0.2.0" and agent.last_seen >= seen.last_seen
    assert agent.first_seen == seen.first_seen


@pytest.mark.parametrize(
    ("agent", "made_by", "readable"),
    [("0.1.0", "0.1.0", True), ("0.2.0", "0.1.0", True), ("0.0.9", "0.1.0", False),
     ("", "0.1.0", False), ("not-a-version", "0.1.0", False), ("0.10.0", "0.9.1", True)],
)  # fmt: skip
def test_an_agent_reads_packs_made_by_its_own_or_an_older_engine(agent, made_by, readable):
    assert can_read(agent, made_by) is readable


def test_the_engine_version_comes_from_the_user_agent():
    assert agent_engine(UA) == "0.0.9"
    assert agent_engine("curl/8.0") == ""


def test_agents_on_an_older_engine_are_listed_until_their_token_is_revoked(profile, owner):
    promote(publish(profile, user=owner), "production", user=owner)
    token, secret = create_read_token(profile, "old agent", user=owner)
    Client().get(f"{API}/shop/packs/production", HTTP_USER_AGENT=UA, **bearer(secret))
    assert [a.token for a in unable_to_read(profile, "0.1.0")] == [token]
    assert unable_to_read(profile, "0.0.9") == []
    revoke(token, user=owner)
    assert unable_to_read(profile, "0.1.0") == []


def test_events_older_than_the_retention_period_expire(profile, event_token):
    post(event_token, {"events": _records(profile, ["download my invoice", "update my card"])})
    TrafficSettings.objects.create(profile=profile, retention_days=7)
    old = Event.objects.order_by("turn").first()
    Event.objects.filter(pk=old.pk).update(received=timezone.now() - timedelta(days=8))
    assert expire_events() == 1
    assert Event.objects.count() == 1


def test_every_job_worker_expires_old_events_once_an_expiry_period(profile, event_token):
    from studio.management.commands.jobs_worker import expire_if_due

    post(event_token, {"events": _records(profile, ["download my invoice", "update my card"])})
    TrafficSettings.objects.create(profile=profile, retention_days=7)
    week_ago = timezone.now() - timedelta(days=8)
    first, second = Event.objects.order_by("turn")
    Event.objects.filter(pk=first.pk).update(received=week_ago)

    ran = expire_if_due(float("-inf"), 100.0)
    assert ran == 100.0 and list(Event.objects.all()) == [second]

    Event.objects.filter(pk=second.pk).update(received=week_ago)
    assert expire_if_due(ran, 101.0) == ran  # not due yet: nothing deleted
    assert Event.objects.count() == 1
    assert expire_if_due(ran, 100.0 + django_settings.STUDIO_EVENT_EXPIRY_S) > ran
    assert Event.objects.count() == 0


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
RECORD = st.fixed_dictionaries(
    {"event": st.fixed_dictionaries({"schema": st.just("route-decision/1")}, optional={
        "verdict": st.sampled_from(["move", "stay", "menu", "unmatched", "x"]),
        "by": st.sampled_from(["rule", "scorer", "none", "?"]), "route": JSON,
        "ranked": JSON, "runner_up": JSON, "tiers": JSON, "pack": JSON})},
    optional={"message": JSON, "turn": JSON, "conversation": JSON, "at": JSON},
)  # fmt: skip


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=st.one_of(JSON, st.fixed_dictionaries({"events": st.lists(RECORD | JSON, max_size=3)})))
def test_any_json_body_is_stored_or_refused_never_a_server_error(profile, event_token, body):
    before = Event.objects.count()
    response = post(event_token, body)
    assert response.status_code in (202, 422), response.content[:300]
    stored = Event.objects.count() - before
    assert stored == (response.json()["accepted"] if response.status_code == 202 else 0)


def test_the_traffic_page_shows_what_agents_dropped(profile, owner, event_token, client_for):
    post(event_token, {"dropped": 17, "events": _records(profile, ["download my invoice"])})
    html = client_for(owner).get("/profiles/shop/traffic/").content.decode()
    assert re.search(r'data-testid="dropped"><strong class="warn">17</strong>', html)


def test_repeated_pulls_with_the_same_facts_write_the_agent_row_once_a_minute(profile, owner):
    promote(publish(profile, user=owner), "production", user=owner)
    _, secret = create_read_token(profile, "agent", user=owner)

    def pull():
        return Client().get(f"{API}/shop/packs/production", HTTP_USER_AGENT=UA, **bearer(secret))

    pull()
    Agent.objects.update(last_seen=timezone.now() - timedelta(hours=1))
    pull()
    assert Agent.objects.get().last_seen < timezone.now() - timedelta(
        minutes=59
    )  # not written again
    Agent.objects.all().delete()
    Client().get(
        f"{API}/shop/packs/production",
        HTTP_USER_AGENT="routing-core/9.9 python/3.13",
        **bearer(secret),
    )
    assert Agent.objects.get().engine_version == "9.9"  # a changed fact is written at once


class Nested:
    """JSON nested `depth` objects deep, written out by hand (json.dumps stops near 1,000)."""

    def __init__(self, depth: int) -> None:
        self.depth = depth

    def json(self) -> str:
        return '{"a":' * self.depth + '"x"' + "}" * self.depth


def _body(value: object) -> str:
    """The request body, with each Nested spliced in as its own JSON."""
    nested: list[Nested] = []

    def mark(item: object) -> str:
        assert isinstance(item, Nested)
        nested.append(item)
        return f"@@{len(nested) - 1}@@"

    text = json.dumps(value, default=mark)
    for i, item in enumerate(nested):
        text = text.replace(f'"@@{i}@@"', item.json())
    return text


@pytest.mark.parametrize(
    "change",
    [
        {"message": "hello\x00there"},
        {"conversation": "c\x00"},
        {"event": {"note": "a\x00b"}},
        {"event": {"no\x00te": "ab"}},
        {"event": {"extras": ["\ud800"]}},
        {"event": {"extras": Nested(900)}},
        {"event": {"extras": Nested(100_000)}},
    ],
    ids=["message-nul", "conversation-nul", "value-nul", "key-nul", "surrogate", "900", "100k"],
)
def test_text_no_database_stores_is_refused_in_words_not_a_500(profile, event_token, change):
    (record,) = _records(profile, ["download my invoice"])
    event = {**record["event"], **change.pop("event", {})}
    body = _body({"events": [{**record, **change, "event": event}]})
    response = Client().post(
        f"{API}/shop/events", body, content_type="application/json", **bearer(event_token)
    )
    assert response.status_code in (400, 422), response.content[:300]
    assert response.json()["detail"]
    assert not Event.objects.exists()


@pytest.mark.parametrize("at", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"])
def test_an_at_far_from_the_studios_clock_is_refused_with_the_window(profile, event_token, at):
    (record,) = _records(profile, ["download my invoice"])
    response = post(event_token, {"events": [{**record, "at": at}]})
    assert response.status_code == 422
    assert "the studio's clock" in json.dumps(response.json())
    assert not Event.objects.exists()


def test_an_at_within_the_window_is_stored(profile, event_token):
    (record,) = _records(profile, ["download my invoice"])
    at = (timezone.now() - timedelta(days=3)).isoformat()
    assert post(event_token, {"events": [{**record, "at": at}]}).status_code == 202
    assert Event.objects.get().at is not None


def test_turn_true_is_refused_not_taken_as_turn_one(profile, event_token):
    (record,) = _records(profile, ["download my invoice"])
    response = post(event_token, {"events": [{**record, "turn": True}]})
    assert response.status_code == 422
    assert not Event.objects.exists()


def test_a_batch_sent_twice_under_one_id_is_stored_once(profile, event_token):
    records = _records(profile, ["download my invoice", "hello there"])
    first = post(event_token, {"batch": "b-1", "events": records})
    again = post(event_token, {"batch": "b-1", "events": records})
    assert first.status_code == again.status_code == 202
    assert first.json() == again.json() == {"accepted": 2}
    assert Event.objects.count() == 2
    post(event_token, {"batch": "b-2", "events": records})
    assert Event.objects.count() == 4


def test_the_idempotency_key_header_stores_a_batch_once(profile, event_token):
    records = _records(profile, ["download my invoice"])
    url = f"{API}/shop/events"
    for _ in range(2):
        response = Client().post(
            url,
            json.dumps({"events": records}),
            content_type="application/json",
            HTTP_IDEMPOTENCY_KEY="retry-7",
            **bearer(event_token),
        )
        assert response.status_code == 202
    assert Event.objects.count() == 1
    bad = Client().post(
        url,
        json.dumps({"events": records}),
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="é" * 3,
        **bearer(event_token),
    )
    assert bad.status_code == 422 and "Idempotency-Key" in json.dumps(bad.json())
