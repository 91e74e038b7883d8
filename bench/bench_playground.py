"""How fast the playground answers on a CLINC150-sized profile (150 routes, 15,000 examples).

Usage: .venv/bin/python bench/bench_playground.py [--messages 300]

Imports `../shared/datasets/clinc150/routes.json` into a profile of a throwaway SQLite database
(through the ORM), then times, with Django's test client (server time, no network):
the first request (cold: builds the pack and compiles the router), then the verdict fragment
as htmx requests it while a person types, the JSON endpoint, and the full page (no JavaScript),
each over messages from `val.jsonl`. Prints p50 / p95 / max in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT.parent / "shared" / "datasets" / "clinc150"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
        _setup_django()
        client, slug = _fixture()
        messages = _messages(args.messages)
        _report(client, slug, messages)


def _setup_django() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")
    import django

    django.setup()
    logging.disable(logging.INFO)  # one JSON log line per request would swamp the figures
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _fixture() -> tuple[Any, str]:
    from django.contrib.auth.models import User
    from django.test import Client

    from studio.models import Profile, Route
    from studio.shared.roles import grant

    routes = json.loads((DATASET / "routes.json").read_text())
    profile = Profile.objects.create(slug="clinc150", name="CLINC150")
    Route.objects.bulk_create(
        Route(
            profile=profile,
            order=i,
            name=r["name"],
            description=r.get("description", ""),
            examples=r.get("examples", []),
            keywords=r.get("keywords", []),
        )
        for i, r in enumerate(routes)
    )
    examples = sum(len(r.get("examples", [])) for r in routes)
    print(f"profile: {len(routes)} routes, {examples} examples")
    user = User.objects.create_user("bench", password="bench")
    grant(user, "viewer")
    client = Client()
    client.force_login(user)
    return client, profile.slug


def _messages(limit: int) -> list[str]:
    lines = (DATASET / "val.jsonl").read_text().splitlines()
    return [json.loads(line)["text"] for line in lines[:limit] if line.strip()]


def _report(client: Any, slug: str, messages: list[str]) -> None:
    from studio.shared import drafts

    page = f"/profiles/{slug}/playground/"
    api = f"/api/profiles/{slug}/route"

    def fragment(message: str) -> Any:
        return client.post(page, {"message": message}, HTTP_HX_REQUEST="true")

    def endpoint(message: str) -> Any:
        return client.post(api, {"message": message}, content_type="application/json")

    def full_page(message: str) -> Any:
        return client.post(page, {"message": message})

    drafts.clear_cache()
    cold = _time(fragment, messages[0])
    print(f"cold first request (build pack + compile router + route): {cold:.1f} ms")
    print(f"{'request':<34}{'n':>6}{'p50':>9}{'p95':>9}{'max':>9}  (ms, server time)")
    for name, call in [
        ("verdict fragment (htmx, typing)", fragment),
        ("JSON endpoint", endpoint),
        ("full page (no JavaScript)", full_page),
    ]:
        times = [_time(call, m) for m in messages]
        cuts = statistics.quantiles(times, n=100, method="inclusive")
        print(f"{name:<34}{len(times):>6}{cuts[49]:>9.1f}{cuts[94]:>9.1f}{max(times):>9.1f}")


def _time(call: Callable[[str], Any], message: str) -> float:
    started = time.perf_counter()
    response = call(message)
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise SystemExit(f"{response.status_code} for {message!r}: {response.content[:300]!r}")
    return elapsed


if __name__ == "__main__":
    main()
