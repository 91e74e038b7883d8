"""What holds for every test run: in CI, a skipped test fails the run.

A skip in CI means a part of the product went untested (no PostgreSQL, no browser, no git
checkout) while the run reads green. Tests that cannot run on one database are deselected
instead (`postgres_only`, tests/studio/fixtures.py), which is not a skip.

The studio's fixtures (its cast of users, a small profile) are a plugin, so that the tests
kept beside each area of the studio (studio/<area>/tests/) share them.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

# The embedding tier's venv (make test-embeddings) runs routing_core's tests without Django.
HAS_DJANGO = importlib.util.find_spec("pytest_django") is not None
pytest_plugins = ["tests.studio.fixtures"] if HAS_DJANGO else []


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not os.environ.get("CI") or exitstatus != 0:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped:
        reporter.write_line(f"CI: {len(skipped)} skipped test(s): a skip in CI is a failure")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
