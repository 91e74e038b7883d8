"""`routing-core serve`: route turns over HTTP for agents in any language (docs/server.md).

The server stack (granian, prometheus-client, orjson) is the `server` extra; nothing here is imported
by `import routing_core`, and the modules import it only when a server is built.
"""

from routing_core.server.config import ENV_CONFIG, ServeConfig

__all__ = ["ENV_CONFIG", "ServeConfig"]
