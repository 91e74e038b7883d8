"""API: agents pull the pack an environment points at, with a strong ETag and 304s.

Auth: the profile's read token (`Bearer rsp_…`), or a studio user. A read token of *another*
profile gets the same 404 as a profile that does not exist, so a token reveals nothing about
profiles it cannot read.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.cache import get_conditional_response
from ninja import Router

from studio.agents import record_pull
from studio.encodings import choose, encoded
from studio.models import Environment, Version
from studio.pulls import PullGrant, PullTokenAuth
from studio.ratelimits import limit
from studio.roles import VIEW
from studio.routers.access import USER_AUTH, require
from studio.routers.profiles import ERRORS, SLUG
from studio.routers.schemas import ErrorOut

router = Router(tags=["agents"], auth=[PullTokenAuth(), *USER_AUTH])


@router.get(
    "/{slug}/packs/{environment}",
    response={200: dict[str, Any], 304: None, 429: ErrorOut, **ERRORS},
    summary="The pack an environment serves (for agents)",
)
def pull_pack(
    request: HttpRequest, environment: Literal["staging", "production"], slug: str = SLUG
) -> HttpResponse:
    """The canonical pack JSON. `ETag` is its checksum; send it back in `If-None-Match` for a 304.

    Compressed (zstd, else gzip) when `Accept-Encoding` allows it; the ETag is the pack's
    checksum whatever the encoding, so a 304 never depends on how the body travelled.
    """
    limit(request, "pack-pull", settings.STUDIO_RATE_PACK_PULL)
    grant: Any = request.auth  # type: ignore[attr-defined]
    if isinstance(grant, PullGrant):
        # The token's query already joined its environment (studio.pulls).
        if not grant.readable:
            raise Http404  # another profile's token: the same answer as a missing profile
        version_id, checksum, number = grant.version_id, grant.checksum, grant.number
    else:
        require(request, VIEW)
        version_id, checksum, number = _served(slug, environment)
    if version_id is None or checksum is None:
        raise Http404
    if isinstance(grant, PullGrant):
        record_pull(grant, environment, request.headers.get("User-Agent", ""), number)
    etag = f'"{checksum}"'
    unchanged = get_conditional_response(request, etag=etag)
    if unchanged is not None:
        response = unchanged
    else:
        coding = choose(request.headers.get("Accept-Encoding"))
        response = HttpResponse(
            _pack_body(version_id, checksum, coding), content_type="application/json"
        )
        if coding:
            response["Content-Encoding"] = coding
    response["ETag"] = etag
    response["Cache-Control"] = "private, no-cache"
    response["Vary"] = "Authorization, Accept-Encoding"
    return response


def _served(slug: str, environment: str) -> tuple[int | None, str | None, int | None]:
    """What an environment serves, for a studio user: (version id, checksum, number)."""
    # (profile, name) is unique: no ORDER BY, which `.first()` would compile on every pull.
    rows = (
        Environment.objects.filter(profile__slug=slug, name=environment)
        .order_by()
        .values_list("version_id", "version__checksum", "version__number")[:1]
    )
    return next(iter(rows), (None, None, None))


@lru_cache(maxsize=64)
def _pack_body(version_id: int, checksum: str, coding: str | None) -> bytes:
    """A published version's body in one encoding, cached per process: versions never change
    (the database refuses it), and the key holds the checksum too, so even a reused id (a
    restored database) is a miss. It spares a busy agent fleet a megabytes read per pull."""
    if coding is not None:
        return encoded(version_id, coding)
    pack_json = Version.objects.values_list("pack_json", flat=True).get(pk=version_id)
    return pack_json.encode("utf-8")
