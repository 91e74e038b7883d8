"""OpenTelemetry for routing: a span for each routed turn and each pack pull, so that a team
sees routing inside its agent's own traces and dashboards (docs/agents/telemetry.md).

A routed turn is a feature-flag evaluation in OpenTelemetry's terms: the profile's pack is
the flag, the chosen route its variant, how it was chosen its reason. So the turn's span
carries the attributes of the semantic conventions for feature-flag evaluation
(`feature_flag.key`, `feature_flag.provider.name`, `feature_flag.result.variant`,
`feature_flag.result.reason`, `feature_flag.version`) and records a
`feature_flag.evaluation` event with them; what has no convention (the verdict, the top
score) is under `routing.`. The message's text is never recorded: it is the user's words.

Needs the `otel` extra (opentelemetry-api). Without an SDK configured the API's providers do
nothing, so instrumenting costs a function call or two a turn.
"""

from __future__ import annotations

import time
from typing import Any, Generic, Protocol, TypeVar

try:
    from opentelemetry import metrics, trace
    from opentelemetry.trace import SpanKind, Status, StatusCode
except ImportError as exc:  # pragma: no cover - depends on what is installed
    raise ImportError(
        "routing_core.telemetry needs OpenTelemetry's API: pip install 'routing-core[otel]'"
    ) from exc

from routing_core.decision import Decision
from routing_core.version import engine_version

__all__ = ["PROVIDER", "TracedFetcher", "TracedRouter", "instrument", "instrument_fetcher"]

# `feature_flag.provider.name`: who evaluated the flag.
PROVIDER = "routing-core"
_SCOPE = "routing_core"
# A route's value when the turn chose none (the variant must be a string).
_NO_ROUTE = "(none)"


class _Routes(Protocol):
    def route(self, message: Any, *args: Any, **kwargs: Any) -> Decision: ...


class _Fetches(Protocol):
    def fetch(self) -> Any: ...


R = TypeVar("R", bound=_Routes)
F = TypeVar("F", bound=_Fetches)


class _Instruments:
    """The tracer and the two metrics of one instrumented router or fetcher."""

    def __init__(
        self, tracer_provider: trace.TracerProvider | None, meter_provider: Any | None
    ) -> None:
        version = engine_version()
        self.tracer = trace.get_tracer(_SCOPE, version, tracer_provider)
        meter = (meter_provider or metrics.get_meter_provider()).get_meter(_SCOPE, version)
        self.turns = meter.create_counter(
            "routing.turns", unit="{turn}", description="Turns routed, by verdict and tier."
        )
        self.turn_duration = meter.create_histogram(
            "routing.turn.duration", unit="s", description="Time to route one turn."
        )
        self.pulls = meter.create_counter(
            "routing.pulls", unit="{pull}", description="Pack pulls, by what they did."
        )


def evaluation_attributes(decision: Decision) -> dict[str, str | float | bool]:
    """The feature-flag evaluation a decision is, as span and event attributes."""
    slug, version, checksum = decision.pack
    attributes: dict[str, str | float | bool] = {
        "feature_flag.key": slug,
        "feature_flag.provider.name": PROVIDER,
        "feature_flag.result.variant": decision.route or _NO_ROUTE,
        "feature_flag.result.reason": decision.by,
        "feature_flag.version": f"{version}:{checksum}" if checksum else str(version),
        "routing.verdict": decision.verdict,
        "routing.decisive": decision.decisive,
    }
    if decision.ranked:
        attributes["routing.top_score"] = float(decision.ranked[0].score)
    if decision.scorer.error:
        attributes["error.type"] = "scorer_error"
    return attributes


class TracedRouter(Generic[R]):
    """A router whose every `route` call is a span (and counted); all else is the router's."""

    def __init__(self, router: R, instruments: _Instruments) -> None:
        self.router = router
        self._instruments = instruments

    def route(self, message: Any, *args: Any, **kwargs: Any) -> Decision:
        """`route` of the wrapped router, inside a `routing.route` span."""
        tools = self._instruments
        with tools.tracer.start_as_current_span("routing.route", kind=SpanKind.INTERNAL) as span:
            started = time.perf_counter()
            decision = self.router.route(message, *args, **kwargs)
            elapsed = time.perf_counter() - started
            attributes = evaluation_attributes(decision)
            span.set_attributes(attributes)
            span.add_event("feature_flag.evaluation", attributes)
        labels = {"routing.verdict": decision.verdict, "feature_flag.result.reason": decision.by}
        tools.turns.add(1, labels)
        tools.turn_duration.record(elapsed, labels)
        return decision

    def __getattr__(self, name: str) -> Any:
        return getattr(self.router, name)


class TracedFetcher(Generic[F]):
    """A `PackFetcher` whose every pull is a `routing.pull` span; all else is the fetcher's."""

    def __init__(self, fetcher: F, instruments: _Instruments) -> None:
        object.__setattr__(self, "fetcher", fetcher)
        object.__setattr__(self, "_instruments", instruments)

    def fetch(self) -> Any:
        """`fetch` of the wrapped fetcher, inside a span that says what the pull did."""
        tools: _Instruments = self._instruments
        with tools.tracer.start_as_current_span("routing.pull", kind=SpanKind.CLIENT) as span:
            result = self.fetcher.fetch()
            status = getattr(result, "status", "failed")
            span.set_attribute("routing.pull.status", status)
            pack = getattr(result, "pack", None)
            if pack is not None:
                span.set_attribute("feature_flag.key", pack.profile.slug)
                span.set_attribute("feature_flag.version", f"{pack.version}:{pack.checksum}")
            if status == "failed":
                span.set_attribute("error.type", "pull_failed")
                span.set_status(Status(StatusCode.ERROR, getattr(result, "error", None)))
        tools.pulls.add(1, {"routing.pull.status": status})
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.fetcher, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # The router sets the fetcher's fields (the reporter's dropped count): the fetcher's.
        setattr(self.fetcher, name, value)


def instrument(
    router: R,
    *,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: Any | None = None,
) -> TracedRouter[R]:
    """Trace and count every turn `router` routes; for a `RemoteRouter`, its pulls too.

    Args:
        router: a `Router`, `LiveRouter` or `RemoteRouter` (anything with `route`).
        tracer_provider: where spans go; the global provider when None.
        meter_provider: where the metrics go; the global provider when None.
    """
    instruments = _Instruments(tracer_provider, meter_provider)
    fetcher = getattr(router, "fetcher", None)
    if fetcher is not None and not isinstance(fetcher, TracedFetcher):
        router.fetcher = TracedFetcher(fetcher, instruments)  # type: ignore[attr-defined]
    return TracedRouter(router, instruments)


def instrument_fetcher(
    fetcher: F,
    *,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: Any | None = None,
) -> TracedFetcher[F]:
    """Trace and count the pulls of a `PackFetcher` used on its own."""
    return TracedFetcher(fetcher, _Instruments(tracer_provider, meter_provider))
