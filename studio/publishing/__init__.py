"""Publishing: immutable versions, the gate before shipping, diffs, environments and tokens;
pages and API.

Other areas use what this package re-exports below, and nothing else of it.
"""

from __future__ import annotations

from studio.publishing.gate import RedGate
from studio.publishing.versions import delete_profile, promote

__all__ = [
    "RedGate",
    "delete_profile",
    "promote",
]
