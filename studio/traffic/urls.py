"""URLs of the traffic loop's pages: traffic, the review queue, replays."""

from __future__ import annotations

from django.urls import URLPattern, path

from studio.traffic import views

_P = "profiles/<slug:slug>/"

urlpatterns: list[URLPattern] = [
    path(f"{_P}traffic/", views.traffic_page, name="traffic"),
    path(f"{_P}traffic/scrub/", views.scrub_start, name="traffic-scrub"),
    path(f"{_P}traffic/review/", views.review_page, name="traffic-review"),
    path(f"{_P}traffic/review/<int:pk>/", views.review_label, name="traffic-label"),
    path(f"{_P}traffic/replays/", views.replay_start, name="replay-start"),
    path(f"{_P}traffic/replays/<int:pk>/", views.replay_detail, name="replay"),
]
