"""The API's routers, one module per resource; `studio.api` mounts each under its prefix."""

from __future__ import annotations

from ninja import Router

from studio.agents import events_api as _events
from studio.agents import packs_api as _packs
from studio.authoring import items_api as _items
from studio.authoring import profiles_api as _profiles
from studio.playground import api as _playground
from studio.publishing import api as _publishing
from studio.suites import repairs_api as _repairs

ROUTERS: list[tuple[str, Router]] = [
    ("/profiles", _items.router),
    ("/profiles", _publishing.router),
    ("/profiles", _packs.router),
    ("/profiles", _events.router),
    ("/profiles", _profiles.router),
    ("/imports", _publishing.imports),
    ("/profiles", _playground.router),
    ("/profiles", _repairs.router),
]
