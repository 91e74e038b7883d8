"""URLs of the people page and of the one-time set-password link."""

from __future__ import annotations

from django.urls import URLPattern, path

from studio.people import views

urlpatterns: list[URLPattern] = [
    path(
        "accounts/set-password/<uidb64>/<token>/",
        views.PasswordSetView.as_view(),
        name="password-set",
    ),
    path("people/", views.people, name="people"),
    path("people/<int:pk>/roles/", views.person_roles, name="person-roles"),
    path("people/<int:pk>/active/", views.person_active, name="person-active"),
    path("people/<int:pk>/link/", views.person_link, name="person-link"),
]
