"""Browser tests: Playwright driving Debian's Chromium against a live studio server.

The browser must start: a missing or broken Chromium fails the run (it never skips), because
a skipped browser test in CI would hide a broken studio.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.job_worker import IMMEDIATE, job_worker  # noqa: F401  (a fixture)

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]

# Playwright's sync API runs an event loop in this thread; Django's ORM refuses to run
# inside one unless told that this (single-threaded test) use is safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

pytestmark = pytest.mark.e2e


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's 'chromium' package")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.stash.setdefault(_FAILED, False)
        if report.failed:
            item.stash[_FAILED] = True


_FAILED = pytest.StashKey[bool]()


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh browser context per test; a failing test leaves a screenshot in test-artifacts/."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    if request.node.stash.get(_FAILED, False):
        ARTIFACTS.mkdir(exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.nodeid)[-150:]
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    context.close()


@pytest.fixture
def demo(db: None) -> None:
    """The demo profile and the `demo` login with every role, as `make run` loads them."""
    from django.core.management import call_command

    call_command("load_demo", "--force", verbosity=0)


def sign_in(page: Page, base_url: str, username: str = "demo", password: str = "demo") -> None:
    """Sign in through the login form, as a person does."""
    page.goto(f"{base_url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name=re.compile("sign in|log in", re.IGNORECASE)).click()
    page.wait_for_url(re.compile(r".*/profiles/.*"))


@pytest.fixture(autouse=True)
def immediate_jobs(request: pytest.FixtureRequest) -> None:
    """Jobs run inline unless the test starts a real worker (tests/job_worker.py)."""
    if "job_worker" not in request.fixturenames:
        request.getfixturevalue("settings").TASKS = IMMEDIATE
