"""The rule builder: keywords, a pattern or "all of" several conditions, built
from rows instead of JSON, and a live check of which examples the rule catches, run by
routing_core's own rule code."""

from __future__ import annotations

import re

from django.urls import reverse

from routing_core import Router
from studio.models import Rule
from studio.shared.packs import build_pack
from tests.studio.fixtures import htmx


def _preview(client, profile, **fields: str) -> str:
    data = {"route_name": "billing", "keywords": "", "regex": "", "examples": "", **fields}
    response = client.post(reverse("rules-preview", args=[profile.slug]), data, **htmx())
    assert response.status_code == 200
    return response.content.decode()


def _checks(html: str) -> dict[str, str]:
    found = re.findall(
        r'data-match="(yes|no)"><span class="mark" aria-hidden="true">.</span> ([^<]+?)\s?<', html
    )
    return {text: match for match, text in found}


def test_the_check_ticks_the_examples_a_keyword_rule_catches(profile, editor, client_for):
    html = _preview(
        client_for(editor), profile, match_kind="keywords", keywords="invoice, receipt",
        examples="send my invoice\nwhere is my parcel\nA RECEIPT please",
    )  # fmt: skip

    assert _checks(html) == {
        "send my invoice": "yes",
        "where is my parcel": "no",
        "A RECEIPT please": "yes",
    }
    assert "matched “invoice”" in html


def test_all_of_needs_every_condition_and_agrees_with_the_router(profile, editor, client_for):
    examples = ["a copy of my invoice", "my invoice", "a copy please"]
    html = _preview(
        client_for(editor), profile, match_kind="all",
        cond_kind_0="keywords", cond_value_0="invoice", cond_kind_1="regex", cond_value_1=r"\bcopy\b",
        examples="\n".join(examples), try_message="copy of the invoice",
    )  # fmt: skip

    assert _checks(html) == {
        "a copy of my invoice": "yes",
        "my invoice": "no",
        "a copy please": "no",
    }
    assert '<strong class="hit">caught</strong>' in html
    # the same rule saved and run by the router decides the same way
    Rule.objects.create(
        profile=profile, route_name="billing", match_kind="all", order=9,
        all_of=[{"keywords": ["invoice"]}, {"regex": r"\bcopy\b"}],
    )  # fmt: skip
    router = Router(build_pack(profile))
    assert [router.route(e).by == "rule" for e in examples] == [True, False, False]


def test_a_broken_pattern_says_why_in_words(profile, editor, client_for):
    html = _preview(
        client_for(editor), profile, match_kind="all", cond_kind_0="regex", cond_value_0="(oops",
        examples="oops",
    )  # fmt: skip

    assert "Match → condition 1 → pattern: invalid regex" in html
    assert _checks(html) == {"oops": "no"}


def test_an_all_rule_is_saved_from_rows_and_edited_back_into_rows(profile, editor, client_for):
    client = client_for(editor)
    data = {
        "route_name": "billing", "match_kind": "all", "keywords": "", "regex": "",
        "cond_kind_0": "keywords", "cond_value_0": "invoice, receipt",
        "cond_kind_1": "regex", "cond_value_1": "copy", "cond_kind_2": "", "cond_value_2": "",
        "examples": "a copy of my invoice",
    }  # fmt: skip

    assert client.post(reverse("rules-add", args=[profile.slug]), data).status_code == 302
    rule = profile.rules.get(match_kind="all")
    assert rule.all_of == [{"keywords": ["invoice", "receipt"]}, {"regex": "copy"}]
    html = client.get(
        reverse("rules-edit", args=[profile.slug, rule.pk]), **htmx()
    ).content.decode()
    assert 'name="cond_value_0" value="invoice, receipt"' in html
    assert '<option value="regex" selected>' in html and 'name="cond_value_1" value="copy"' in html
    assert "JSON" not in html


def test_an_empty_all_of_is_refused_next_to_the_match(profile, editor, client_for):
    data = {
        "route_name": "billing",
        "match_kind": "all",
        "keywords": "",
        "regex": "",
        "examples": "",
    }

    response = client_for(editor).post(reverse("rules-add", args=[profile.slug]), data, **htmx())

    assert response.status_code == 422
    assert "Add at least one condition" in response.content.decode()


def test_text_without_a_kind_is_refused_rather_than_dropped(profile, editor, client_for):
    data = {
        "route_name": "billing", "match_kind": "all", "keywords": "", "regex": "", "examples": "",
        "cond_kind_0": "", "cond_value_0": "invoice",
    }  # fmt: skip

    response = client_for(editor).post(reverse("rules-add", args=[profile.slug]), data, **htmx())

    assert response.status_code == 422 and "Pick keywords or a pattern" in response.content.decode()


def test_a_viewer_cannot_use_the_check(profile, viewer, client_for):
    response = client_for(viewer).post(reverse("rules-preview", args=[profile.slug]), {}, **htmx())

    assert response.status_code == 403
