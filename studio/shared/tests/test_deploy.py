"""The production settings path: `check --deploy` is clean, secrets are required, static is hashed.

Settings are read once per process, so each production case runs in a subprocess with the
environment a deployment would have.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parents[3]


def production_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "SECURE_"))}
    env.update(
        DEBUG="False",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="studio.example.com",
        DJANGO_SETTINGS_MODULE="studio.settings",
    )
    # The repo's SQLite file must not appear because a probe asked for a connection.
    env.setdefault("DATABASE_URL", "sqlite://:memory:")
    env.update(extra)
    return env


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_prints_no_warnings_under_the_production_settings() -> None:
    result = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], production_env())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout
    assert "WARNINGS" not in result.stdout + result.stderr


def test_the_studio_refuses_to_start_without_a_secret_key_when_debug_is_off() -> None:
    result = run(["manage.py", "check"], production_env(SECRET_KEY=""))
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr


def test_static_files_are_served_hashed_by_whitenoise_after_collectstatic(tmp_path: Path) -> None:
    env = production_env(STATIC_ROOT=str(tmp_path / "static"))
    collected = run(["manage.py", "collectstatic", "--no-input", "-v", "0"], env)
    assert collected.returncode == 0, collected.stderr
    probe = textwrap.dedent(
        """
        import re, django
        django.setup()
        from django.test import Client
        client = Client(HTTP_HOST="studio.example.com")
        page = client.get("/accounts/login/", secure=True)
        css = re.search(r'href="(/static/studio/app\\.[0-9a-f]{12}\\.css)"', page.text).group(1)
        asset = client.get(css, secure=True)
        print(page.status_code, asset.status_code, asset.headers["Cache-Control"])
        """
    )
    result = run(["-c", probe], env)
    assert result.returncode == 0, result.stderr
    page_status, asset_status, cache_control = result.stdout.split()[:3]
    assert (page_status, asset_status) == ("200", "200")
    assert "immutable" in cache_control or "max-age=315360000" in cache_control


def test_plain_http_is_redirected_to_https_in_production_except_the_health_check() -> None:
    probe = textwrap.dedent(
        """
        import django
        django.setup()
        from django.test import Client
        client = Client(HTTP_HOST="studio.example.com")
        print(client.get("/accounts/login/").status_code, client.get("/healthz").status_code)
        """
    )
    result = run(["-c", probe], production_env(STATIC_ROOT="/nonexistent"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-2:] == ["301", "200"]


def test_every_page_carries_a_policy_that_allows_only_self_hosted_scripts(
    client: Client, db: None
) -> None:
    policy = client.get("/accounts/login/").headers["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"
    assert "unsafe" not in policy


@pytest.mark.parametrize(
    ("env", "header"),
    [({}, None), ({"BEHIND_PROXY": "True"}, "('HTTP_X_FORWARDED_PROTO', 'https')")],
)
def test_the_proxy_ssl_header_is_trusted_only_when_configured(
    env: dict[str, str], header: str | None
) -> None:
    probe = "import django; django.setup(); from django.conf import settings; "
    probe += "print(settings.SECURE_PROXY_SSL_HEADER)"
    result = run(["-c", probe], production_env(**env))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(header)
