"""Server-drawn SVG geometry for the Traffic page: turns over time, shares now and before.

Only numbers and labels: the templates draw them, colours come from classes in traffic.css
(the CSP allows no inline style or script).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from studio.suites import Tick
from studio.traffic.turns import Share


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    w: float
    h: float
    title: str


@dataclass(frozen=True)
class BarChart:
    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    bars: list[Bar]
    x_ticks: list[Tick]
    y_ticks: list[Tick]


def turns_chart(
    buckets: Sequence[tuple[datetime, int]], hourly: bool, width: int = 720, height: int = 170
) -> BarChart:
    """One bar per hour or day; the y axis goes to the busiest bucket (at least 1)."""
    left, right, top, bottom = 44, width - 12, 12, height - 28
    peak = max((n for _, n in buckets), default=0) or 1
    step = (right - left) / max(len(buckets), 1)
    # The buckets start on whole hours or midnights in the viewer's zone (studio.traffic.turns).
    fmt = "%H:%M" if hourly else "%a %d"
    bars = []
    for i, (at, n) in enumerate(buckets):
        h = (bottom - top) * n / peak
        when = (
            f"{at:%a %d %b %H:%M}–{at + timedelta(hours=1):%H:%M}" if hourly else f"{at:%a %d %b}"
        )
        title = f"{when}: {n} turn{'s' if n != 1 else ''}"
        bars.append(Bar(left + i * step + 1, bottom - h, max(step - 2, 1), h, title))
    every = max(1, -(-len(buckets) // 8))
    x_ticks = [Tick(left + (i + 0.5) * step, f"{at:{fmt}}") for i, (at, _) in enumerate(buckets)][
        ::every
    ]
    y_ticks = [Tick(bottom - (bottom - top) * n / peak, str(n)) for n in _counts_to_mark(peak)]
    return BarChart(width, height, left, right, top, bottom, bars, x_ticks, y_ticks)


@dataclass(frozen=True)
class ShareRow:
    label: str
    y: float
    now_w: float
    before_w: float
    now: str
    change: str
    direction: str  # up | down | flat: the class of the change text
    title: str


@dataclass(frozen=True)
class ShareChart:
    width: int
    height: int
    label_w: int
    bar_w: int
    rows: list[ShareRow]


ROW_H = 26


def share_chart(shares: Sequence[Share], width: int = 720) -> ShareChart:
    """Two bars a row: this period (full) above the period before (pale), with the change."""
    label_w, text_w = 180, 150
    bar_w = width - label_w - text_w
    rows = []
    for i, s in enumerate(shares):
        points = s.change * 100
        direction = "flat" if abs(points) < 0.05 else ("up" if points > 0 else "down")
        rows.append(
            ShareRow(
                label=s.label,
                y=i * ROW_H,
                now_w=bar_w * s.share,
                before_w=bar_w * s.share_before,
                now=f"{s.share:.1%}",
                change=f"{points:+.1f} pts" if s.total_before else "new",
                direction=direction,
                title=f"{s.label}: {s.now} of {s.total_now} turns ({s.share:.1%}); "
                f"before: {s.before} of {s.total_before} ({s.share_before:.1%})",
            )
        )
    return ShareChart(width, max(len(rows), 1) * ROW_H, label_w, bar_w, rows)


def _counts_to_mark(peak: int) -> list[int]:
    """0, the peak and a whole number halfway when there is one: each label stands where its
    count is (a rounded 0.5 once labelled the middle line "0" beside the bottom one)."""
    middle = peak // 2
    return [0, middle, peak] if 0 < middle < peak else [0, peak]
