"""URL map of the studio: the API, sign-in, and each area's pages (studio/<area>/urls.py)."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import URLPattern, URLResolver, include, path
from django.views.generic import RedirectView

from studio.api import api
from studio.shared import health

urlpatterns: list[URLPattern | URLResolver] = [
    # First: agents pull packs in a loop, and Django tries patterns in order (no other pattern
    # starts with "api/", so the order changes nothing else). Resolving past the ~100 page
    # patterns was about a third of a 304 pull's time once its queries were cut to one.
    path("api/", api.urls),
    path("", RedirectView.as_view(pattern_name="profile-list"), name="home"),
    path("healthz", health.healthz, name="healthz"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("studio.people.urls")),
    # Importing and publishing first: "profiles/import/" must win over "profiles/<slug>/".
    path("", include("studio.importing.urls")),
    path("", include("studio.publishing.urls")),
    path("", include("studio.authoring.urls")),
    path("", include("studio.playground.urls")),
    path("", include("studio.jobs.urls")),
    path("", include("studio.suites.urls")),
    path("", include("studio.traffic.urls")),
    path("", include("studio.agents.urls")),
    path("admin/", admin.site.urls),
]
