"""Roles: sign-in everywhere, a role to read, the editor role to change anything."""

from __future__ import annotations

import pytest
from django.urls import reverse

from studio.models import Profile, Route


def _urls(profile: Profile) -> tuple[list[str], list[str]]:
    route = profile.routes.all()[0]
    slug = profile.slug
    gets = (
        [reverse("profile-list")]
        + [
            reverse(n, args=[slug])
            for n in (
                "profile-detail",
                "rules",
                "tools",
                "policy",
                "lexicons",
                "audit",
                "pack-badge",
            )
        ]
        + [reverse(n, args=[slug, route.pk]) for n in ("routes-edit", "routes-delete")]
    )
    posts = [
        reverse("profile-list"),
        reverse("profile-settings", args=[slug]),
        reverse("routes-add", args=[slug]),
        reverse("policy", args=[slug]),
        reverse("lexicons", args=[slug]),
    ] + [reverse(n, args=[slug, route.pk]) for n in ("routes-edit", "routes-delete", "routes-move")]
    return gets, posts


def test_every_page_needs_a_sign_in(profile, client):
    gets, posts = _urls(profile)

    for url in gets + posts:
        response = client.get(url) if url in gets else client.post(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login")), url


def test_a_user_without_a_role_sees_nothing(profile, outsider, client_for):
    gets, _ = _urls(profile)
    client = client_for(outsider)

    assert {url: client.get(url).status_code for url in gets} == dict.fromkeys(gets, 403)


def test_a_viewer_reads_every_page(profile, viewer, client_for):
    gets, _ = _urls(profile)
    client = client_for(viewer)

    assert {url: client.get(url).status_code for url in gets} == dict.fromkeys(gets, 200)


def test_a_viewers_post_is_refused_everywhere_and_changes_nothing(profile, viewer, client_for):
    _, posts = _urls(profile)
    client = client_for(viewer)

    assert {
        url: client.post(url, {"name": "x", "direction": "up"}).status_code for url in posts
    } == dict.fromkeys(posts, 403)
    assert Route.objects.filter(profile=profile).count() == 3


@pytest.mark.parametrize("role", ["editor", "owner"])
def test_editors_and_owners_may_edit(role, profile, client_for, request):
    user = request.getfixturevalue(role)
    route = profile.routes.all()[0]

    response = client_for(user).post(
        reverse("routes-move", args=[profile.slug, route.pk]), {"direction": "down"}
    )

    assert response.status_code == 302


def test_a_viewer_sees_no_edit_controls(profile, viewer, client_for):
    response = client_for(viewer).get(reverse("profile-detail", args=[profile.slug]))

    assert b"Add a route" not in response.content
    assert b">Edit<" not in response.content


def test_an_unknown_profile_is_not_found(viewer, client_for):
    assert client_for(viewer).get(reverse("profile-detail", args=["nope"])).status_code == 404


# -- RoleBackend: Django's permission answers, read in one query ---------------------------------


def _fresh(user):
    """The user as a request loads it: no permission cache yet."""
    return type(user).objects.get(pk=user.pk)


def test_role_backend_answers_like_the_roles(editor, viewer, outsider):
    from studio.shared.roles import EDIT, PUBLISH, VIEW

    assert _fresh(editor).has_perm(EDIT) and _fresh(editor).has_perm(VIEW)
    assert not _fresh(editor).has_perm(PUBLISH)
    assert _fresh(viewer).has_perm(VIEW) and not _fresh(viewer).has_perm(EDIT)
    assert not _fresh(outsider).has_perm(VIEW)


def test_role_backend_counts_direct_permissions_and_superusers(outsider, django_user_model):
    from django.contrib.auth.models import Permission

    from studio.shared.roles import ADMINISTER, PUBLISH

    outsider.user_permissions.add(Permission.objects.get(codename="publish_profile"))
    assert _fresh(outsider).has_perm(PUBLISH)
    assert not _fresh(outsider).has_perm(ADMINISTER)
    boss = django_user_model.objects.create_superuser("boss", password="x")
    assert _fresh(boss).has_perm(ADMINISTER)


def test_role_backend_gives_an_inactive_user_nothing(editor):
    from studio.shared.roles import VIEW

    type(editor).objects.filter(pk=editor.pk).update(is_active=False)
    assert not _fresh(editor).has_perm(VIEW)


def test_role_backend_reads_permissions_in_one_query(editor, django_assert_num_queries):
    """The default backend takes two (user and group permissions) on every API call."""
    from studio.shared.roles import EDIT, PUBLISH, VIEW

    user = _fresh(editor)
    with django_assert_num_queries(1):
        assert user.has_perm(VIEW) and user.has_perm(EDIT) and not user.has_perm(PUBLISH)
