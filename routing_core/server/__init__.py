"""`routing-core serve`: route turns over HTTP for agents in any language (docs/server.md).

The server stack (uvicorn, prometheus-client, orjson) is the `server` extra; nothing here is imported
by `import routing_core`, and the modules import it only when a server is built.

`create_app()` is the ASGI app `routing-core serve` runs, for the settings it puts in the
environment (`ENV_CONFIG`): what another ASGI server, or a harness calling the app in
process, starts from. `openapi_document(config)` is the OpenAPI document a server started
with `config` answers at `/openapi.json` (docs/server.md). Both are imported on first use,
so this package stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from routing_core.server.config import ENV_CONFIG, ServeConfig

if TYPE_CHECKING:
    from routing_core.server.app import create_app
    from routing_core.server.openapi import openapi_document

__all__ = ["ENV_CONFIG", "ServeConfig", "create_app", "openapi_document"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from routing_core.server.app import create_app

        return create_app
    if name == "openapi_document":
        from routing_core.server.openapi import openapi_document

        return openapi_document
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
