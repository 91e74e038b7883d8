"""The policy form reports every bad value at once, the form's own checks and the pack's alike."""

from __future__ import annotations

import re

from django.urls import reverse

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
