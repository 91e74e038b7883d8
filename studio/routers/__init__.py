"""The API's routers, one module per resource; `studio.api` mounts each under its prefix."""

from __future__ import annotations

from ninja import Router

ROUTERS: list[tuple[str, Router]] = []
