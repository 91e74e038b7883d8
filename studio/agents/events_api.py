"""API: agents send their decision events (`POST /api/profiles/<slug>/events`).

Auth: the profile's event token (`Bearer rse_…`) and nothing else: it may write events and read
nothing, so a leaked agent config cannot pull packs or see traffic. Another profile's token gets
the 404 a missing profile gets.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest
from ninja import Router, Schema, Status
from ninja.errors import ValidationError

from studio.agents.events import MAX_KEY, EventBatchIn, ingest
from studio.models import Profile
from studio.shared.ratelimits import limit
from studio.shared.schemas import ERRORS, SLUG, ErrorOut
from studio.shared.tokens import EventTokenAuth

router = Router(tags=["agents"], auth=[EventTokenAuth()])


class AcceptedOut(Schema):
    accepted: int


@router.post(
    "/{slug}/events",
    response={202: AcceptedOut, 413: ErrorOut, 429: ErrorOut, **ERRORS},
    summary="Decision events from an agent (up to 500 per batch)",
)
def post_events(request: HttpRequest, payload: EventBatchIn, slug: str = SLUG) -> Status[Any]:
    """Store a batch of `route-decision/1` events with their (redacted) messages.

    A batch sent again under the same `batch` id (or `Idempotency-Key` header) is stored
    once; the repeat is answered like the first send.
    """
    limit(request, "events", settings.STUDIO_RATE_EVENTS)
    token: Any = request.auth  # type: ignore[attr-defined]
    profile = Profile.objects.filter(slug=slug, pk=token.profile_id).first()
    if profile is None:
        raise Http404
    key = request.headers.get("Idempotency-Key")
    if payload.batch is None and key is not None:
        payload = payload.model_copy(update={"batch": _batch_key(key)})
    return Status(202, {"accepted": ingest(profile, payload, token)})


def _batch_key(key: str) -> str:
    """The `Idempotency-Key` header held to the rules of a batch id (it is stored alike)."""
    if not (0 < len(key) <= MAX_KEY) or not key.isascii() or not key.isprintable():
        problem = f"must be 1 to {MAX_KEY} printable ASCII characters"
        raise ValidationError([{"loc": ("header", "Idempotency-Key"), "msg": problem}])
    return key
