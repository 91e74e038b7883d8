"""Authoring: profiles, their routes, rules and tools, the policy and lexicons, the rule
builder, suggestions, the audit trail and restoring from it, the demo profile.

Other areas use what this package re-exports below, and nothing else of it.
"""

from __future__ import annotations

from studio.authoring.demo import PROFILE, load_demo_profile

__all__ = [
    "PROFILE",
    "load_demo_profile",
]
