"""Make a pack from a plain list of routes: how labelled data sets become packs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from routing_core.codec import load_pack
from routing_core.errors import PackError
from routing_core.pack import Pack
from routing_core.scorers.stored import with_model


def build_pack(
    routes: list[dict[str, Any]],
    *,
    slug: str = "built",
    name: str | None = None,
    description: str = "",
    progress: Callable[[float], None] | None = None,
) -> Pack:
    """A pack with default policy, scorer and triage around `[{"name", "examples", "description"?}]`.

    The lexical scorer's learned weights are stored in the pack (`scorer.model`);
    `progress` is told the fraction learned (see `stored.with_model`).

    Raises:
        PackError: when the list is not a list of route objects, or a route is invalid.
    """
    if not isinstance(routes, list) or not all(isinstance(r, dict) for r in routes):
        raise PackError([("$", "expected a JSON list of route objects")])
    pack = load_pack(
        {
            "profile": {"slug": slug, "name": name or slug, "description": description},
            "routes": routes,
        }
    )
    # Learn the scorer's weights now, so the pack loads in a fraction of a second.
    return with_model(pack, progress=progress)


def build_pack_file(path: str | Path, **identity: Any) -> Pack:
    """`build_pack` on a JSON file."""
    try:
        routes = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PackError([("$", f"cannot read routes from {str(path)!r}: {exc}")]) from None
    return build_pack(routes, **identity)
