"""The studio's cast (owner, editor, viewer, outsider) and a small profile to edit."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from studio.models import Profile, RepairJob, Route, Rule, TestCase, Tool
from studio.shared.roles import grant
from tests.job_worker import IMMEDIATE, job_worker  # noqa: F401  (a fixture)
from tests.routing_core.chat_server import ChatServer, answers

# The studio's own tests (studio/<area>/tests/); this plugin is loaded for every test, and the
# engine's, the server's and the browser tests must not have the studio's jobs run inline.
STUDIO = Path(__file__).resolve().parents[2] / "studio"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On SQLite, deselect the PostgreSQL-only tests: they run in the PostgreSQL pass.

    Deselected, not skipped: a skip in CI reads as a test that could not run.
    """
    if settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        return
    deselected = [item for item in items if "postgres_only" in item.keywords]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if "postgres_only" not in item.keywords]


def _user(username: str, *roles: str) -> User:
    user = User.objects.create_user(username, password="pw")
    if roles:
        grant(user, *roles)
    return user


@pytest.fixture
def owner(db: Any) -> User:
    return _user("owner", "viewer", "editor", "publisher", "admin")


@pytest.fixture
def editor(db: Any) -> User:
    return _user("editor", "editor")


@pytest.fixture
def viewer(db: Any) -> User:
    return _user("viewer", "viewer")


@pytest.fixture
def outsider(db: Any) -> User:
    """Signed in, but holds no role."""
    return _user("outsider")


@pytest.fixture
def client_for() -> Callable[[User | None], Client]:
    def make(user: User | None) -> Client:
        client = Client()
        if user is not None:
            client.force_login(user)
        return client

    return make


@pytest.fixture
def profile(db: Any) -> Profile:
    """A valid three-route profile with one rule and two tools."""
    p = Profile.objects.create(slug="shop", name="Shop", description="A small shop")
    Route.objects.create(
        profile=p,
        name="billing",
        order=0,
        description="invoices, charges and payment methods",
        examples=["why was I charged twice", "download my invoice", "update my card"],
        keywords=["invoice"],
    )
    Route.objects.create(
        profile=p,
        name="shipping",
        order=1,
        description="delivery times and costs",
        examples=["where is my parcel", "how long does delivery take", "shipping cost to Spain"],
    )
    Route.objects.create(
        profile=p,
        name="human",
        order=2,
        description="the customer asks for a person",
        examples=["let me talk to someone"],
        action_kind="stuck",
        stuck_message="A colleague will take over.",
    )
    Rule.objects.create(profile=p, route_name="human", keywords=["real person"], order=0)
    Tool.objects.create(profile=p, name="hydrate_context", always_include=True, order=0)
    Tool.objects.create(profile=p, name="refund_order", trigger_keywords=["refund"], order=1)
    return p


TRAVEL_ROUTES = Path(__file__).resolve().parents[1] / "packs" / "travel_routes.json"


@pytest.fixture
def travel(db: Any) -> Profile:
    """The engine's conversation fixture (tests/packs/travel_routes.json: baggage, book_flight,
    seats_upgrades, hotel, refund) as a profile, to hold conversations in the studio."""
    p = Profile.objects.create(slug="travel", name="Travel desk", description="An airline's desk")
    for order, route in enumerate(json.loads(TRAVEL_ROUTES.read_text(encoding="utf-8"))):
        Route.objects.create(profile=p, order=order, **route)
    return p


@pytest.fixture
def route(profile: Profile) -> Route:
    return profile.routes.get(name="billing")


def policy_form(**changes: str) -> dict[str, str]:
    """What the policy page posts, with the defaults of a new profile, and `changes`."""
    data = {
        "scorer_kind": "lexical",
        "floor": "",
        "out_of_scope": "",
        "near_tie_margin": "0.15",
        "menu_size": "3",
        "strictness": "assist",
        "triage_mode": "enforce",
        "ambiguity_confidence_floor": "0.55",
        "min_action_signals": "2",
        "revision": "1",
    }
    return {**data, **changes}


def found_search(
    case: TestCase, kind: str, route: str, text: str, source: str | None = None
) -> RepairJob:
    """A finished "find a fix" search of the draft and suite as they are, as if it had found
    this edit (for an edit the search would not try first: what is tested is what follows)."""
    from studio.suites.repairs import _suite, suite_fingerprint

    return RepairJob.objects.create(
        profile=case.profile,
        test_case=case,
        status="done",
        draft_revision=case.profile.draft_revision,
        suite_fingerprint=suite_fingerprint(_suite(case)[0]),
        fix={"kind": kind, "route": route, "text": text, "source": source},
    )


def htmx(**extra: Any) -> dict[str, Any]:
    """Headers of a request made by htmx."""
    return {"HTTP_HX_REQUEST": "true", **extra}


def add_conversation(profile: Profile, turns: list[tuple[int, str, str, str]]) -> None:
    """Test cases of one conversation ("c1") from (turn, message, route, verdict), turns 1..n.

    Stored in the reverse of turn order, so a suite that ran them by `order` gets them wrong.
    """
    for turn, message, expected, verdict in turns:
        TestCase.objects.create(
            profile=profile,
            message=message,
            expected_route=expected,
            expected_verdict=verdict,
            conversation="c1",
            turn=turn,
            order=len(turns) - turn,
        )


@pytest.fixture(autouse=True)
def immediate_jobs(request: pytest.FixtureRequest) -> None:
    """A studio test's jobs run inline unless it starts a real worker (tests/job_worker.py)."""
    if request.node.path.is_relative_to(STUDIO) and "job_worker" not in request.fixturenames:
        request.getfixturevalue("settings").TASKS = IMMEDIATE


KEY_ENV = "STUDIO_TEST_LLM_KEY"


@pytest.fixture
def llm(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., ChatServer]]:
    """Point the studio at a scripted loopback endpoint (tests/routing_core/chat_server.py, a
    real HTTP server); yields a function that starts one with the given replies."""
    monkeypatch.setenv(KEY_ENV, "sk-test-123")
    servers: list[ChatServer] = []

    def start(*replies: Any) -> ChatServer:
        server = ChatServer(answers(*replies)).__enter__()
        servers.append(server)
        settings.STUDIO_LLM_BASE_URL = server.base_url
        settings.STUDIO_LLM_MODEL = "writer-1"
        settings.STUDIO_LLM_API_KEY_ENV = KEY_ENV
        settings.STUDIO_LLM_TIMEOUT_S = 2
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


@pytest.fixture
def production_pull(profile: Profile, owner: User) -> Callable[..., Any]:
    """Production serves v1; `production_pull(**headers)` pulls it with a fresh read token."""
    from studio.agents.fleet import forget_writes
    from studio.agents.pulls import forget_touches
    from studio.publishing.versions import promote, publish
    from studio.shared.tokens import create_read_token

    forget_touches()
    forget_writes()
    promote(publish(profile, user=owner), "production", user=owner)
    _, secret = create_read_token(profile, "agent", user=owner)
    client = Client()

    def get(**headers: str) -> Any:
        extra = {f"HTTP_{k.upper()}": v for k, v in headers.items()}
        return client.get(
            "/api/profiles/shop/packs/production", HTTP_AUTHORIZATION=f"Bearer {secret}", **extra
        )

    return get
