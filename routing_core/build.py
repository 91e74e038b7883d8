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
    out_of_scope: list[str] | None = None,
    progress: Callable[[float], None] | None = None,
    no_background: bool = False,
) -> Pack:
    """A pack with default policy, scorer and triage around `[{"name", "examples", "description"?}]`.

    The lexical scorer's learned weights are stored in the pack (`scorer.model`), with the
    out-of-scope floor and the near-tie margin fitted on held-out texts (the margin becomes
    the policy's); `out_of_scope`: messages that belong to no route, learned as such (the
    pack's `out_of_scope`); `no_background`: learn no built-in background (the pack's
    field of that name); `progress` is told the fraction learned (see
    `stored.with_model`).

    Raises:
        PackError: when the list is not a list of route objects, or a route is invalid.
    """
    if not isinstance(routes, list) or not all(isinstance(r, dict) for r in routes):
        raise PackError([("$", "expected a JSON list of route objects")])
    pack = load_pack(
        {
            "profile": {"slug": slug, "name": name or slug, "description": description},
            "routes": routes,
            "out_of_scope": out_of_scope or [],
            "no_background": no_background,
        }
    )
    # Learn the scorer's weights now, so the pack loads in a fraction of a second.
    return with_fitted_margin(with_model(pack, progress=progress))


def with_fitted_margin(pack: Pack) -> Pack:
    """The pack with the near-tie margin its lexical model fitted as its policy's margin.

    A fresh pack has no margin a person chose; the fitted one keeps menus for what is a
    near-tie on text like the examples, whatever the profile's size (`_model.fit_margin`).
    """
    model = getattr(pack.scorer, "model", None)
    if model is None or model.margin is None:
        return pack
    policy = pack.policy.model_copy(update={"near_tie_margin": model.margin})
    return pack.model_copy(update={"policy": policy})


def build_pack_file(path: str | Path, **identity: Any) -> Pack:
    """`build_pack` on a JSON file."""
    try:
        routes = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PackError([("$", f"cannot read routes from {str(path)!r}: {exc}")]) from None
    return build_pack(routes, **identity)
