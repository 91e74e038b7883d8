"""Figures on product pages are in the units people read (milliseconds, not microseconds)."""

from __future__ import annotations

import pytest

from studio.shared.templatetags.suite_format import duration_us


@pytest.mark.parametrize(
    ("us", "shown"),
    [(2, "< 0.01 ms"), (350, "0.35 ms"), (999.9, "1.00 ms"), (12_345, "12.35 ms")],
)
def test_a_latency_reads_in_milliseconds(us, shown):
    assert duration_us(us) == shown
    assert "µs" not in duration_us(us)
