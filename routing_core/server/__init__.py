"""`routing-core serve`: route turns over HTTP for agents in any language (docs/server.md).

The server stack (uvicorn, prometheus-client, orjson) is the `server` extra; nothing here is imported
by `import routing_core`, and the modules import it only when a server is built.

`create_app()` is the ASGI app `routing-core serve` runs, for the settings it puts in the
environment (`ENV_CONFIG`): what another ASGI server, or a harness calling the app in
process, starts from. It is imported on first use, so this package stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from routing_core.server.config import ENV_CONFIG, ServeConfig

if TYPE_CHECKING:
    from routing_core.server.app import create_app

__all__ = ["ENV_CONFIG", "ServeConfig", "create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from routing_core.server.app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
