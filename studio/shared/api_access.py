"""Who may call the API: session (with CSRF) or a user's bearer token, and the role checks."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja.security import SessionAuth

from studio.models import Profile
from studio.shared.roles import EDIT, PUBLISH, VIEW
from studio.shared.tokens import UserTokenAuth


class BrowserSessionAuth(SessionAuth):
    """The signed-in browser's session, with ninja's CSRF check when there is a session.

    A request without the session cookie cannot act as anyone through it, so it gets the 401
    of a missing credential, not the 403 of a CSRF check (which would read as if a script's
    token had been judged and found wrong).
    """

    def _get_key(self, request: HttpRequest) -> str | None:
        if self.param_name not in request.COOKIES:
            return None
        return super()._get_key(request)


# A bearer token first: a script sends no cookie and needs no CSRF token.
USER_AUTH = [UserTokenAuth(), BrowserSessionAuth()]
ROLE_NAMES = {VIEW: "a studio role", EDIT: "the editor role", PUBLISH: "the publisher role"}


def require(request: HttpRequest, perm: str) -> Any:
    """The authenticated user, if they hold `perm`; 403 otherwise."""
    user: Any = request.auth  # type: ignore[attr-defined]
    if not user.has_perm(perm):
        raise PermissionDenied(f"this needs {ROLE_NAMES[perm]}")
    return user


def profile_for(request: HttpRequest, slug: str, perm: str = VIEW) -> Profile:
    require(request, perm)
    return get_object_or_404(Profile, slug=slug)
