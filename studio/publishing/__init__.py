"""Publishing: immutable versions, the gate before shipping, diffs, environments and tokens,
rollouts (shadow and canary, guarded by conditions checked on the job queue); pages and API.

Other areas use what this package re-exports below, and nothing else of it.
"""

from __future__ import annotations

from studio.publishing.gate import RedGate
from studio.publishing.rollout_guards import queue_checks
from studio.publishing.versions import delete_profile

__all__ = [
    "RedGate",
    "delete_profile",
    "queue_checks",
]
