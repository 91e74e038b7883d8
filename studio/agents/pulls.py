"""The pack pull's hot path: one small query says who the token is and whether what its
environment serves changed.

Agents pull in a loop, and a pull (above all a 304) is nearly all per-request work. The token
is read on every pull, joined to its profile and environment, so a revocation takes effect on
the next one. What the environment serves (its version's checksum and number, a rollout beside
it and its candidate) takes three more joins, and planning that six-table query was most of
the database's time per pull (docs/lab/benchmarks.md, "Pulls from a cached ETag"). So each
process keeps it per environment, with the environment's `served_stamp` and version: every
change to the version or a rollout draws a new stamp in the database (`studio.models.
served_changed`), the pull reads it in its one query, and a different stamp or version
reads the rest again. A promotion, a rollout started, changed, halted or promoted thus
reaches the very next pull, in every process and on every machine.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from functools import lru_cache

from django.db import connection
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.utils import timezone
from django.utils.cache import get_conditional_response
from ninja.security import HttpBearer

from routing_core.fleet_status import STATUS_HEADER
from routing_core.rollout import ROLLOUT_HEADER, Rollout
from routing_core.signing import SIGNATURE_HEADER
from studio.agents.fleet import record_pull
from studio.models import SERVED, Environment, Profile, ReadToken, TokenScope, Version
from studio.models import Rollout as RolloutRow
from studio.shared.encodings import choose, encoded
from studio.shared.signing import signature_for, signing_key_id
from studio.shared.tokens import READ_PREFIX, TOUCH_EVERY, digest

_STATUS_META = "HTTP_" + STATUS_HEADER.upper().replace("-", "_")  # its key in request.META


@dataclass(frozen=True, slots=True)
class PullGrant:
    """A live pull token, and what the requested environment serves *if* it is the token's own
    profile (`readable`); `version_id` None: nothing promoted there."""

    token_id: int
    profile_id: int
    digest: str
    readable: bool
    version_id: int | None
    checksum: str | None
    number: int | None
    # The environment's rollout, when one is served (docs/pack-format.md, "Rollouts over HTTP").
    rollout: Rollout | None = None
    candidate_id: int | None = None


def _grant_sql() -> str:
    # LEFT JOINs: a live token of *another* profile still finds its row (readable false), so
    # the endpoint answers 404 as for a missing profile, not 401 as for a bad token.
    return (
        "SELECT t.id, t.profile_id, p.id, e.id, e.version_id, e.served_stamp"
        f" FROM {ReadToken._meta.db_table} t"
        f" LEFT JOIN {Profile._meta.db_table} p ON p.id = t.profile_id AND p.slug = %s"
        f" LEFT JOIN {Environment._meta.db_table} e ON e.profile_id = p.id AND e.name = %s"
        " WHERE t.digest = %s AND t.revoked_at IS NULL AND t.scope = %s"
    )


def _served_sql() -> str:
    # The environment's served rollout (at most one: a constraint) and its candidate.
    served = ", ".join(f"'{s}'" for s in SERVED)
    return (
        "SELECT v.checksum, v.number, r.id, r.mode, r.share, r.candidate_id, c.checksum, c.number"
        f" FROM {Version._meta.db_table} v"
        f" LEFT JOIN {RolloutRow._meta.db_table} r ON r.environment_id = %s"
        f" AND r.status IN ({served})"
        f" LEFT JOIN {Version._meta.db_table} c ON c.id = r.candidate_id"
        " WHERE v.id = %s"
    )


@dataclass(frozen=True, slots=True)
class Served:
    """What an environment serves, as of its `served_stamp`."""

    checksum: str
    number: int
    rollout: Rollout | None
    candidate_id: int | None


# (environment id, version id, served stamp) -> what it serves: this process's copy. A changed
# stamp or version is another key, so an entry is never stale, only unused; the map is
# emptied when full rather than kept in order (a fleet has few environments).
_served: dict[tuple[int, int, int], Served] = {}
_MAX_ENVIRONMENTS = 10_000


def find_grant(secret: str, slug: str, environment: str) -> PullGrant | None:
    """The pull token with this secret and what it may pull at `slug`/`environment`; None when
    the secret is no live pull token."""
    token_digest = digest(secret)
    with connection.cursor() as cursor:
        cursor.execute(_grant_sql(), [slug, environment, token_digest, TokenScope.PULL.value])
        row = cursor.fetchone()
    if row is None:
        return None
    token_id, profile_id, readable, environment_id, version_id, stamp = row
    _touch(token_id, token_digest)
    served = None if version_id is None else _served_now(environment_id, version_id, stamp)
    return PullGrant(
        token_id,
        profile_id,
        token_digest,
        readable is not None,
        version_id if served is not None else None,
        served.checksum if served else None,
        served.number if served else None,
        served.rollout if served else None,
        served.candidate_id if served else None,
    )


def _served_now(environment_id: int, version_id: int, stamp: int) -> Served | None:
    """What the environment serves at this stamp: this process's copy, else read once."""
    key = (environment_id, version_id, stamp)
    found = _served.get(key)
    if found is not None:
        return found
    with connection.cursor() as cursor:
        cursor.execute(_served_sql(), [environment_id, version_id])
        row = cursor.fetchone()
    if row is None:
        return None  # (the version went in between: the endpoint answers 404 as for none)
    checksum, number, rollout_id, mode, share, candidate_id, candidate_sum, candidate_no = row
    rollout = None
    if rollout_id is not None:
        rollout = Rollout(rollout_id, mode, share, candidate_no, candidate_sum)
    found = Served(checksum, number, rollout, candidate_id)
    if len(_served) >= _MAX_ENVIRONMENTS:
        _served.clear()
    _served[key] = found
    return found


def forget_served() -> None:
    """Forget this process's copies of what environments serve (tests that count queries)."""
    _served.clear()


# token digest -> when this process last wrote its `last_used_at` (monotonic seconds).
_touched: dict[str, float] = {}
_lock = threading.Lock()
_MAX_REMEMBERED = 10_000


def _touch(token_id: int, token_digest: str) -> None:
    """Record the token's use at most once a minute: once per process by the clock here, and
    across processes by the condition on the row (an older `last_used_at`), so that a busy agent
    does not turn every pull into a write."""
    clock = time.monotonic()
    with _lock:
        last = _touched.get(token_digest)
        if last is not None and clock - last < TOUCH_EVERY.total_seconds():
            return
        if len(_touched) >= _MAX_REMEMBERED:
            _touched.clear()
        _touched[token_digest] = clock
    now = timezone.now()
    unset_or_stale = Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - TOUCH_EVERY)
    ReadToken.objects.filter(unset_or_stale, pk=token_id).update(last_used_at=now)


def forget_touches() -> None:
    """Clear this process's memory of token writes (tests that move the clock)."""
    with _lock:
        _touched.clear()


class PullTokenAuth(HttpBearer):
    """`Authorization: Bearer rsp_…` on the pull endpoint: the token and its environment at once."""

    def authenticate(self, request: HttpRequest, token: str) -> PullGrant | None:
        if not token.startswith(READ_PREFIX):
            return None
        match = request.resolver_match
        kwargs = match.kwargs if match else {}
        return find_grant(token, str(kwargs.get("slug", "")), str(kwargs.get("environment", "")))


def pull_answer(request: HttpRequest, grant: PullGrant, environment: str) -> HttpResponseBase:
    """A pull token's answer once its rate limit passed: the pack, a 304, or 404 (raised).

    The one place both ways in (the ninja endpoint and `studio.agents.fast_pulls`) build it, so that
    they cannot drift apart.
    """
    if not grant.readable:
        raise Http404  # another profile's token: the same answer as a missing profile
    if grant.version_id is None or grant.checksum is None:
        raise Http404
    # META rather than `request.headers`: building the latter from every header was ~5 % of a
    # 304 (docs/lab/benchmarks.md, "Pulls from a cached ETag").
    meta = request.META
    record_pull(
        grant,
        environment,
        meta.get("HTTP_USER_AGENT", ""),
        grant.number,
        meta.get(_STATUS_META, ""),
    )
    return pack_answer(request, grant.version_id, grant.checksum, grant.rollout)


def pack_answer(
    request: HttpRequest, version_id: int, checksum: str, rollout: Rollout | None = None
) -> HttpResponseBase:
    """The version's pack (compressed as `Accept-Encoding` allows) or a 304 for its ETag.

    With a served `rollout`, the `Routing-Rollout` header names it and the ETag covers it too,
    so that starting, changing or halting a rollout reaches an agent at its next pull while a
    pull that finds nothing new is still a 304 (docs/pack-format.md, "Rollouts over HTTP").
    """
    etag = f'"{checksum}"' if rollout is None else f'"{checksum}+{_rollout_tag(rollout)}"'
    response: HttpResponseBase
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
        signature = _signature(version_id, checksum, signing_key_id())
        if signature is not None:
            response[SIGNATURE_HEADER] = signature
    response["ETag"] = etag
    if rollout is not None:
        response[ROLLOUT_HEADER] = rollout.header()
    response["Cache-Control"] = "private, no-cache"
    response["Vary"] = "Authorization, Accept-Encoding"
    return response


def _rollout_tag(rollout: Rollout) -> str:
    """The rollout's part of the ETag: no spaces or quotes, which an ETag cannot hold."""
    return f"r{rollout.id}.{rollout.mode}.{rollout.share}.{rollout.checksum}"


@lru_cache(maxsize=64)
def _signature(version_id: int, checksum: str, key: str | None) -> str | None:
    """The signature of the version's bytes as served before any encoding (docs/pack-format.md,
    Signed packs), cached per process and per key, so a rotated key signs every version anew."""
    if key is None:
        return None
    return signature_for(_pack_body(version_id, checksum, None))


@lru_cache(maxsize=64)
def _pack_body(version_id: int, checksum: str, coding: str | None) -> bytes:
    """A published version's body in one encoding, cached per process: versions never change
    (the database refuses it), and the key holds the checksum too, so even a reused id (a
    restored database) is a miss. It spares a busy agent fleet a megabytes read per pull."""
    if coding is not None:
        return encoded(version_id, coding)
    pack_json = Version.objects.values_list("pack_json", flat=True).get(pk=version_id)
    return pack_json.encode("utf-8")
