"""Bearer tokens: per-profile read tokens for agents, per-user API tokens for scripts.

A token is `rsp_…` (pack reader), `rse_…` (event writer: sends one profile's decision events and
can read nothing) or `rsu_…` (user) followed by 256 random bits. Only its sha256 is
stored: a high-entropy secret needs no slow hash, and looking it up by digest leaks nothing
about other tokens. The secret is returned once, at creation. `last_used_at` is written at
most once a minute so that a busy agent does not turn every pull into a write.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any, TypeVar

from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone
from ninja.errors import AuthenticationError
from ninja.security import HttpBearer

from studio.models import ApiToken, AuditEntry, Profile, ReadToken, TokenBase, TokenScope
from studio.shared.audit import audit

READ_PREFIX = "rsp_"
EVENTS_PREFIX = "rse_"
PREFIXES = {TokenScope.PULL: READ_PREFIX, TokenScope.EVENTS: EVENTS_PREFIX}
USER_PREFIX = "rsu_"
TOUCH_EVERY = timedelta(minutes=1)

T = TypeVar("T", bound=TokenBase)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _new_secret(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(32)


def create_read_token(
    profile: Profile, name: str, *, user: Any, scope: str = TokenScope.PULL
) -> tuple[ReadToken, str]:
    """A token that pulls this profile's packs, or (scope events) only sends its decision events.

    Returns the token and its secret (shown once).
    """
    secret = _new_secret(PREFIXES[TokenScope(scope)])
    with transaction.atomic():
        token = ReadToken.objects.create(
            profile=profile,
            scope=scope,
            name=name,
            prefix=secret[:12],
            digest=digest(secret),
            created_by=user,
        )
        after = {"name": name, "prefix": token.prefix, "scope": scope}
        audit(user, profile, "token.create", token, None, after)
    return token, secret


def create_api_token(user: Any, name: str) -> tuple[ApiToken, str]:
    """A token that acts as `user` in the API. Returns the token and its secret (shown once)."""
    secret = _new_secret(USER_PREFIX)
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user, name=name, prefix=secret[:12], digest=digest(secret)
        )
        _user_audit(user, "api_token.create", token)
    return token, secret


def revoke(token: TokenBase, *, user: Any) -> None:
    """Revoke a token for good (kept, greyed out, for the record)."""
    if token.revoked_at is not None:
        return
    with transaction.atomic():
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        if isinstance(token, ReadToken):
            after = {"prefix": token.prefix, "scope": token.scope}
            audit(user, token.profile, "token.revoke", token, None, after)
        else:
            _user_audit(user, "api_token.revoke", token)


def _user_audit(user: Any, action: str, token: TokenBase) -> None:
    AuditEntry.objects.create(
        user=user,
        username=user.get_username(),
        action=action,
        object_type="token",
        object_repr=str(token),
    )


def find(model: type[T], secret: str, *related: str, **where: Any) -> T | None:
    """The active token with this secret, its last use recorded; None for any other secret.

    `related` names foreign keys to fetch in the same query (the user behind an API token);
    `where` narrows the match (a read token's scope).
    """
    # The digest is unique, so no ORDER BY (`.first()` would add one for every request).
    found = model._default_manager.filter(digest=digest(secret), revoked_at=None, **where)
    found = found.order_by()
    token = next(iter(found.select_related(*related)[:1] if related else found[:1]), None)
    if token is not None:
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > TOUCH_EVERY:
            model._default_manager.filter(pk=token.pk).update(last_used_at=now)
            token.last_used_at = now
    return token


# -- ninja authentication ---------------------------------------------------------------------------


class UserTokenAuth(HttpBearer):
    """`Authorization: Bearer rsu_…`: the request acts as the token's user.

    A request that sends a bearer token is a script's: a token that does not hold is answered
    401 with the reason here, rather than falling through to the session's check, whose CSRF
    refusal ("CSRF check Failed", 403) would tell a script nothing about its token.
    """

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        if not token.startswith(USER_PREFIX):
            raise AuthenticationError(message=_not_a_user_token(token))
        found = find(ApiToken, token, "user")
        if found is None or not found.user.is_active:
            raise AuthenticationError(message="the API token is invalid or was revoked")
        request.user = found.user
        return found.user


def _not_a_user_token(token: str) -> str:
    """Why a token that is not a user's cannot call the user API, in words a script's author acts on."""
    scope = {READ_PREFIX: "pulls packs", EVENTS_PREFIX: "sends decision events"}
    for prefix, does in scope.items():
        if token.startswith(prefix) and find(ReadToken, token) is not None:
            return f"this agent token only {does}: the API needs a personal API token (rsu_…)"
    return "the token is invalid or was revoked: the API needs a personal API token (rsu_…)"


# Read (pull) tokens are checked by `studio.agents.pulls.PullTokenAuth`, in one query with what they pull.


class EventTokenAuth(HttpBearer):
    """`Authorization: Bearer rse_…`: may send one profile's decision events and nothing else."""

    def authenticate(self, request: HttpRequest, token: str) -> ReadToken | None:
        if not token.startswith(EVENTS_PREFIX):
            return None
        return find(ReadToken, token, scope=TokenScope.EVENTS)
