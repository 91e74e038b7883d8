"""Every URL and every API operation × every kind of caller: each gets exactly what it should.

Roles are global (viewer ⊂ editor ⊂ publisher ⊂ admin, Django groups): the studio has no teams, so
there is no "user of another team" column, and every role sees every profile. The one credential
scoped to a profile is the read token: from another profile it must get exactly what a missing
profile gives, so a token reveals nothing about profiles it cannot read.

The pages are found by walking the URL resolver and the API operations by walking the published
OpenAPI schema: a new page or operation without a row here fails the suite, so nothing escapes.
Each request runs in a savepoint that is rolled back, so every caller meets the same data.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from routing_core import Router
from routing_core.signing import generate_private_key, private_key_pem
from studio.agents.events import EventBatchIn, ingest
from studio.api import api
from studio.models import Event, ImportJob, Profile, ReadToken, Route, TestCase, TokenScope
from studio.publishing.rollouts import Conditions, start_rollout
from studio.publishing.versions import promote, publish
from studio.shared.edits import delete_item
from studio.shared.packs import build_pack, build_pack_dict
from studio.shared.roles import grant
from studio.shared.tokens import create_api_token, create_read_token, revoke
from studio.suites.runs import start_run
from studio.traffic.replays import start_replay
from tests.studio.fixtures import found_search

ROLES = ("anonymous", "outsider", "viewer", "editor", "publisher", "admin")
MISSING = "no-such-profile"


# -- the cast and the data --------------------------------------------------------------------------


@dataclass
class World:
    profile: Profile
    other: Profile
    users: dict[str, User | None]
    ids: dict[str, int] = field(default_factory=dict)
    clients: dict[str, Client] = field(default_factory=dict)

    def client(self, role: str) -> Client:
        if role not in self.clients:
            self.clients[role] = _client(self.users[role])
        return self.clients[role]


@pytest.fixture
def world(profile: Profile, owner: User) -> World:
    users: dict[str, User | None] = {"anonymous": None}
    for role in ROLES[1:]:
        user = User.objects.create_user(f"matrix-{role}", password="pw")
        if role != "outsider":
            grant(user, role)
        users[role] = user
    other = Profile.objects.create(slug="other", name="Other")
    Route.objects.create(profile=other, name="elsewhere", examples=["somewhere else"])
    version = publish(profile, user=owner)
    promote(version, "production", user=owner)
    profile.near_tie_margin = 0.2
    profile.save()
    candidate = publish(profile, user=owner, environment=None)
    rollout = start_rollout(
        profile, "production", candidate, mode="shadow", share=0, conditions=Conditions(),
        user=owner,
    )  # fmt: skip
    case = TestCase.objects.create(profile=profile, message="where is my parcel", order=0)
    run = start_run(profile, user=owner)
    event = _stored_event(profile)
    replay = start_replay(profile, "draft", user=owner)
    imported = ImportJob.objects.create(format="pack", started_by=owner, status="failed")
    search = found_search(case, "add_keyword", "shipping", "parcel")
    ids = {
        "import": imported.pk,
        "search": search.pk,
        "event": event.pk,
        "replay": replay.pk,
        "route": profile.routes.get(name="shipping").pk,
        "rule": profile.rules.get().pk,
        "tool": profile.tools.get(name="refund_order").pk,
        "case": case.pk,
        "run": run.pk,
        "version": version.number,
        "candidate": candidate.number,
        "rollout": rollout.pk,
        "other_route": other.routes.get().pk,
        "person": users["viewer"].pk,  # type: ignore[union-attr]
        "audit": 10**6,  # replaced by a real deletion where the restore itself is requested
    }
    return World(profile, other, users, ids)


def _stored_event(profile: Profile) -> Event:
    event = Router(build_pack(profile)).route("what is the weather").to_event()
    ingest(profile, EventBatchIn.model_validate({"events": [{"message": "hm", "event": event}]}))
    return Event.objects.get(profile=profile)


def _client(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def _rolled_back(send: Any, *args: Any, **kwargs: Any) -> Any:
    """Send a request whose writes are undone, so that the next caller meets the same data."""
    with transaction.atomic():
        response = send(*args, **kwargs)
        transaction.set_rollback(True)
    return response


# -- pages ------------------------------------------------------------------------------------------

VIEWER = {"anonymous": 302, "outsider": 403, "viewer": 200, "editor": 200, "publisher": 200}
READER_POST = {"anonymous": 302, "outsider": 403, "viewer": 302, "editor": 302, "publisher": 302}


def _edit(status: int) -> dict[str, int]:
    """A POST that needs the editor role; `status` is what an editor's request gets."""
    return {"anonymous": 302, "outsider": 403, "viewer": 403, "editor": status, "publisher": status}


def _publish(status: int) -> dict[str, int]:
    return {**_edit(403), "publisher": status}


def _admin(status: int) -> dict[str, int]:
    """The people pages: the admin role only, for reading as for changing."""
    return {**_publish(403), "viewer": 403, "admin": status}


def _everyone(status: int) -> dict[str, int]:
    return dict.fromkeys(ROLES[:-1], status)


@dataclass(frozen=True)
class Call:
    """One request to a page and the status each role gets (admin: as a publisher)."""

    method: str
    expect: dict[str, int]
    data: dict[str, Any] = field(default_factory=dict)
    htmx: bool = False


ITEM_KINDS = {"routes": "route", "rules": "rule", "tools": "tool"}

PAGES: dict[str, list[Call]] = {
    "home": [Call("get", _everyone(302))],
    "healthz": [Call("get", _everyone(200))],
    "login": [Call("get", _everyone(200))],
    "logout": [Call("get", _everyone(405)), Call("post", _everyone(302))],
    "profile-list": [
        Call("get", VIEWER),
        Call("post", _edit(302), {"slug": "made-here", "name": "Made here"}),
    ],
    "import": [Call("get", VIEWER), Call("post", _edit(422))],
    "import-draft": [Call("get", VIEWER), Call("post", _edit(422))],
    # importing from another tool is only offered to editors: viewers do not even see the form
    "import-from": [Call("get", _edit(200)), Call("post", _edit(422))],
    # an import's job page: it may list another person's upload, so editors only, as the form
    "import-job": [Call("get", _edit(200))],
    "import-job-cancel": [Call("post", _edit(302))],
    # suggestions cost model calls: editors only; with no endpoint configured a POST is a no-op
    "route-suggest": [Call("get", _edit(200)), Call("post", _edit(200))],
    # drafted test conversations cost model calls too: editors only, and a no-op without one
    "route-conversations": [Call("get", _edit(200)), Call("post", _edit(200))],
    # the fix page shows the case and its search (editors only); a POST naming no search of
    # the case that found a fix is refused with a message and sent back to the page
    "tests-fix": [Call("get", _edit(200)), Call("post", _edit(302))],
    "tests-fix-search": [Call("post", _edit(302))],  # "Find a fix": to the search's page
    "tests-fix-cancel": [Call("post", _edit(404))],  # no such search of this case
    "tests-fix-again": [Call("post", _edit(302))],
    "profile-detail": [Call("get", VIEWER)],
    "route-view": [Call("get", VIEWER)],
    "people": [
        Call("get", _admin(200)),
        Call("post", _admin(302), {"username": "made-by-matrix", "roles": ["viewer"]}),
    ],
    "person-roles": [Call("post", _admin(302), {"roles": ["viewer"]})],
    "person-active": [Call("post", _admin(302), {"active": "1"})],
    "person-link": [Call("post", _admin(302))],
    # a one-time link is for someone signed out: a wrong one says so to anybody
    "password-set": [Call("get", _everyone(200) | {"admin": 200})],
    "profile-settings": [Call("post", _edit(422))],
    "rules": [Call("get", VIEWER)],
    "rules-preview": [Call("post", _edit(200), {"match_kind": "keywords", "keywords": "x"})],
    "tools": [Call("get", VIEWER)],
    "playground": [
        Call("get", VIEWER),
        Call("post", VIEWER, {"message": "refund please", "action": "check"}),
        Call("post", _edit(302), {"action": "apply", "near_tie_margin": "0.2"}),
    ],
    "policy": [Call("get", VIEWER), Call("post", _edit(422))],
    # An empty post carries no revision: the form is out of date (422), not an edit conflict.
    "lexicons": [Call("get", VIEWER), Call("post", _edit(422))],
    "pack-badge": [Call("get", VIEWER)],
    "out-of-scope-notice": [Call("get", VIEWER)],
    "audit": [Call("get", VIEWER)],
    "audit-restore": [Call("post", _edit(302))],
    "versions": [Call("get", VIEWER)],
    "version-download": [Call("get", VIEWER)],
    "publish": [
        Call("get", {**_publish(200), "viewer": 403}),
        Call("post", _publish(302), {"note": "from the matrix", "reason": "its case fails"}),
    ],
    "promote": [
        Call("get", _publish(200), {"version": "1", "environment": "staging"}),
        Call("post", _publish(302), {"version": "1", "environment": "staging"}),
    ],
    "diff": [Call("get", VIEWER)],
    "rollout-new": [
        Call("get", _publish(200), {"version": "2", "environment": "staging"}),
        Call("post", _publish(302), {"version": "2", "environment": "staging", "mode": "shadow"}),
    ],
    "rollout": [Call("get", VIEWER)],
    "rollout-act": [Call("post", _publish(302), {"action": "stop"})],
    "tokens": [
        Call("get", VIEWER),
        Call("post", _publish(302), {"action": "create-read", "name": "agent"}),
        Call("post", _edit(302), {"action": "create-api", "name": "script"}),
    ],
    "tests": [Call("get", VIEWER)],
    "tests-add": [Call("post", _edit(422))],
    # an empty POST is an unbound form: shown again, nothing to complain about yet
    "tests-import": [Call("get", VIEWER), Call("post", _edit(200))],
    "tests-export": [Call("get", VIEWER)],
    "tests-export-csv": [Call("get", VIEWER)],
    "tests-row": [Call("get", VIEWER, htmx=True)],
    "tests-edit": [Call("get", VIEWER), Call("post", _edit(422))],
    "tests-delete": [Call("get", VIEWER), Call("post", _edit(302))],
    "test-run-start": [Call("post", READER_POST)],
    "test-run": [Call("get", VIEWER)],
    "job": [Call("get", VIEWER)],
    "job-cancel": [Call("post", READER_POST)],  # who may start a run may cancel it
    "playground-model": [Call("get", VIEWER)],
    "lint": [Call("get", VIEWER)],
    "overlap": [Call("get", VIEWER)],
    "overlap-start": [Call("post", READER_POST)],
    "tuning": [Call("get", VIEWER)],
    "tuning-apply": [Call("post", _edit(302))],
    "agents": [Call("get", VIEWER)],
    "traffic": [Call("get", VIEWER), Call("post", _publish(302), {"retention_days": "7"})],
    "traffic-review": [Call("get", VIEWER)],
    "traffic-scrub": [Call("post", _publish(302))],
    "out-of-scope-starter": [Call("post", _edit(302))],
    "traffic-label": [Call("post", _edit(302), {"route": "billing", "as": "test"})],
    "replay-start": [Call("post", READER_POST, {"target": "draft"})],
    "replay": [Call("get", VIEWER)],
    **{
        name.format(kind=kind): calls
        for kind in ITEM_KINDS
        for name, calls in {
            "{kind}-add": [Call("post", _edit(422))],
            "{kind}-row": [Call("get", VIEWER, htmx=True)],
            "{kind}-edit": [Call("get", VIEWER), Call("post", _edit(422))],
            "{kind}-delete": [Call("get", VIEWER), Call("post", _edit(302))],
            "{kind}-move": [Call("post", _edit(302), {"direction": "up"})],
        }.items()
    },
}

# Django's own admin is for staff accounts (none of the studio roles is staff): its whole
# namespace is covered by one expectation, checked on its index. The API's own URL patterns
# (schema, docs, operations) are covered by the OpenAPI walk below.
OPEN_NAMESPACES = {"admin", "api"}


def _walk(resolver: URLResolver, namespace: str | None = None) -> Iterator[tuple[str | None, str]]:
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern, pattern.namespace or namespace)
        elif isinstance(pattern, URLPattern):
            yield namespace, pattern.name or str(pattern.pattern)


def _kwargs(name: str, world: World, slug: str) -> dict[str, Any]:
    pattern = next(p for p in get_resolver().reverse_dict.getlist(name))
    params = set(pattern[0][0][1])
    kwargs: dict[str, Any] = {}
    if "slug" in params:
        kwargs["slug"] = slug
    if "uidb64" in params:
        kwargs.update(uidb64="MQ", token="not-a-token")
    if "number" in params:
        kwargs["number"] = world.ids["version"]
    if "kind" in params:
        kwargs["kind"] = "test_run"
    if "pk" in params:
        kind = name.split("-")[0]
        key = {
            "tests": "case",
            "test": "run",
            "job": "run",
            "audit": "audit",
            "traffic": "event",
            "person": "person",
            "import": "import",
            "rollout": "rollout",
        }.get(kind, ITEM_KINDS.get(kind))
        key = "replay" if name == "replay" else key
        kwargs["pk"] = world.ids[key or "route"]
    return kwargs


def test_every_page_has_an_expectation_for_every_role():
    names = {name for ns, name in _walk(get_resolver()) if ns not in OPEN_NAMESPACES}

    assert names - PAGES.keys() == set(), "a page has no row in the access matrix"
    assert PAGES.keys() - names == set(), "the matrix names a page that does not exist"


def _deleted_route_entry(world: World) -> int:
    route = world.profile.routes.get(name="shipping")
    delete_item(route, user=world.users["admin"])
    again = Route.objects.create(
        profile=world.profile, name="shipping", examples=["parcel"], order=9
    )
    world.ids["route"] = again.pk
    # the restore is refused (the name is taken) but only after the role check: 302 + message
    return world.profile.audit_entries.get(action="route.delete").pk


_PUBLIC = {"home", "healthz", "login", "logout"}


def test_each_page_answers_each_role_as_the_matrix_says(world):
    world.ids["audit"] = _deleted_route_entry(world)
    got, wanted = {}, {}
    for name, calls in PAGES.items():
        url = reverse(name, kwargs=_kwargs(name, world, world.profile.slug))
        for call, role in ((call, role) for call in calls for role in ROLES):
            headers = {"HTTP_HX_REQUEST": "true"} if call.htmx else {}
            # signing out ends the session: that page gets clients of its own
            client = _client(world.users[role]) if name == "logout" else world.client(role)
            send = getattr(client, call.method)
            response = _rolled_back(send, url, call.data, **headers)
            key = f"{name} {call.method} {call.data.get('action', '')} {role}"
            got[key] = response.status_code
            wanted[key] = call.expect.get(role, call.expect["publisher"])
            if role == "anonymous" and response.status_code == 302 and name not in _PUBLIC:
                assert response["Location"].startswith(reverse("login")), url
    assert got == wanted


def test_a_missing_profile_is_a_404_for_a_role_and_reveals_nothing_before_sign_in(world):
    got, wanted = {}, {}
    for name, calls in PAGES.items():
        kwargs = _kwargs(name, world, MISSING)
        if "slug" not in kwargs:
            continue
        url, method = reverse(name, kwargs=kwargs), calls[0].method
        for role, status in (("anonymous", 302), ("outsider", 403), ("admin", 404)):
            got[f"{name} {role}"] = _rolled_back(
                getattr(world.client(role), method), url
            ).status_code
            wanted[f"{name} {role}"] = status
    assert got == wanted


@pytest.mark.parametrize("kind", ["routes", "rules", "tools"])
def test_an_item_of_another_profile_is_not_reachable_through_this_profiles_urls(kind, world):
    other_item = {"routes": world.other.routes.get()}.get(kind)
    pk = other_item.pk if other_item else 10**6
    client = _client(world.users["admin"])

    for action in ("edit", "delete"):
        url = reverse(f"{kind}-{action}", args=[world.profile.slug, pk])
        assert client.get(url).status_code == 404
        assert _rolled_back(client.post, url).status_code == 404
    assert world.other.routes.count() == 1


def test_djangos_admin_is_closed_to_every_studio_role(world):
    url = reverse("admin:index")

    statuses = {role: _client(world.users[role]).get(url).status_code for role in ROLES}

    assert statuses == dict.fromkeys(ROLES, 302)


# -- the API ----------------------------------------------------------------------------------------

VIEW, EDIT, PUBLISH = "view", "edit", "publish"
RANK = {"outsider": 0, "viewer": 1, "editor": 2, "publisher": 3, "admin": 4}
NEEDS = {VIEW: 1, EDIT: 2, PUBLISH: 3}


@dataclass(frozen=True)
class Op:
    """A valid request to one API operation: the role it needs and what success looks like."""

    needs: str
    ok: int
    path: dict[str, Any] = field(default_factory=dict)
    body: Any = None
    query: str = ""


def _operations(world: World) -> dict[str, Op]:
    ids, revision = world.ids, 1
    pack = build_pack_dict(world.profile)
    items = {
        "routes": ("route", {"name": "brand_new", "examples": ["hello there"]}),
        "rules": ("rule", {"route_name": "billing", "keywords": ["invoice copy"]}),
        "tools": ("tool", {"name": "brand_new_tool"}),
        "test-cases": ("case", {"message": "hello"}),
    }
    ops: dict[str, Op] = {}
    for kind, (key, body) in items.items():
        one = {"item_id": ids[key]}
        ops[f"list_{kind}"] = Op(VIEW, 200)
        ops[f"create_{kind}"] = Op(EDIT, 201, body=body)
        ops[f"read_{kind}"] = Op(VIEW, 200, one)
        ops[f"edit_{kind}"] = Op(EDIT, 200, one, {"revision": revision})
        ops[f"delete_{kind}"] = Op(EDIT, 204, one)
    number = {"number": ids["version"]}
    fix = {"case_id": ids["case"]}
    search = {**fix, "search_id": ids["search"]}
    return {
        **ops,
        "list_versions": Op(VIEW, 200),
        "publish_version": Op(PUBLISH, 201, body={"note": "matrix", "reason": "its case fails"}),
        "read_version": Op(VIEW, 200, number),
        "download_version": Op(VIEW, 200, number),
        "download_signature": Op(VIEW, 200, number),
        "list_agents": Op(VIEW, 200),
        "list_environments": Op(VIEW, 200),
        "promote_version": Op(
            PUBLISH, 200, {"environment": "staging"}, {"version": ids["version"]}
        ),
        "diff_versions": Op(VIEW, 200, query=f"?old={ids['version']}"),
        "import_draft": Op(EDIT, 200, body=pack),
        "pull_pack": Op(VIEW, 200, {"environment": "production"}),
        "pull_candidate": Op(VIEW, 200, {"environment": "production"}),
        "create_rollout": Op(
            PUBLISH,
            201,
            {"environment": "staging"},
            {"version": ids["candidate"], "mode": "shadow"},
        ),
        "get_served_rollout": Op(VIEW, 200, {"environment": "production"}),
        "get_rollout": Op(VIEW, 200, {"rollout_id": ids["rollout"]}),
        "put_conditions": Op(PUBLISH, 200, {"rollout_id": ids["rollout"]}, {"min_turns": 100}),
        "stop_rollout": Op(PUBLISH, 200, {"rollout_id": ids["rollout"]}),
        "promote_rollout": Op(PUBLISH, 200, {"rollout_id": ids["rollout"]}),
        "list_profiles": Op(VIEW, 200),
        "create_profile": Op(EDIT, 201, body={"slug": "made-by-api", "name": "Made"}),
        "read_profile": Op(VIEW, 200),
        "edit_profile": Op(EDIT, 200, body={"revision": world.profile.revision}),
        "delete_profile": Op(EDIT, 204, {"slug": "other"}),
        "import_new": Op(EDIT, 201, query="?slug=imported"),
        "route_message": Op(VIEW, 200, body={"message": "refund please"}),
        # "Find a fix", as the page: editors. The search of this draft exists, so starting
        # one reuses it (200: it has ended); its fix applies (each call is rolled back).
        "start_fix_search": Op(EDIT, 200, fix),
        "read_fix_search": Op(EDIT, 200, search),
        "cancel_fix_search": Op(EDIT, 200, search),
        "apply_fix": Op(EDIT, 200, search),
        # Only the profile's event token may send events (see the loop below): users get 401.
        "post_events": Op(VIEW, 202, body={"events": [_event_record(world)]}),
    }


def _event_record(world: World) -> dict[str, Any]:
    event = Router(build_pack(world.profile)).route("refund please").to_event()
    return {"message": "refund please", "event": event}


def _schema_operations() -> dict[str, tuple[str, str]]:
    paths = api.get_openapi_schema()["paths"]
    return {
        op["operationId"]: (method, path)
        for path, ops in paths.items()
        for method, op in ops.items()
    }


def _url(path: str, op: Op, slug: str) -> str:
    values = {"slug": slug, **op.path}
    return path.format(**values) + op.query


def _send(client: Client, method: str, url: str, op: Op, token: str | None) -> Any:
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    body = op.body
    if url.startswith("/api/imports"):
        body = {
            **build_pack_dict(Profile.objects.get(slug="shop")),
            "profile": {"slug": "x", "name": "X"},
        }
    kwargs: dict[str, Any] = {"content_type": "application/json", **headers}
    if body is not None:
        kwargs["data"] = body
    return _rolled_back(getattr(client, method), url, **kwargs)


@pytest.fixture(autouse=True)
def signing(settings: Any) -> None:
    """The studio signs packs here, so a version's signature is there to download."""
    settings.STUDIO_SIGNING_KEY_FILE = ""
    settings.STUDIO_SIGNING_KEY = private_key_pem(generate_private_key()).decode()


def test_every_api_operation_has_a_row_in_the_matrix(world):
    assert set(_schema_operations()) == set(_operations(world))


@pytest.fixture
def tokens(world: World) -> dict[str, str]:
    secrets = {role: create_api_token(world.users[role], "matrix")[1] for role in RANK}
    revoked, secret = create_api_token(world.users["admin"], "revoked")
    revoke(revoked, user=world.users["admin"])
    read_revoked, read_secret = create_read_token(world.profile, "gone", user=world.users["admin"])
    revoke(read_revoked, user=world.users["admin"])
    return {
        **secrets,
        "revoked": secret,
        "read-revoked": read_secret,
        "read-own": create_read_token(world.profile, "agent", user=world.users["admin"])[1],
        "read-other": create_read_token(world.other, "agent", user=world.users["admin"])[1],
        "events-own": create_read_token(
            world.profile, "events", user=world.users["admin"], scope=TokenScope.EVENTS
        )[1],
    }


def test_each_api_operation_answers_each_caller_as_the_matrix_says(world, tokens):
    operations, schema = _operations(world), _schema_operations()
    got, wanted = {}, {}
    for op_id, op in operations.items():
        method, path = schema[op_id]
        url = _url(path, op, op.path.get("slug", world.profile.slug))
        is_pull = op_id.endswith(("pull_pack", "pull_candidate"))
        is_events = op_id.endswith("post_events")
        callers: dict[str, str | None] = {
            "anonymous": None,
            "revoked": tokens["revoked"],
            "read-revoked": tokens["read-revoked"],
            "read-own": tokens["read-own"],
            "events-own": tokens["events-own"],
            **{role: tokens[role] for role in RANK},
        }
        for caller, token in callers.items():
            response = _send(Client(), method, url, op, token)
            got[f"{op_id} {caller}"] = response.status_code
            if is_events:
                wanted[f"{op_id} {caller}"] = op.ok if caller == "events-own" else 401
            elif caller in RANK:
                allowed = RANK[caller] >= NEEDS[op.needs]
                wanted[f"{op_id} {caller}"] = op.ok if allowed else 403
            elif caller == "read-own" and is_pull:
                wanted[f"{op_id} {caller}"] = 200
            else:  # no credential, a revoked one, or a read token outside the pack pull
                wanted[f"{op_id} {caller}"] = 401
            if response.status_code >= 400:
                assert response["Content-Type"] == "application/json; charset=utf-8", (
                    op_id,
                    caller,
                    response.status_code,
                    response.content[:200],
                )
                assert set(response.json()) == {"detail", "errors"}, (op_id, caller)
    assert got == wanted


def test_another_profiles_read_token_gets_the_same_404_as_a_missing_profile(world, tokens):
    client = Client()
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {tokens['read-other']}"}

    foreign = client.get("/api/profiles/shop/packs/production", **bearer)
    missing = client.get(f"/api/profiles/{MISSING}/packs/production", **bearer)
    empty_env = client.get("/api/profiles/other/packs/production", **bearer)

    assert foreign.status_code == missing.status_code == empty_env.status_code == 404
    assert foreign.content == missing.content == empty_env.content
    assert ReadToken.objects.filter(profile=world.other).count() == 1


def test_a_user_token_for_a_missing_profile_gets_a_404_for_a_role_and_a_403_without_one(tokens):
    client = Client()

    def status(role: str) -> int:
        bearer = {"HTTP_AUTHORIZATION": f"Bearer {tokens[role]}"}
        return client.get(f"/api/profiles/{MISSING}", **bearer).status_code

    assert (status("outsider"), status("viewer")) == (403, 404)
