"""Traffic: turns reported from production, charted and compared with the period before, the
review queue that turns them into test cases or examples, and replays on the draft or a version.

Other areas use what this package re-exports below, and nothing else of it.
"""

from __future__ import annotations

from studio.traffic.rollups import count_turns, forget_before

__all__ = ["count_turns", "forget_before"]
