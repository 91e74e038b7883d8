"""URL of the agents page."""

from __future__ import annotations

from django.urls import URLPattern, path

from studio.agents import views

urlpatterns: list[URLPattern] = [
    path("profiles/<slug:slug>/agents/", views.agents_page, name="agents"),
]
