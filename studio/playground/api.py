"""API: the playground — route a message on a profile's current draft and say why.

Routing is not an edit: any studio role may call it. The decision is the one the playground page
shows (same compiled router, same policy overrides), as `decision.to_event()`.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest
from ninja import Router
from ninja.params import functions as params
from pydantic import BaseModel, ConfigDict, Field

from routing_core import MAX_MESSAGE_CHARS
from studio.playground.turns import route_turn
from studio.shared import languages
from studio.shared.api_access import USER_AUTH, profile_for
from studio.shared.ratelimits import limit
from studio.shared.schemas import SLUG_PATTERN, ErrorOut

router = Router(tags=["playground"], auth=USER_AUTH)
ERRORS = {401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut, 422: ErrorOut, 429: ErrorOut}
SLUG: Any = params.Path(..., max_length=64, pattern=SLUG_PATTERN)


class PolicyOverrides(BaseModel):
    """Thresholds for this call only; a field left out keeps the profile's value.

    `floor: null` means the scorer's own floor. Ranges are routing_core's (`policy.<field>`).
    """

    model_config = ConfigDict(extra="forbid")

    near_tie_margin: float | None = None
    menu_size: int | None = None
    floor: float | None = None
    strictness: str | None = None


class RouteMessageIn(BaseModel):
    """A message to route (named apart from the routes' own schemas: schema names are global)."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(max_length=MAX_MESSAGE_CHARS)
    incumbent: str | None = Field(None, description="The route the conversation is in.")
    policy: PolicyOverrides | None = None


class RouteMessageOut(BaseModel):
    why: str = Field(description="One sentence: why the turn went where it went.")
    menu_text: str | None = Field(description="What an agent puts in its prompt for a menu.")
    decision: dict[str, Any] = Field(description="`decision.to_event()`: schema route-decision/1.")
    language: str | None = Field(
        None,
        description='The message\'s language, an ISO 639-1 code ("es"); null when it is '
        "unclear (a short message) — docs/decisions.md, Detecting a message's language.",
    )
    notes: list[str] = Field(
        default_factory=list,
        description="What the playground page says of how the message was read, a sentence "
        "each: why it was not scored, the route that came nearest to an off-topic message, a "
        "message read by the sentence encoder alone, the share of the score that went to no "
        "route, a message read on its spelling alone. Empty when there is nothing to say.",
    )


@router.post("/{slug}/route", response={200: RouteMessageOut, **ERRORS})
def route_message(
    request: HttpRequest, payload: RouteMessageIn, slug: str = SLUG
) -> RouteMessageOut:
    """Route one message on the profile's draft (what the editors saved, published or not)."""
    limit(request, "route", settings.STUDIO_RATE_ROUTE)
    profile = profile_for(request, slug)
    sent = payload.policy.model_dump(exclude_unset=True) if payload.policy else {}
    # Only the floor means something as null (the scorer's own); other nulls keep the profile's.
    overrides = {key: value for key, value in sent.items() if value is not None or key == "floor"}
    outcome = route_turn(profile, payload.message, payload.incumbent, overrides)
    decision = outcome.decision
    return RouteMessageOut(
        why=outcome.why,
        menu_text=decision.menu_text(),
        decision=decision.to_event(),
        language=languages.detect(payload.message) or None,
        notes=outcome.notes,
    )
