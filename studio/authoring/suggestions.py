"""Suggested examples and never-phrases for a route, behind a person's review.

`routing_core.suggest` asks the model configured in settings and judges each proposal with
the draft's compiled router; nothing is saved until a person accepts some of them. Accepting
goes through `save_item` (validated, optimistically locked, audited as a route update) and
adds one `route.accept-suggestions` entry naming what was accepted and what was rejected.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from routing_core.scorers.llm import ChatClient
from routing_core.suggest import Kind, SuggestionBatch, suggest
from studio.models import Route
from studio.shared.audit import audit
from studio.shared.drafts import compiled_router
from studio.shared.edits import save_item
from studio.shared.llm import setup_help

SETUP_HELP = setup_help("Suggestions")


def suggest_for_route(client: ChatClient, route: Route, kind: Kind) -> SuggestionBatch:
    """Proposals for one route of the draft, each routed by the draft as it is now.

    Raises:
        ScorerFailure: the endpoint failed, timed out or gave no chat completion.
        PackError: the draft is not a valid pack.
    """
    return suggest(client, compiled_router(route.profile), route.name, kind)


def accept_suggestions(
    route: Route,
    kind: Kind,
    accepted: list[str],
    rejected: list[str],
    *,
    user: Any,
    expected_revision: int,
) -> None:
    """Add the accepted texts to the route's examples (or never-phrases); audit the choice.

    Raises:
        Conflict: the route was changed since the suggestions were shown.
        Refused: the route would become invalid (e.g. too many examples).
    """
    with transaction.atomic():
        if accepted:
            field = "examples" if kind == "examples" else "never"
            current = list(getattr(route, field))
            setattr(route, field, current + [t for t in accepted if t not in current])
            save_item(route, user=user, expected_revision=expected_revision)
        audit(
            user,
            route.profile,
            "route.accept-suggestions",
            route,
            None,
            {"kind": kind, "accepted": accepted, "rejected": rejected},
        )
