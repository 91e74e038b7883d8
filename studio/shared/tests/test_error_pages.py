"""Error pages people meet: the studio's own 404 under `make run` too, 403s logged in one line."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(params=[True, False], ids=["make run (DEBUG on)", "production"])
def debug(request, settings):
    settings.DEBUG = request.param
    return request.param


@pytest.mark.parametrize("path", ["/no/such/page/", "/profiles/no-such-profile/"])
def test_a_missing_page_is_the_studios_own_page(path, debug, viewer, client_for):
    response = client_for(viewer).get(path)
    html = response.content.decode()

    assert response.status_code == 404
    assert "<h1>Not found</h1>" in html and 'href="/profiles/"' in html
    assert "DEBUG = True" not in html and "URLconf" not in html


def test_a_missing_slash_is_still_redirected(debug, viewer, client_for):
    response = client_for(viewer).get("/profiles")

    assert response.status_code == 301 and response["Location"] == "/profiles/"


def test_a_refusal_is_logged_without_a_traceback(profile, outsider, client_for, caplog):
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = client_for(outsider).get(f"/profiles/{profile.slug}/")

    assert response.status_code == 403
    refusals = [r for r in caplog.records if r.name == "django.request"]
    assert refusals and all(r.exc_info is None for r in refusals)


def test_a_server_error_page_needs_no_request_context():
    from django.template.loader import render_to_string

    html = render_to_string("500.html")

    assert "Something went wrong" in html
