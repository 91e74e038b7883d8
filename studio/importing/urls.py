"""URLs of "Import from ..." another tool and of an import's job page."""

from __future__ import annotations

from django.urls import URLPattern, path

from studio.importing import views

urlpatterns: list[URLPattern] = [
    path("profiles/import/from/", views.import_from, name="import-from"),
    path("profiles/import/jobs/<int:pk>/", views.import_job, name="import-job"),
    path(
        "profiles/import/jobs/<int:pk>/cancel/", views.import_job_cancel, name="import-job-cancel"
    ),
]
