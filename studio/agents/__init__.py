"""Agents: who pulls which pack (the pull and its fast lane), the decision events they send back, the fleet and its routing_core versions."""
