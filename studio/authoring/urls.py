"""URLs of the authoring pages: profiles, routes, rules, tools, policy, lexicons, audit."""

from __future__ import annotations

from django.urls import URLPattern, path

from studio.authoring import (
    conversation_views,
    item_views,
    policy_views,
    profile_views,
    route_views,
    rule_builder_views,
    suggestion_views,
)

_P = "profiles/<slug:slug>/"


def _item_urls(kind: str) -> list[URLPattern]:
    base = f"{_P}{kind}/"
    fixed = {"kind": kind}
    return [
        path(f"{base}add/", item_views.item_add, fixed, name=f"{kind}-add"),
        path(f"{base}<int:pk>/", item_views.item_row, fixed, name=f"{kind}-row"),
        path(f"{base}<int:pk>/edit/", item_views.item_edit, fixed, name=f"{kind}-edit"),
        path(f"{base}<int:pk>/delete/", item_views.item_delete, fixed, name=f"{kind}-delete"),
        path(f"{base}<int:pk>/move/", item_views.item_move, fixed, name=f"{kind}-move"),
    ]


urlpatterns: list[URLPattern] = [
    path("profiles/", profile_views.profile_list, name="profile-list"),
    path(_P, profile_views.profile_detail, name="profile-detail"),
    path(f"{_P}settings/", profile_views.profile_settings, name="profile-settings"),
    path(f"{_P}rules/", item_views.item_page, {"kind": "rules"}, name="rules"),
    path(f"{_P}rules/preview/", rule_builder_views.rule_preview, name="rules-preview"),
    path(f"{_P}tools/", item_views.item_page, {"kind": "tools"}, name="tools"),
    path(f"{_P}policy/", policy_views.policy, name="policy"),
    path(
        f"{_P}policy/out-of-scope-starter/",
        policy_views.out_of_scope_starter,
        name="out-of-scope-starter",
    ),
    path(f"{_P}lexicons/", policy_views.lexicons, name="lexicons"),
    path(f"{_P}badge/", profile_views.pack_badge, name="pack-badge"),
    path(
        f"{_P}out-of-scope-notice/",
        profile_views.out_of_scope_notice,
        name="out-of-scope-notice",
    ),
    path(f"{_P}audit/", profile_views.audit_log, name="audit"),
    path(f"{_P}audit/<int:pk>/restore/", profile_views.audit_restore, name="audit-restore"),
    path(f"{_P}routes/<int:pk>/view/", route_views.route_view, name="route-view"),
    *_item_urls("routes"),
    path(f"{_P}routes/<int:pk>/suggest/", suggestion_views.route_suggestions, name="route-suggest"),
    path(
        f"{_P}routes/<int:pk>/conversations/",
        conversation_views.route_conversations,
        name="route-conversations",
    ),
    *_item_urls("rules"),
    *_item_urls("tools"),
]
