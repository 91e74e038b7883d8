"""URLs of a job's page, its cancel, and the playground's model status."""

from __future__ import annotations

from django.urls import URLPattern, path

from studio.jobs import views

_P = "profiles/<slug:slug>/"

urlpatterns: list[URLPattern] = [
    path(f"{_P}playground/model/", views.model_status, name="playground-model"),
    path(f"{_P}jobs/<str:kind>/<int:pk>/", views.job_page, name="job"),
    path(f"{_P}jobs/<str:kind>/<int:pk>/cancel/", views.job_cancel, name="job-cancel"),
]
