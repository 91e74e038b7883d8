"""The policy form reports every bad value at once, the form's own checks and the pack's alike."""

from __future__ import annotations

import re

from django.urls import reverse

from routing_core.scorers.embedding import encoder_installed
from studio.authoring.forms import ENCODERS
from studio.shared.packs import build_pack_dict
from tests.studio.fixtures import policy_form


def _errors(html: str) -> list[str]:
    return re.findall(r'<ul class="errorlist"[^>]*>\s*<li>(.*?)</li>', html)


def test_two_bad_values_show_two_errors(profile, editor, client_for):
    response = client_for(editor).post(
        reverse("policy", args=[profile.slug]),
        policy_form(menu_size="lots", near_tie_margin="1.5"),
    )
    html = response.content.decode()

    assert response.status_code == 422
    assert len(_errors(html)) == 2, _errors(html)
    assert 'value="lots"' in html and 'value="1.5"' in html
    profile.refresh_from_db()
    assert (profile.menu_size, profile.near_tie_margin) == (3, 0.15)


def _selected(html: str, name: str) -> list[str]:
    """The values of the options shown selected in the select called `name`."""
    select = re.search(rf'<select name="{name}".*?</select>', html, re.S)
    assert select, f"no select {name}"
    return re.findall(r'<option value="([^"]*)"[^>]*selected', select.group(0))


def test_a_hybrid_scorer_reads_messages_with_the_encoder_chosen(profile, editor, client_for):
    client = client_for(editor)
    response = client.post(
        reverse("policy", args=[profile.slug]),
        policy_form(scorer_kind="hybrid", encoder="multilingual-e5-small"),
    )

    assert response.status_code == 302
    profile.refresh_from_db()
    assert build_pack_dict(profile)["scorer"] == {
        "kind": "hybrid",
        "fit_weight": True,
        "head": True,
        "model": "multilingual-e5-small",
    }
    html = client.get(reverse("policy", args=[profile.slug])).content.decode()
    assert _selected(html, "encoder") == ["multilingual-e5-small"]
    # The form sets what it stores: no "imported settings" box for them.
    assert 'data-testid="scorer-settings"' not in html


def test_a_refused_policy_keeps_the_encoder_chosen(profile, editor, client_for):
    response = client_for(editor).post(
        reverse("policy", args=[profile.slug]),
        policy_form(
            scorer_kind="embedding",
            encoder="universal-sentence-encoder-multilingual-3",
            menu_size="lots",
        ),
    )
    html = response.content.decode()

    assert response.status_code == 422
    assert _selected(html, "encoder") == ["universal-sentence-encoder-multilingual-3"]
    assert _selected(html, "scorer_kind") == ["embedding"]
    profile.refresh_from_db()
    assert (profile.scorer_kind, profile.scorer_settings) == ("lexical", None)


def test_the_encoder_of_a_lexical_scorer_changes_nothing(profile, editor, client_for):
    client_for(editor).post(
        reverse("policy", args=[profile.slug]),
        policy_form(encoder="multilingual-e5-small"),
    )

    profile.refresh_from_db()
    assert profile.scorer_settings is None
    assert build_pack_dict(profile)["scorer"] == {"kind": "lexical"}


def test_an_encoder_not_installed_is_said_so(profile, editor, client_for):
    html = client_for(editor).get(reverse("policy", args=[profile.slug])).content.decode()

    for name, label in ENCODERS.items():
        shown = re.search(rf'<option value="{name}"[^>]*>([^<]*)</option>', html)
        assert shown, name
        missing = shown.group(1).endswith(" (not installed here)")
        assert missing == (not encoder_installed(name)), shown.group(1)
        assert shown.group(1).startswith(label)


def test_a_cascade_picked_on_the_page_is_a_valid_pack_that_asks_the_hybrid_second(
    profile, editor, client_for
):
    """Picked without imported settings, a cascade was refused ("tiers: field required");
    it is now the lexical scorer, then the hybrid on the encoder chosen."""
    client = client_for(editor)
    url = reverse("policy", args=[profile.slug])
    response = client.post(url, policy_form(scorer_kind="cascade"))

    assert response.status_code == 302
    profile.refresh_from_db()
    assert profile.scorer_settings is None  # a new cascade's settings, not stored ones
    # It also reads every message written in a language none of the examples are in.
    hybrid = {"kind": "hybrid", "fit_weight": True, "head": True, "take_foreign": True}
    assert build_pack_dict(profile)["scorer"] == {
        "kind": "cascade",
        "tiers": [{"kind": "lexical"}, hybrid],
    }

    client.post(
        url,
        policy_form(scorer_kind="cascade", encoder="multilingual-e5-small", revision="2"),
    )
    profile.refresh_from_db()
    assert build_pack_dict(profile)["scorer"]["tiers"] == [
        {"kind": "lexical"},
        {**hybrid, "model": "multilingual-e5-small"},
    ]
    html = client.get(url).content.decode()
    assert _selected(html, "encoder") == ["multilingual-e5-small"]
    assert 'data-testid="scorer-settings"' not in html


def test_the_margin_is_named_and_explained_as_the_playground_does(profile, viewer, client_for):
    """One name on every page ("Near-tie margin"), and its help in the scores' units."""
    html = client_for(viewer).get(reverse("policy", args=[profile.slug])).content.decode()

    assert re.search(r"<label[^>]*>Near-tie margin</label>", html)
    assert "a lead of about twice this in score (0.15 asks for 0.30)" in html
