"""Arranging stored figures for people: the confusion matrix, case filters, and SVG chart geometry.

Nothing here measures anything: the numbers come from `routing_core.evaluate` (stored on the
TestRun) and `routing_core.tuning`; this module only lays them out. Charts are drawn
server-side as SVG (no chart library, no inline styles: the CSP refuses them), so the
template receives ready coordinates.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from routing_core import MENU, UNMATCHED
from routing_core.tuning import SweepPoint

MATRIX_MAX_LABELS = 14


# -- the confusion matrix and case lists ------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    expected: str
    predicted: str
    count: int

    @property
    def is_hit(self) -> bool:
        return self.expected == self.predicted


@dataclass(frozen=True)
class Matrix:
    labels: list[str]  # columns (predicted) and rows (expected), in the same order
    rows: list[tuple[str, list[Cell]]]
    hidden: int  # labels left out to keep the matrix readable


def confusion_matrix(results: Sequence[dict[str, Any]], route_order: Sequence[str]) -> Matrix:
    """Counts of (expected, predicted); with many labels, only the most confused ones."""
    pairs = Counter((r["expected"], r["predicted"]) for r in results)
    seen = {label for pair in pairs for label in pair}
    order = [*route_order, UNMATCHED, MENU]
    labels = [label for label in order if label in seen]
    labels += sorted(seen - set(labels))  # an expected route the pack does not have
    hidden = 0
    if len(labels) > MATRIX_MAX_LABELS:
        errors: Counter[str] = Counter()
        for (e, p), n in pairs.items():
            if e != p:
                errors[e] += n
                errors[p] += n
        keep = {label for label, _ in errors.most_common(MATRIX_MAX_LABELS)}
        hidden = len(labels) - len(keep)
        labels = [label for label in labels if label in keep]
    rows = [(e, [Cell(e, p, pairs[(e, p)]) for p in labels]) for e in labels]
    return Matrix(labels, rows, hidden)


def filter_results(
    results: Sequence[dict[str, Any]],
    *,
    show: str = "failed",
    expected: str | None = None,
    predicted: str | None = None,
) -> list[dict[str, Any]]:
    """The cases behind a confusion cell (expected/predicted), or all / failed / passed ones."""
    if expected is not None or predicted is not None:
        return [
            r
            for r in results
            if (expected is None or r["expected"] == expected)
            and (predicted is None or r["predicted"] == predicted)
        ]
    if show == "all":
        return list(results)
    wanted = show == "passed"
    return [r for r in results if r["passed"] is wanted]


def slowest(results: Sequence[dict[str, Any]], n: int = 10) -> list[dict[str, Any]]:
    return sorted(results, key=lambda r: -r["us"])[:n]


# -- SVG charts -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    label: str
    href: str = ""


@dataclass(frozen=True)
class Series:
    name: str
    css: str  # the class that colours it (app.css has no inline styles)
    dots: list[Dot]

    @property
    def points(self) -> str:
        return " ".join(f"{d.x:.1f},{d.y:.1f}" for d in self.dots)


@dataclass(frozen=True)
class Tick:
    at: float
    label: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    left: int
    top: int
    right: int
    bottom: int
    series: list[Series]
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    marker: float | None = None  # x of a vertical line (the suggested floor)
    marker_label: str = ""

    @property
    def marker_y(self) -> float:
        """Where the marker's label sits: mid-height, clear of the 0% and 100% lines."""
        return (self.top + self.bottom) / 2


def _frame(width: int, height: int) -> dict[str, int]:
    return {"width": width, "height": height, "left": 44, "top": 12, "right": width - 12,
            "bottom": height - 28}  # fmt: skip


def _chart(frame: dict[str, int], **parts: Any) -> Chart:
    return Chart(
        width=frame["width"], height=frame["height"], left=frame["left"], top=frame["top"],
        right=frame["right"], bottom=frame["bottom"], **parts,
    )  # fmt: skip


def _y(frame: dict[str, int], share: float) -> float:
    return frame["bottom"] - share * (frame["bottom"] - frame["top"])


def _y_ticks(frame: dict[str, int]) -> list[Tick]:
    return [Tick(_y(frame, v / 100), f"{v}%") for v in (0, 25, 50, 75, 100)]


def pass_rate_chart(runs: Sequence[Any], href: Any, width: int = 640, height: int = 150) -> Chart:
    """Pass rate of each finished run, oldest left; `href(run)` links a dot to its run."""
    frame = _frame(width, height)
    done = [r for r in runs if r.pass_rate is not None]
    span = max(len(done) - 1, 1)
    step = (frame["right"] - frame["left"]) / span
    dots = [
        Dot(
            frame["left"] + (i * step if len(done) > 1 else (frame["right"] - frame["left"]) / 2),
            _y(frame, r.pass_rate),
            f"run {r.pk}: {r.pass_rate:.1%} passed ({r.started_at:%Y-%m-%d %H:%M})",
            href(r),
        )
        for i, r in enumerate(done)
    ]
    ticks = [Tick(d.x, f"#{r.pk}") for d, r in zip(dots, done, strict=True)]
    if len(ticks) > 8:
        every = -(-len(ticks) // 8)
        ticks = ticks[::every]
    return _chart(frame, series=[Series("pass rate", "s-pass", dots)], x_ticks=ticks,
                 y_ticks=_y_ticks(frame))  # fmt: skip


def sweep_chart(
    points: Sequence[SweepPoint], margin: float, chosen_floor: float | None,
    width: int = 720, height: int = 260,
) -> Chart:  # fmt: skip
    """In-scope accuracy, out-of-scope recall and menu rate against the floor, at one margin."""
    frame = _frame(width, height)
    row = sorted((p for p in points if p.margin == margin), key=lambda p: p.floor or 0.0)
    top = max((p.floor or 0.0) for p in row) or 1.0

    def x(floor: float | None) -> float:
        return frame["left"] + (floor or 0.0) / top * (frame["right"] - frame["left"])

    def line(name: str, css: str, attr: str) -> Series:
        dots = [
            Dot(x(p.floor), _y(frame, value), f"floor {_floor(p.floor)}: {name} {value:.1%}")
            for p in row
            if (value := getattr(p, attr)) is not None
        ]
        return Series(name, css, dots)

    series = [
        line("in-scope accuracy", "s-acc", "in_scope_accuracy"),
        line("out-of-scope recall", "s-oos", "oos_recall"),
        line("menu rate", "s-menu", "menu_rate"),
    ]
    ticks = [Tick(x(p.floor), _floor(p.floor)) for p in row]
    return _chart(frame, series=[s for s in series if s.dots], x_ticks=ticks,
                 y_ticks=_y_ticks(frame), marker=x(chosen_floor),
                 marker_label=f"suggested {_floor(chosen_floor)}")  # fmt: skip


def _floor(floor: float | None) -> str:
    return "none" if floor is None else f"{floor:g}"


@dataclass(frozen=True)
class GridCell:
    point: SweepPoint
    is_best: bool
    level: int  # 0..4, how close to the best objective (a CSS class shades it)


def sweep_grid(
    points: Sequence[SweepPoint], best: SweepPoint
) -> tuple[list[float], list[tuple[str, list[GridCell]]]]:
    """The objective for every (floor, margin): margins as columns, one row per floor."""
    margins = sorted({p.margin for p in points})
    floors: list[float | None] = []
    for p in points:
        if p.floor not in floors:
            floors.append(p.floor)
    by_key = {(p.floor, p.margin): p for p in points}
    low = min(p.score for p in points)
    spread = (best.score - low) or 1.0
    rows = [
        (
            _floor(f),
            [
                GridCell(
                    (pt := by_key[(f, m)]),
                    pt is best,
                    min(4, int(4 * (pt.score - low) / spread)),
                )
                for m in margins
            ],
        )
        for f in floors
    ]
    return margins, rows
