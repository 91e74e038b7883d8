"""Template filters for figures: shares as percentages, microseconds as readable durations."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.filter
def pct(value: Any, digits: int = 1) -> str:
    """0.9345 → "93.5%"; None (nothing to measure) → "—"."""
    if value is None or value == "":
        return "—"
    return f"{float(value) * 100:.{digits}f}%"


@register.filter
def duration_us(value: Any) -> str:
    """Microseconds (what the engine measures) in milliseconds, the unit product pages use."""
    ms = float(value) / 1000
    return "< 0.01 ms" if ms < 0.005 else f"{ms:.2f} ms"


@register.filter
def get(mapping: Any, key: Any) -> Any:
    """A dict lookup with a variable key."""
    return mapping.get(key) if hasattr(mapping, "get") else None
