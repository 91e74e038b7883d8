"""API: agents pull the pack an environment points at, with a strong ETag and 304s.

Auth: the profile's read token (`Bearer rsp_…`), or a studio user. A read token of *another*
profile gets the same 404 as a profile that does not exist, so a token reveals nothing about
profiles it cannot read.
"""

from __future__ import annotations

from typing import Any, Literal

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponseBase
from ninja import Router

from routing_core.rollout import Rollout
from studio.agents.pulls import PullGrant, PullTokenAuth, pack_answer, pull_answer
from studio.models import SERVED, Environment
from studio.models import Rollout as RolloutRow
from studio.shared.api_access import USER_AUTH, require
from studio.shared.ratelimits import limit
from studio.shared.roles import VIEW
from studio.shared.schemas import ERRORS, SLUG, ErrorOut

router = Router(tags=["agents"], auth=[PullTokenAuth(), *USER_AUTH])


@router.get(
    "/{slug}/packs/{environment}",
    response={200: dict[str, Any], 304: None, 429: ErrorOut, **ERRORS},
    summary="The pack an environment serves (for agents)",
)
def pull_pack(
    request: HttpRequest, environment: Literal["staging", "production"], slug: str = SLUG
) -> HttpResponseBase:
    """The canonical pack JSON. `ETag` is its checksum; send it back in `If-None-Match` for a 304.

    Compressed (zstd, else gzip) when `Accept-Encoding` allows it; the ETag is the pack's
    checksum whatever the encoding, so a 304 never depends on how the body travelled.
    """
    limit(request, "pack-pull", settings.STUDIO_RATE_PACK_PULL)
    grant: Any = request.auth  # type: ignore[attr-defined]
    if isinstance(grant, PullGrant):
        # The token's query already joined its environment (studio.agents.pulls).
        return pull_answer(request, grant, environment)
    require(request, VIEW)
    version_id, checksum, _number = _served(slug, environment)
    if version_id is None or checksum is None:
        raise Http404
    return pack_answer(request, version_id, checksum, _offer(_served_rollout(slug, environment)))


@router.get(
    "/{slug}/packs/{environment}/candidate",
    response={200: dict[str, Any], 304: None, 429: ErrorOut, **ERRORS},
    summary="The candidate pack of an environment's rollout (for agents)",
)
def pull_candidate(
    request: HttpRequest, environment: Literal["staging", "production"], slug: str = SLUG
) -> HttpResponseBase:
    """The rollout's candidate pack, ETag its checksum; 404 when no rollout is served.

    An agent fetches it when the environment's pull names a rollout in its `Routing-Rollout`
    header (docs/pack-format.md, "Rollouts over HTTP").
    """
    limit(request, "pack-pull", settings.STUDIO_RATE_PACK_PULL)
    grant: Any = request.auth  # type: ignore[attr-defined]
    if isinstance(grant, PullGrant):
        if not grant.readable or grant.candidate_id is None or grant.rollout is None:
            raise Http404
        return pack_answer(request, grant.candidate_id, grant.rollout.checksum)
    require(request, VIEW)
    rollout = _served_rollout(slug, environment)
    if rollout is None:
        raise Http404
    return pack_answer(request, rollout.candidate_id, rollout.candidate.checksum)


def _served(slug: str, environment: str) -> tuple[int | None, str | None, int | None]:
    """What an environment serves, for a studio user: (version id, checksum, number)."""
    # (profile, name) is unique: no ORDER BY, which `.first()` would compile on every pull.
    rows = (
        Environment.objects.filter(profile__slug=slug, name=environment)
        .order_by()
        .values_list("version_id", "version__checksum", "version__number")[:1]
    )
    return next(iter(rows), (None, None, None))


def _served_rollout(slug: str, environment: str) -> RolloutRow | None:
    """The environment's served rollout, for a studio user."""
    return (
        RolloutRow.objects.filter(
            environment__profile__slug=slug, environment__name=environment, status__in=SERVED
        )
        .select_related("candidate")
        .first()
    )


def _offer(row: RolloutRow | None) -> Rollout | None:
    """The rollout as the pull's header names it."""
    if row is None:
        return None
    return Rollout(row.pk, row.mode, row.share, row.candidate.number, row.candidate.checksum)  # type: ignore[arg-type]
