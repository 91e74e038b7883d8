"""Two studio processes behind one PostgreSQL: locks, constraints and revisions hold across them.

Each process is a real gunicorn server on loopback against the test database, so nothing is
shared between them but PostgreSQL, as in a deployment with several workers or machines.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import secrets
import socket
import string
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from studio.models import Profile, Route
from studio.shared.roles import grant
from tests.job_worker import Workers, wait_for

ROOT = Path(__file__).resolve().parents[3]

# Deselected on SQLite by tests/studio/fixtures.py: they run in the PostgreSQL pass.
pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]


@dataclass
class Reply:
    status: int
    text: str


@dataclass(frozen=True)
class Studio:
    """One studio process, spoken to over HTTP as one signed-in person."""

    port: int
    session: str = ""

    def as_user(self, user: User) -> Studio:
        client = Client()
        client.force_login(user)  # the session lives in the shared database
        return Studio(self.port, client.cookies[settings.SESSION_COOKIE_NAME].value)

    def request(
        self, method: str, path: str, form: dict[str, str] | None = None, *, body: str = ""
    ) -> Reply:
        csrf = "".join(secrets.choice(string.ascii_letters) for _ in range(32))
        headers = {
            "Cookie": f"{settings.SESSION_COOKIE_NAME}={self.session}; csrftoken={csrf}",
            "X-CSRFToken": csrf,
            "Content-Type": "application/json" if body else "application/x-www-form-urlencoded",
        }
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request(method, path, body or urlencode(form or {}), headers)
            response = conn.getresponse()
            return Reply(response.status, response.read().decode())
        finally:
            conn.close()

    def route(self, slug: str, message: str) -> dict[str, Any]:
        """What the playground says about a message, through the studio's API.

        A 409 says the draft's first model is still training on the worker: ask again.
        """
        body = json.dumps({"message": message})
        path = f"/api/profiles/{slug}/route"
        reply = wait_for(
            lambda: (r := self.request("POST", path, body=body)).status != 409 and r,
            what="the model to be trained",
            every=0.5,
        )
        assert isinstance(reply, Reply) and reply.status == 200, reply
        decision: dict[str, Any] = json.loads(reply.text)["decision"]
        return decision


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _database_url() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def _start(port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "SECRET_KEY": settings.SECRET_KEY,  # the sessions made here must verify there
        "DEBUG": "True",
        "LOG_LEVEL": "WARNING",
    }
    command = [sys.executable, "-m", "gunicorn", "studio.shared.wsgi", "--workers", "1"]
    command += ["--bind", f"127.0.0.1:{port}", "--timeout", "120"]
    return subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)


def _wait_until_healthy(process: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the studio on port {port} exited"
        try:
            if Studio(port).request("GET", "/healthz").status == 200:
                return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"the studio on port {port} did not become healthy within 60 s")


@pytest.fixture(scope="module")
def studios(django_db_setup: None) -> Iterator[tuple[Studio, Studio]]:
    ports = [_free_port(), _free_port()]
    processes = [_start(port) for port in ports]
    workers = Workers()  # trains the models the playgrounds score with, as in a deployment
    workers.start()
    try:
        for process, port in zip(processes, ports, strict=True):
            _wait_until_healthy(process, port)
        yield Studio(ports[0]), Studio(ports[1])
    finally:
        workers.stop_all()
        workers.remove_logs()
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


@pytest.fixture
def ada_and_bob(studios: tuple[Studio, Studio], profile: Profile) -> tuple[Studio, Studio]:
    """Two editors, each on their own studio process."""
    users = [User.objects.create_user(name, password="pw") for name in ("ada", "bob")]
    for user in users:
        grant(user, "editor")
    return studios[0].as_user(users[0]), studios[1].as_user(users[1])


def route_form(route: Route, revision: int, **changes: str) -> dict[str, str]:
    form = {
        "revision": str(revision),
        "name": route.name,
        "description": route.description,
        "examples": "\n".join(route.examples),
        "keywords": ", ".join(route.keywords),
        "never": "\n".join(route.never),
        "action_kind": route.action_kind,
        "delegate_agent": route.delegate_agent,
        "stuck_message": route.stuck_message,
    }
    return {**form, **changes}


def shown_revision(reply: Reply) -> int:
    match = re.search(r'name="revision" value="(\d+)"', reply.text)
    assert match, "the edit form has no revision field"
    return int(match.group(1))


def at_once(*calls: Callable[[], Reply]) -> list[Reply]:
    """Run the calls in threads released together, so the two processes really race."""
    barrier, replies = threading.Barrier(len(calls)), [Reply(0, "")] * len(calls)

    def run(i: int) -> None:
        barrier.wait()
        replies[i] = calls[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return replies


def test_a_stale_save_through_the_other_process_is_refused_with_who_changed_it(
    ada_and_bob: tuple[Studio, Studio], route: Route
) -> None:
    ada, bob = ada_and_bob
    edit = f"/profiles/shop/routes/{route.pk}/edit/"
    revision = shown_revision(ada.request("GET", edit))
    assert shown_revision(bob.request("GET", edit)) == revision

    saved = ada.request("POST", edit, route_form(route, revision, description="Ada's"))
    stale = bob.request("POST", edit, route_form(route, revision, description="Bob's"))

    assert saved.status == 302
    assert stale.status == 409
    assert re.search(r"changed by ada at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d", stale.text)
    assert "Bob&#x27;s" in stale.text  # his text is still in the form, beside Ada's
    route.refresh_from_db()
    assert (route.description, route.revision) == ("Ada's", revision + 1)


def test_two_processes_adding_the_same_route_name_at_once_leave_one_route(
    ada_and_bob: tuple[Studio, Studio], profile: Profile
) -> None:
    ada, bob = ada_and_bob
    for attempt in range(3):
        form = {"name": f"refunds{attempt}", "description": "money back", "examples": "refund"}
        replies = at_once(
            partial(ada.request, "POST", "/profiles/shop/routes/add/", form),
            partial(bob.request, "POST", "/profiles/shop/routes/add/", form),
        )
        assert sorted(r.status for r in replies) == [302, 422]
        assert profile.routes.filter(name=f"refunds{attempt}").count() == 1


def test_two_processes_creating_the_same_profile_at_once_leave_one_profile(
    ada_and_bob: tuple[Studio, Studio],
) -> None:
    ada, bob = ada_and_bob
    for attempt in range(3):
        form = {"slug": f"returns{attempt}", "name": "Returns", "description": ""}
        replies = at_once(
            partial(ada.request, "POST", "/profiles/", form),
            partial(bob.request, "POST", "/profiles/", form),
        )
        assert sorted(r.status for r in replies) == [302, 422]
        assert Profile.objects.filter(slug=f"returns{attempt}").count() == 1


def test_the_playground_in_one_process_sees_an_edit_made_through_the_other(
    ada_and_bob: tuple[Studio, Studio], profile: Profile
) -> None:
    ada, bob = ada_and_bob
    assert bob.route("shop", "where is my parcel")["route"] == "shipping"  # compiled and cached
    revision = Profile.objects.get(pk=profile.pk).draft_revision

    rule = {"route_name": "billing", "match_kind": "keywords", "keywords": "parcel"}
    assert ada.request("POST", "/profiles/shop/rules/add/", rule).status == 302

    assert Profile.objects.get(pk=profile.pk).draft_revision > revision
    decision = bob.route("shop", "where is my parcel")
    assert (decision["route"], decision["by"]) == ("billing", "rule")
