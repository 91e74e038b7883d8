"""The event reporter against a real HTTP server on loopback: batches, redaction, and never a wait."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import given
from hypothesis import strategies as st

from routing_core import Router, load_pack
from routing_core.redaction import redact, scrub_evidence
from routing_core.remote import PackFetcher, RemoteRouter
from routing_core.reporting import EventReporter
from tests.routing_core.conftest import PACKS


class EventSink:
    """A studio stand-in that stores every batch POSTed to it, or is slow on demand."""

    def __init__(self) -> None:
        self.batches: list[dict[str, object]] = []
        self.headers: list[dict[str, str]] = []
        self.delay = 0.0
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                time.sleep(sink.delay)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                sink.batches.append(json.loads(body))
                sink.headers.append(dict(self.headers))
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/api/profiles/support/events"

    @property
    def records(self) -> list[dict[str, object]]:
        return [r for b in self.batches for r in b["events"]]  # type: ignore[attr-defined]


@pytest.fixture
def sink() -> Iterator[EventSink]:
    s = EventSink()
    thread = threading.Thread(target=s.httpd.serve_forever, daemon=True)
    thread.start()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


@pytest.fixture(scope="module")
def router() -> Router:
    return Router(load_pack((PACKS / "support.json").read_text(encoding="utf-8")))


def test_it_sends_batches_of_redacted_records_with_the_token_and_user_agent(sink, router):
    reporter = EventReporter(sink.url, token="rse_secret", batch_size=2, flush_every=0.05)
    for i, text in enumerate(["refund to jo@example.com", "card 4111 1111 1111 1111", "hello"]):
        assert reporter.report(router.route(text), text, conversation="c1", turn=i)
    assert reporter.flush(5)
    assert [len(b["events"]) for b in sink.batches] == [2, 1]  # type: ignore[arg-type]
    messages = [r["message"] for r in sink.records]
    assert messages == ["refund to [email]", "card [card]", "hello"]
    first = sink.records[0]
    assert first["conversation"] == "c1" and first["turn"] == 0
    assert first["event"]["schema"] == "route-decision/1"  # type: ignore[index]
    assert sink.headers[0]["Authorization"] == "Bearer rse_secret"
    assert re.fullmatch(r"routing-core/\S+ python/\d+\.\d+", sink.headers[0]["User-Agent"])
    assert reporter.stats.sent == 3 and reporter.stats.dropped == 0


def test_a_remote_router_reports_each_turn_it_routes(sink, router):
    reporter = EventReporter(sink.url, token="t", flush_every=0.01)
    remote = RemoteRouter(PackFetcher("http://127.0.0.1:9/p"), router.pack, reporter=reporter)
    decision = remote.route("I want a refund", conversation="c9", turn=2)
    assert reporter.flush(5)
    (record,) = sink.records
    assert record["event"]["route"] == decision.route  # type: ignore[index]
    assert (record["conversation"], record["turn"]) == ("c9", 2)


@pytest.fixture(scope="module")
def email_rule_router() -> Router:
    """The support pack with a first rule that quotes an e-mail address as its evidence."""
    pack = json.loads((PACKS / "support.json").read_text(encoding="utf-8"))
    rule = {"route": "account", "match": {"regex": r"[\w.]+@[\w.]+"}, "examples": ["a@b.co"]}
    pack["rules"].insert(0, rule)
    return Router(load_pack(json.dumps(pack)))


def test_the_evidence_sent_quotes_the_message_only_as_redacted(sink, email_rule_router):
    reporter = EventReporter(sink.url, token="t", flush_every=0.01)
    decision = email_rule_router.route("change my login to jo@example.com")
    assert decision.evidence is not None and decision.evidence.text == "jo@example.com"
    reporter.report(decision, "change my login to jo@example.com")
    assert reporter.flush(5)
    (record,) = sink.records
    assert record["message"] == "change my login to [email]"
    assert record["event"]["evidence"]["text"] == "[email]"  # type: ignore[index]
    assert "jo@example.com" not in json.dumps(record)


def test_without_a_redactor_no_quoted_word_of_the_message_is_sent(sink, email_rule_router):
    reporter = EventReporter(sink.url, token="t", redactor=None, flush_every=0.01)
    for text in ["write to jo@example.com", "I was charged twice on my card"]:
        reporter.report(email_rule_router.route(text), text)
    assert reporter.flush(5)
    rule, scored = (r["event"]["evidence"] for r in sink.records)  # type: ignore[index]
    assert rule["source"] == "rule" and rule["text"] is None
    assert scored["source"] == "scorer" and scored["terms"] == []
    assert "jo@example" not in json.dumps(sink.records) and "charged" not in json.dumps(
        sink.records
    )


def test_scrubbed_evidence_keeps_the_words_the_kept_message_holds():
    event = {
        "route": "billing",
        "evidence": {
            "source": "scorer",
            "text": None,
            "terms": [
                {"term": "charged", "weight": 1.2},
                {"term": "smithson", "weight": 0.4},
                {"term": "charged twice", "weight": 0.3},
                {"term": "I was billed twice", "weight": 0.8, "kind": "example"},
            ],
        },
    }
    # A redactor of the agent's own took the name out of the message: out of the terms too.
    scrubbed = scrub_evidence(event, "mr [name] was charged twice")
    terms = [t["term"] for t in scrubbed["evidence"]["terms"]]
    assert terms == ["charged", "charged twice", "I was billed twice"]
    assert [t["term"] for t in event["evidence"]["terms"]][1] == "smithson"  # not changed
    assert scrub_evidence({"evidence": None}, None) == {"evidence": None}


@given(
    st.text(max_size=60),
    st.lists(st.text(max_size=12), max_size=5),
    st.one_of(st.none(), st.text(max_size=60)),
)
def test_scrubbed_evidence_never_quotes_a_word_the_kept_message_lacks(text, terms, kept):
    event = {"evidence": {"text": text, "terms": [{"term": t, "weight": 1.0} for t in terms]}}
    kept_words = set(re.findall(r"\w+", kept.lower())) if kept else set()
    evidence = scrub_evidence(event, kept)["evidence"]
    quoted = [evidence["text"] or "", *(t["term"] for t in evidence["terms"])]
    for part in quoted:
        assert set(re.findall(r"\w+", part.lower())) <= kept_words
        assert not re.search(r"[0-9]{6,}", part)


def test_without_a_redactor_no_message_text_is_sent(sink, router):
    reporter = EventReporter(sink.url, token="t", redactor=None, flush_every=0.01)
    reporter.report(router.route("my email is a@b.co"), "my email is a@b.co")
    assert reporter.flush(5)
    assert sink.records[0]["message"] is None


def test_a_slow_studio_never_delays_a_turn(sink, router):
    sink.delay = 1.0
    reporter = EventReporter(sink.url, token="t", batch_size=1, flush_every=0.01, timeout=5)
    started = time.perf_counter()
    for _ in range(50):
        reporter.report(router.route("I want a refund"), "I want a refund")
    elapsed = time.perf_counter() - started
    assert elapsed < 0.5  # 50 turns while the first POST alone takes a second
    assert reporter.stats.queued > 0


def test_a_studio_that_is_down_counts_failures_and_never_raises(router):
    reporter = EventReporter("http://127.0.0.1:9/events", token="t", flush_every=0.01, timeout=1)
    assert reporter.report(router.route("I want a refund"), "I want a refund")
    assert reporter.flush(5)
    stats = reporter.stats
    assert stats.failed == 1 and stats.sent == 0
    assert stats.last_error and "cannot reach the studio" in stats.last_error


def test_a_full_queue_drops_and_counts(sink, router):
    sink.delay = 2.0
    reporter = EventReporter(sink.url, token="t", batch_size=1, max_queue=3, flush_every=0.01)
    decision = router.route("I want a refund")
    accepted = [reporter.report(decision, "x") for _ in range(10)]
    # One record may already be in flight; the queue holds three more at most.
    assert accepted.count(True) <= 4
    assert reporter.stats.dropped == accepted.count(False) >= 6


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("write to jo.doe+x@mail.example.co.uk please", "write to [email] please"),
        ("my card is 4111-1111-1111-1111", "my card is [card]"),
        ("call me on +44 20 7946 0958", "call me on [phone]"),
        ("call (555) 123-4567 tonight", "call [phone] tonight"),
        ("account 998877", "account [number]"),
        ("order 12345 came in 2024", "order 12345 came in 2024"),
    ],
)
def test_it_redacts_what_identifies_a_person(text, redacted):
    assert redact(text) == redacted


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_redacted_text_never_holds_an_email_or_a_long_digit_run(text):
    out = redact(text)
    assert not re.search(r"[\w.+-]+@[\w-]+\.[\w-]+", out, flags=re.ASCII)
    assert not re.search(r"[0-9]{6,}", out)


def test_a_batch_of_large_events_is_split_into_posts_under_the_body_limit(
    sink, router, monkeypatch
):
    monkeypatch.setattr("routing_core.reporting.MAX_BODY_BYTES", 6_000)
    reporter = EventReporter(sink.url, token="t", batch_size=20, flush_every=0.2)
    decision = router.route("I want a refund")
    for i in range(20):
        reporter.report(decision, f"turn {i}")
    assert reporter.flush(5)
    assert len(sink.batches) > 1
    assert all(len(json.dumps(b)) < 6_000 + 3_000 for b in sink.batches)  # one record may overshoot
    assert [r["message"] for r in sink.records] == [f"turn {i}" for i in range(20)]
    assert reporter.stats.sent == 20


def test_each_post_tells_the_studio_how_many_records_were_dropped(sink, router):
    sink.delay = 0.3  # the first POST is in flight while the queue overflows
    reporter = EventReporter(sink.url, token="t", batch_size=1, max_queue=2, flush_every=0.01)
    decision = router.route("I want a refund")
    accepted = [reporter.report(decision, "x") for _ in range(6)]
    assert reporter.flush(5)
    assert sink.batches[-1]["dropped"] == accepted.count(False) == reporter.stats.dropped > 0
