"""API: agents pull the pack an environment points at, with a strong ETag and 304s.

Auth: the profile's read token (`Bearer rsp_…`), or a studio user. A read token of *another*
profile gets the same 404 as a profile that does not exist, so a token reveals nothing about
profiles it cannot read.
"""

from __future__ import annotations

from typing import Any, Literal

from django.http import Http404, HttpRequest, HttpResponse
from django.utils.cache import get_conditional_response
from ninja import Router

from studio.models import Environment, ReadToken
from studio.roles import VIEW
from studio.routers.access import USER_AUTH, require
from studio.routers.profiles import ERRORS, SLUG
from studio.tokens import ReadTokenAuth

router = Router(tags=["agents"], auth=[ReadTokenAuth(), *USER_AUTH])


@router.get(
    "/{slug}/packs/{environment}",
    response={200: dict[str, Any], 304: None, **ERRORS},
    summary="The pack an environment serves (for agents)",
)
def pull_pack(
    request: HttpRequest, environment: Literal["staging", "production"], slug: str = SLUG
) -> HttpResponse:
    """The canonical pack JSON. `ETag` is its checksum; send it back in `If-None-Match` for a 304."""
    auth: Any = request.auth  # type: ignore[attr-defined]
    if isinstance(auth, ReadToken):
        if auth.profile.slug != slug:
            raise Http404
    else:
        require(request, VIEW)
    env = Environment.objects.filter(profile__slug=slug, name=environment).select_related("version")
    found = env.first()
    if found is None or found.version is None:
        raise Http404
    etag = f'"{found.version.checksum}"'
    unchanged = get_conditional_response(request, etag=etag)
    response = unchanged or HttpResponse(found.version.pack_json, content_type="application/json")
    response["ETag"] = etag
    response["Cache-Control"] = "private, no-cache"
    response["Vary"] = "Authorization"
    return response
