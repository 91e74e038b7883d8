"""URLs of the traffic loop's pages: agents, traffic, review queue, replays (issue 20)."""

from __future__ import annotations

from django.urls import URLPattern, path

from studio.traffic import views as traffic

_P = "profiles/<slug:slug>/"

urlpatterns: list[URLPattern] = [
    path(f"{_P}agents/", traffic.agents_page, name="agents"),
    path(f"{_P}traffic/", traffic.traffic_page, name="traffic"),
    path(f"{_P}traffic/review/", traffic.review_page, name="traffic-review"),
    path(f"{_P}traffic/review/<int:pk>/", traffic.review_label, name="traffic-label"),
    path(f"{_P}traffic/replays/", traffic.replay_start, name="replay-start"),
    path(f"{_P}traffic/replays/<int:pk>/", traffic.replay_detail, name="replay"),
]
