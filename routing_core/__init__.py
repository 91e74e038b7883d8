"""routing_core: decide, before an LLM agent runs, where each user turn goes — and say why."""

from __future__ import annotations

from routing_core.codec import dump_pack, load_pack
from routing_core.decision import Decision
from routing_core.errors import PackError
from routing_core.pack import Pack
from routing_core.policy import Policy
from routing_core.router import Router

__all__ = ["Decision", "Pack", "PackError", "Policy", "Router", "dump_pack", "load_pack"]
