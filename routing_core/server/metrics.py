"""Prometheus metrics of `routing-core serve` (prometheus-client; docs/server.md, "Metrics").

With several worker processes the command line sets `PROMETHEUS_MULTIPROC_DIR` before any
worker starts: each process writes its values to files there, and whichever worker answers
`GET /metrics` adds them all up (prometheus-client's multiprocess mode).
"""

from __future__ import annotations

import os
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client import multiprocess as _multiprocess

from routing_core.decision import Decision
from routing_core.server.packs import PackState

CONTENT_TYPE = CONTENT_TYPE_LATEST

DECISIONS = Counter(
    "routing_core_decisions_total",
    "Turns decided, by verdict, deciding tier and route (route is empty when none).",
    ["verdict", "by", "route"],
)
# Buckets around a turn's cost: tens of microseconds on a small pack to milliseconds on a
# batch or a slow machine; anything past 100 ms is a problem, whatever its size.
LATENCY = Histogram(
    "routing_core_request_seconds",
    "Time to answer a routing request, from its body read to its answer written.",
    ["endpoint"],
    buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
)
REVISION = Gauge(
    "routing_core_pack_revision",
    "Packs put in service by this server since it started (the highest across workers).",
    multiprocess_mode="max",
)
PACK_VERSION = Gauge(
    "routing_core_pack_version",
    "The studio version of the pack in service.",
    multiprocess_mode="max",
)
FAILURES = Counter(
    "routing_core_pack_failures_total",
    "Packs refused: a failed pull from the studio, or a changed file that did not load.",
    ["kind"],
)
EVENTS_DROPPED = Counter(
    "routing_core_events_dropped_total",
    "Decision events not queued for the studio because the reporter's queue was full.",
)
REFUSED = Counter(
    "routing_core_requests_refused_total",
    "Requests answered with an error, by status.",
    ["status"],
)


# Each label set's child, found once: `labels()` looks it up under a lock on every call, and
# with several workers each update also writes to a shared file (a few µs a request).
# Bounded by verdicts x tiers x routes of the packs served.
_DECIDED: dict[tuple[str, str, str], Any] = {}
_LATENCY: dict[str, Any] = {}


def observe_decision(decision: Decision) -> None:
    """Count one decided turn."""
    key = (decision.verdict, decision.by, decision.route or "")
    child = _DECIDED.get(key)
    if child is None:
        child = _DECIDED[key] = DECISIONS.labels(*key)
    child.inc()


def observe_latency(endpoint: str, seconds: float) -> None:
    """Time one answered routing request."""
    child = _LATENCY.get(endpoint)
    if child is None:
        child = _LATENCY[endpoint] = LATENCY.labels(endpoint)
    child.observe(seconds)


def observe_swap(state: PackState) -> None:
    """A new pack is in service."""
    REVISION.set(state.revision)
    PACK_VERSION.set(state.version)


def observe_failure(kind: str, _reason: str) -> None:
    """A pack was refused (`pull` or `reload`)."""
    FAILURES.labels(kind).inc()


def exposition() -> bytes:
    """The text format of every metric, summed over the worker processes when there are several."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        _multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry)
    return generate_latest(REGISTRY)
