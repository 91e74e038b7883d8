"""The rollout page's chart: the share of turns nothing matched, per hour, live against
candidate (a guarded condition's figure, docs/publishing.md).

Only numbers and words: `templates/studio/publishing/_rollout_chart.html` draws them as inline
SVG with the same classes as the suites' charts (the CSP allows no inline style or script), and
says the same in its <title> and <desc> for a screen reader, the table kept beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils import timezone

from studio.suites import Chart, Dot, Series, Tick

# The y axis ends at the first of these above the highest rate, so a few points of
# difference stay visible instead of lying flat along 0 on a 0–100 % axis.
_TOPS = (1, 2, 5, 10, 20, 25, 50, 100)
_ARMS = (("live", "live", "s-acc"), ("candidate", "candidate", "s-menu"))


def rollout_chart(hours: Sequence[dict[str, Any]], width: int = 720, height: int = 220) -> Chart:
    """One line per arm through its unmatched rate each hour (`rollout_guards.over_time`);
    an hour without turns on an arm has no dot on its line."""
    left, top, right, bottom = 44, 24, width - 12, height - 28
    peak = max((h[arm]["rate"] for h in hours for arm, *_ in _ARMS if arm in h), default=0.0)
    ceiling = next((t for t in _TOPS if t >= peak), 100)
    step = (right - left) / max(len(hours) - 1, 1)

    def x(i: int) -> float:
        return left + (i * step if len(hours) > 1 else (right - left) / 2)

    def y(rate: float) -> float:
        return bottom - rate / ceiling * (bottom - top)

    series = [
        Series(
            f"{name} pack",
            css,
            [
                Dot(x(i), y(h[arm]["rate"]), _dot_words(h, arm))
                for i, h in enumerate(hours)
                if arm in h
            ],
        )
        for arm, name, css in _ARMS
    ]
    labels = [_hour_label(h["hour"], hours) for h in hours]
    x_ticks = [Tick(x(i), label) for i, label in enumerate(labels)]
    every = max(1, -(-len(x_ticks) // 8))
    y_ticks = [Tick(y(ceiling * f), f"{ceiling * f:g}%") for f in (0, 0.5, 1)]
    return Chart(width, height, left, top, right, bottom, series, x_ticks[::every], y_ticks)


def chart_summary(hours: Sequence[dict[str, Any]]) -> str:
    """The chart in a sentence, for its <desc>: the span and each arm's lowest and highest."""
    if not hours:
        return "No turns yet."
    first, last = (timezone.localtime(hours[i]["hour"]) for i in (0, -1))
    parts = [f"Per hour from {first:%Y-%m-%d %H:00} to {last:%Y-%m-%d %H:00}."]
    for arm, name, _ in _ARMS:
        rates = [h[arm]["rate"] for h in hours if arm in h]
        if rates:
            parts.append(
                f"The {name} pack: nothing matched on {min(rates):g}% to {max(rates):g}% "
                f"of turns, over {len(rates)} hour{'s' if len(rates) != 1 else ''}."
            )
        else:
            parts.append(f"The {name} pack: no turns yet.")
    return " ".join(parts)


def _dot_words(hour: dict[str, Any], arm: str) -> str:
    at = timezone.localtime(hour["hour"])
    figures = hour[arm]
    turns = figures["turns"]
    return (
        f"{at:%Y-%m-%d %H:00}, {arm}: nothing matched on {figures['rate']:g}% "
        f"of {turns} turn{'s' if turns != 1 else ''}"
    )


def _hour_label(hour: Any, hours: Sequence[dict[str, Any]]) -> str:
    """ "14:00", or "3 Dec 14:00" when the chart spans more than one day."""
    at = timezone.localtime(hour)
    days = {timezone.localtime(h["hour"]).date() for h in hours}
    return f"{at:%H:00}" if len(days) == 1 else f"{at.day} {at:%b %H:00}"
