"""Agents: who pulls which pack (the pull and its fast lane), the decision events they send
back, the fleet and its routing_core versions.

Other areas use what this package re-exports below, and nothing else of it.
"""

from __future__ import annotations

from studio.agents.events import dropped_by_agents, expire_events, traffic_settings
from studio.agents.fleet import unable_to_read

__all__ = [
    "dropped_by_agents",
    "expire_events",
    "traffic_settings",
    "unable_to_read",
]
