"""URL of the playground page."""

from __future__ import annotations

from django.urls import URLPattern, path

from studio.playground import views

urlpatterns: list[URLPattern] = [
    path("profiles/<slug:slug>/playground/", views.playground, name="playground"),
]
