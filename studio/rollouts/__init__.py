"""Rollouts: a candidate version beside an environment's live one (shadow or canary), its
figures from reported turns, and the conditions that halt or promote it on the job queue.

Other areas use what this package re-exports below, and nothing else of it.
"""

from __future__ import annotations

from studio.rollouts.guards import queue_checks

__all__ = [
    "queue_checks",
]
