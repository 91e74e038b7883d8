"""Post/redirect/get: every form that changes something answers with a redirect.

A page rendered straight from a POST is re-posted by a reload (the token page created a second
token that way). So each state-changing form below, posted as a browser does without htmx,
must answer 302; with htmx it answers a fragment (never a whole page) instead.
`test_every_post_view_is_in_the_table` keeps the table complete as views are added.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from studio.models import Environment, Profile, TestCase
from studio.publishing.versions import publish
from studio.shared.edits import delete_item
from tests.studio.fixtures import htmx, policy_form

Data = Callable[[Profile], dict[str, Any]]


def _route(profile: Profile) -> int:
    return profile.routes.get(name="shipping").pk


def _case(profile: Profile) -> int:
    return TestCase.objects.create(profile=profile, message="hi", expected_route="billing").pk


def _repair_job(profile: Profile) -> dict[str, Any]:
    """A search for a fix of the case `_case` just made (it runs inline: no fix, it passes)."""
    from studio.suites.repairs import request_repair

    case = TestCase.objects.filter(profile=profile).order_by("-pk").first()
    assert case is not None
    return {"job": request_repair(case, user=None).pk}


def _deleted_route_entry(profile: Profile) -> int:
    from django.contrib.auth.models import User

    delete_item(profile.tools.get(name="refund_order"), user=User.objects.get(username="owner"))
    return profile.audit_entries.get(action="tool.delete").pk


def _production(profile: Profile) -> dict[str, Any]:
    from django.contrib.auth.models import User

    owner = User.objects.get(username="owner")
    version = publish(profile, user=owner)
    env = Environment.objects.filter(profile=profile, name="production").first()
    return {
        "version": version.number,
        "environment": "production",
        "revision": env.revision if env else "",
        "confirm": "yes",
    }


LEXICONS = {
    "action_verbs": "refund",
    "knowledge_verbs": "",
    "question_pattern": "",
    "revision": "1",
}
TURN = json.dumps(["where is my parcel", "shipping", "move", "scorer", None])

# (url name, the pk the url takes or None, the posted data); every one changes something.
FORMS: list[tuple[str, Callable[[Profile], int] | None, Data]] = [
    ("profile-settings", None, lambda p: {"name": "Shop 2", "default_route": "", "revision": 1}),
    ("routes-add", None, lambda p: {"name": "faq", "examples": "what"}),
    (
        "routes-edit",
        _route,
        lambda p: {
            "name": "shipping",
            "description": "d",
            "examples": "x",
            "action_kind": "answer",
            "revision": 1,
        },
    ),
    ("routes-move", _route, lambda p: {"direction": "up"}),
    ("routes-delete", _route, lambda p: {}),
    ("rules-delete", lambda p: p.rules.get().pk, lambda p: {}),
    ("tools-delete", lambda p: p.tools.get(name="refund_order").pk, lambda p: {}),
    (
        "rules-add",
        None,
        lambda p: {"route_name": "billing", "match_kind": "keywords", "keywords": "copy"},
    ),
    ("tools-add", None, lambda p: {"name": "lookup", "trigger_keywords": "invoice"}),
    ("policy", None, lambda p: policy_form(near_tie_margin="0.2")),
    ("lexicons", None, lambda p: LEXICONS),
    ("playground", None, lambda p: {"message": "where is my parcel", "action": "send"}),
    ("playground", None, lambda p: {"turn": [TURN], "action": "reset"}),
    (
        "playground",
        None,
        lambda p: {"message": "parcel", "action": "save", "expected_route": "shipping"},
    ),
    ("playground", None, lambda p: {"turn": [TURN], "action": "save_conversation"}),
    (
        "playground",
        None,
        lambda p: {
            "message": "x",
            "floor": "0.3",
            "action": "apply",
            "profile_revision": p.revision,
        },
    ),
    ("tests-add", None, lambda p: {"message": "hi", "expected_route": "billing", "turn": 0}),
    (
        "tests-edit",
        _case,
        lambda p: {"message": "hello", "expected_route": "", "turn": 0, "revision": 1},
    ),
    ("tests-delete", _case, lambda p: {}),
    ("tests-fix", _case, _repair_job),
    ("tests-fix-search", _case, lambda p: {}),
    ("tests-fix-cancel", _case, _repair_job),
    ("tests-fix-again", _case, lambda p: {}),
    ("tests-import", None, lambda p: {"text": "text,expected\nhi,billing\n", "confirm": "yes"}),
    ("test-run-start", None, lambda p: {}),
    ("overlap-start", None, lambda p: {}),
    ("tuning-apply", None, lambda p: {"floor": "", "margin": "0.2", "revision": p.revision}),
    (
        "publish",
        None,
        lambda p: {"note": "n", "draft_revision": p.draft_revision, "reason": "trying it"},
    ),
    ("promote", None, _production),
    ("tokens", None, lambda p: {"action": "create-read", "name": "agent"}),
    ("tokens", None, lambda p: {"action": "create-api", "name": "ci"}),
    ("audit-restore", _deleted_route_entry, lambda p: {}),
    ("traffic", None, lambda p: {"keep_message_text": "on", "retention_days": "14"}),
    ("replay-start", None, lambda p: {"target": "draft"}),
    ("out-of-scope-starter", None, lambda p: {}),
    ("traffic-scrub", None, lambda p: {}),
]
# Views that accept POST but change nothing (routing a message), or that change something only
# with a file upload tested in test_publishing_pages (import answers a redirect there).
# Also: asking for suggestions (nothing is saved until a person accepts them, which redirects),
# the rule builder's live check, and Django's set-password view (a wrong link renders).
READS = {
    "import",
    "import-draft",
    "profile-list",
    "route-suggest",
    "rules-preview",
    "password-set",
    # Drafting conversations needs a language model (test_conversation_drafts); without one,
    # and for a review that fails, the page renders.
    "route-conversations",
}
# The very views posted above as routes-edit and routes-move (studio/authoring/item_views.py).
SAME_VIEWS = {"rules-edit", "rules-move", "tools-edit", "tools-move"}


def _url(name: str, profile: Profile, pk: Callable[[Profile], int] | None) -> str:
    return reverse(name, args=[profile.slug, *([pk(profile)] if pk else [])])


@pytest.mark.parametrize(
    ("name", "pk", "data"), FORMS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(FORMS)]
)
def test_a_state_changing_form_answers_with_a_redirect(name, pk, data, profile, owner, client_for):
    response = client_for(owner).post(_url(name, profile, pk), data(profile))

    assert response.status_code == 302, response.content.decode()[:2000]


HTMX_FORMS = [
    f
    for f in FORMS
    if f[0]
    in {
        "routes-add",
        "routes-edit",
        "profile-settings",
        "policy",
        "lexicons",
        "playground",
        "tests-edit",
    }
]


@pytest.mark.parametrize(
    ("name", "pk", "data"), HTMX_FORMS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(HTMX_FORMS)]
)
def test_with_htmx_it_answers_a_fragment(name, pk, data, profile, owner, client_for):
    response = client_for(owner).post(_url(name, profile, pk), data(profile), **htmx())

    assert response.status_code == 200, response.content.decode()[:2000]
    assert b"<html" not in response.content


def test_creating_a_profile_answers_with_a_redirect(owner, client_for):
    response = client_for(owner).post(reverse("profile-list"), {"slug": "new", "name": "New"})

    assert response.status_code == 302


def _names(patterns: list[Any]) -> set[str]:
    names: set[str] = set()
    for p in patterns:
        if isinstance(p, URLResolver):
            names |= _names(p.url_patterns)
        elif isinstance(p, URLPattern) and p.name and p.callback.__module__.startswith("studio."):
            names.add(p.name)
    return names


def test_every_post_view_is_in_the_table(profile, owner, client_for):
    """A view that accepts POST (no 405 to an empty POST) must be listed above."""
    client = client_for(owner)
    listed = {name for name, _, _ in FORMS} | READS | SAME_VIEWS
    accepting = set()
    for name in sorted(_names(get_resolver().url_patterns) - listed):
        try:
            path = reverse(name, args=[profile.slug])
        except Exception:
            try:
                path = reverse(name, args=[profile.slug, 1])
            except Exception:
                continue  # not a profile page (login, health, API: not studio forms)
        if client.post(path).status_code not in (405, 404):
            accepting.add(name)
    assert accepting == set()
