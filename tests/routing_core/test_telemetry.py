"""OpenTelemetry spans and metrics for routed turns and pulls (routing_core.telemetry), read
back from the SDK's in-memory exporters; pulls go to a real pack server on loopback."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from routing_core import Router, load_pack
from routing_core.remote import PackFetcher, RemoteRouter
from routing_core.telemetry import PROVIDER, instrument, instrument_fetcher
from tests.routing_core.conftest import minimal_doc
from tests.routing_core.test_remote import server  # noqa: F401 - the pack server fixture


class Telemetry:
    """An SDK tracer and meter whose spans and metric points the test reads."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    @property
    def providers(self) -> dict[str, Any]:
        return {"tracer_provider": self.tracer_provider, "meter_provider": self.meter_provider}

    def points(self, name: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        return [
            point
            for resource in (data.resource_metrics if data else [])
            for scope in resource.scope_metrics
            for metric in scope.metrics
            if metric.name == name
            for point in metric.data.data_points
        ]


@pytest.fixture
def telemetry() -> Telemetry:
    return Telemetry()


def test_a_routed_turn_is_a_span_with_the_feature_flag_evaluation(telemetry):
    router = Router(load_pack(minimal_doc()))
    traced = instrument(router, **telemetry.providers)

    decision = traced.route("my invoice has a wrong charge")

    (span,) = telemetry.spans.get_finished_spans()
    slug, version, checksum = decision.pack
    assert span.name == "routing.route"
    assert span.attributes["feature_flag.key"] == slug == "t"
    assert span.attributes["feature_flag.provider.name"] == PROVIDER
    assert span.attributes["feature_flag.result.variant"] == decision.route == "billing"
    assert span.attributes["feature_flag.result.reason"] == decision.by
    assert span.attributes["feature_flag.version"] == f"{version}:{checksum}"
    assert span.attributes["routing.verdict"] == decision.verdict
    (event,) = span.events
    assert event.name == "feature_flag.evaluation"
    assert event.attributes["feature_flag.result.variant"] == "billing"


def test_the_message_text_is_never_recorded(telemetry):
    traced = instrument(Router(load_pack(minimal_doc())), **telemetry.providers)
    traced.route("my card 4111 1111 1111 1111 was charged twice")
    (span,) = telemetry.spans.get_finished_spans()
    recorded = [*span.attributes.values(), *(v for e in span.events for v in e.attributes.values())]
    assert not any("4111" in str(value) for value in recorded)


def test_an_unmatched_turn_has_a_variant_and_turns_are_counted_by_verdict(telemetry):
    traced = instrument(Router(load_pack(minimal_doc())), **telemetry.providers)
    traced.route("zzqx")
    traced.route("an invoice for my charges")
    spans = telemetry.spans.get_finished_spans()
    assert spans[0].attributes["feature_flag.result.variant"] == "(none)"
    counted = {p.attributes["routing.verdict"]: p.value for p in telemetry.points("routing.turns")}
    assert sum(counted.values()) == 2 and counted.get("move") == 1
    durations = telemetry.points("routing.turn.duration")
    assert sum(p.count for p in durations) == 2 and all(p.sum > 0 for p in durations)


def test_the_traced_router_is_otherwise_the_router(telemetry):
    router = Router(load_pack(minimal_doc()))
    traced = instrument(router, **telemetry.providers)
    assert traced.pack is router.pack
    assert traced.route("parcels").route == router.route("parcels").route


def test_a_remote_router_s_pulls_are_spans_that_say_what_they_did(telemetry, server):  # noqa: F811
    live = RemoteRouter(PackFetcher(server.url, timeout=2.0))
    traced = instrument(live, **telemetry.providers)
    assert traced.refresh().status == "unchanged"
    server.publish(default_route="human")
    assert traced.refresh().status == "updated"
    server.mode = "500"
    assert traced.refresh().status == "failed"

    pulls = [s for s in telemetry.spans.get_finished_spans() if s.name == "routing.pull"]
    assert [s.attributes["routing.pull.status"] for s in pulls] == [
        "unchanged",
        "updated",
        "failed",
    ]
    assert pulls[1].attributes["feature_flag.key"] == "t"
    assert pulls[2].status.status_code is StatusCode.ERROR
    assert pulls[2].attributes["error.type"] == "pull_failed"
    counted = {
        p.attributes["routing.pull.status"]: p.value for p in telemetry.points("routing.pulls")
    }
    assert counted == {"unchanged": 1, "updated": 1, "failed": 1}
    assert traced.current.pack.default_route == "human"  # the pull still swapped the pack


def test_a_fetcher_on_its_own_can_be_traced(telemetry, server):  # noqa: F811
    fetcher = instrument_fetcher(PackFetcher(server.url), **telemetry.providers)
    assert fetcher.fetch().status == "updated"
    assert fetcher.etag is not None  # the fetcher's own state, read through the wrapper
    (span,) = telemetry.spans.get_finished_spans()
    assert span.name == "routing.pull" and span.attributes["routing.pull.status"] == "updated"
