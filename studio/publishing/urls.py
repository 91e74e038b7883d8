"""URLs of versions, publishing, environments, diffs, tokens and pack import."""

from __future__ import annotations

from django.urls import URLPattern, path

from studio.publishing import rollout_views, views

_P = "profiles/<slug:slug>/"

urlpatterns: list[URLPattern] = [
    # Included before the authoring pages: "import" is not a profile's slug.
    path("profiles/import/", views.import_page, name="import"),
    path(f"{_P}versions/", views.versions, name="versions"),
    path(f"{_P}versions/<int:number>/download/", views.download, name="version-download"),
    path(f"{_P}publish/", views.publish_page, name="publish"),
    path(f"{_P}promote/", views.promote_view, name="promote"),
    path(f"{_P}diff/", views.diff_page, name="diff"),
    path(f"{_P}tokens/", views.tokens_page, name="tokens"),
    path(f"{_P}import/", views.import_page, name="import-draft"),
    path(f"{_P}rollouts/new/", rollout_views.rollout_new, name="rollout-new"),
    path(f"{_P}rollouts/<int:pk>/", rollout_views.rollout_page, name="rollout"),
    path(f"{_P}rollouts/<int:pk>/act/", rollout_views.rollout_action, name="rollout-act"),
]
