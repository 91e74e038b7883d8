"""Which routing_core this is: for the User-Agent agents send, so the studio knows its fleet."""

from __future__ import annotations

import platform
from importlib import metadata


def engine_version() -> str:
    """The installed routing_core's version ("0+unknown" when run from a bare checkout)."""
    try:
        return metadata.version("routing-core")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def user_agent() -> str:
    """`routing-core/<version> python/<x.y>`: what PackFetcher and EventReporter send."""
    major, minor, _ = platform.python_version_tuple()
    return f"routing-core/{engine_version()} python/{major}.{minor}"
