"""URL map of the studio."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import URLPattern, URLResolver, include, path
from django.views.generic import RedirectView

from studio.api import api
from studio.authoring import item_views as items
from studio.authoring import policy_views as tuning
from studio.authoring import profile_views as profiles
from studio.authoring import route_views as route_view
from studio.authoring import rule_builder_views as rule_builder
from studio.authoring import suggestion_views as suggestions
from studio.importing import views as importing
from studio.jobs import views as jobs
from studio.people import views as people
from studio.playground import views as playground
from studio.publishing import views as publishing
from studio.shared import health
from studio.suites import repair_views as repairs


def _item_urls(kind: str) -> list[URLPattern]:
    base = f"profiles/<slug:slug>/{kind}/"
    fixed = {"kind": kind}
    return [
        path(f"{base}add/", items.item_add, fixed, name=f"{kind}-add"),
        path(f"{base}<int:pk>/", items.item_row, fixed, name=f"{kind}-row"),
        path(f"{base}<int:pk>/edit/", items.item_edit, fixed, name=f"{kind}-edit"),
        path(f"{base}<int:pk>/delete/", items.item_delete, fixed, name=f"{kind}-delete"),
        path(f"{base}<int:pk>/move/", items.item_move, fixed, name=f"{kind}-move"),
    ]


urlpatterns: list[URLPattern | URLResolver] = [
    # First: agents pull packs in a loop, and Django tries patterns in order (no other pattern
    # starts with "api/", so the order changes nothing else). Resolving past the ~100 page
    # patterns was about a third of a 304 pull's time once its queries were cut to one.
    path("api/", api.urls),
    path("", RedirectView.as_view(pattern_name="profile-list"), name="home"),
    path("healthz", health.healthz, name="healthz"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "accounts/set-password/<uidb64>/<token>/",
        people.PasswordSetView.as_view(),
        name="password-set",
    ),
    path("people/", people.people, name="people"),
    path("people/<int:pk>/roles/", people.person_roles, name="person-roles"),
    path("people/<int:pk>/active/", people.person_active, name="person-active"),
    path("people/<int:pk>/link/", people.person_link, name="person-link"),
    path("profiles/", profiles.profile_list, name="profile-list"),
    # before profiles/<slug>/: "import" is not a profile
    path("profiles/import/", publishing.import_page, name="import"),
    path("profiles/import/from/", importing.import_from, name="import-from"),
    path("profiles/import/jobs/<int:pk>/", importing.import_job, name="import-job"),
    path(
        "profiles/import/jobs/<int:pk>/cancel/",
        importing.import_job_cancel,
        name="import-job-cancel",
    ),
    path("profiles/<slug:slug>/", profiles.profile_detail, name="profile-detail"),
    path("profiles/<slug:slug>/settings/", profiles.profile_settings, name="profile-settings"),
    path("profiles/<slug:slug>/rules/", items.item_page, {"kind": "rules"}, name="rules"),
    path("profiles/<slug:slug>/rules/preview/", rule_builder.rule_preview, name="rules-preview"),
    path("profiles/<slug:slug>/tools/", items.item_page, {"kind": "tools"}, name="tools"),
    path("profiles/<slug:slug>/playground/", playground.playground, name="playground"),
    path("profiles/<slug:slug>/playground/model/", jobs.model_status, name="playground-model"),
    path("profiles/<slug:slug>/jobs/<str:kind>/<int:pk>/", jobs.job_page, name="job"),
    path(
        "profiles/<slug:slug>/jobs/<str:kind>/<int:pk>/cancel/", jobs.job_cancel, name="job-cancel"
    ),
    path("profiles/<slug:slug>/policy/", tuning.policy, name="policy"),
    path("profiles/<slug:slug>/lexicons/", tuning.lexicons, name="lexicons"),
    path("profiles/<slug:slug>/badge/", profiles.pack_badge, name="pack-badge"),
    path("profiles/<slug:slug>/audit/", profiles.audit_log, name="audit"),
    path(
        "profiles/<slug:slug>/audit/<int:pk>/restore/",
        profiles.audit_restore,
        name="audit-restore",
    ),
    path("profiles/<slug:slug>/versions/", publishing.versions, name="versions"),
    path(
        "profiles/<slug:slug>/versions/<int:number>/download/",
        publishing.download,
        name="version-download",
    ),
    path("profiles/<slug:slug>/publish/", publishing.publish_page, name="publish"),
    path("profiles/<slug:slug>/promote/", publishing.promote_view, name="promote"),
    path("profiles/<slug:slug>/diff/", publishing.diff_page, name="diff"),
    path("profiles/<slug:slug>/tokens/", publishing.tokens_page, name="tokens"),
    path("profiles/<slug:slug>/import/", publishing.import_page, name="import-draft"),
    path("profiles/<slug:slug>/routes/<int:pk>/view/", route_view.route_view, name="route-view"),
    *_item_urls("routes"),
    path(
        "profiles/<slug:slug>/routes/<int:pk>/suggest/",
        suggestions.route_suggestions,
        name="route-suggest",
    ),
    path("profiles/<slug:slug>/tests/<int:pk>/fix/", repairs.case_fix, name="tests-fix"),
    path(
        "profiles/<slug:slug>/tests/<int:pk>/fix/search/",
        repairs.case_fix_search,
        name="tests-fix-search",
    ),
    path(
        "profiles/<slug:slug>/tests/<int:pk>/fix/cancel/",
        repairs.case_fix_cancel,
        name="tests-fix-cancel",
    ),
    path(
        "profiles/<slug:slug>/tests/<int:pk>/fix/again/",
        repairs.case_fix_again,
        name="tests-fix-again",
    ),
    *_item_urls("rules"),
    *_item_urls("tools"),
    path("admin/", admin.site.urls),
    path("", include("studio.suites.urls")),  # test suites and authoring help (issue 6)
    path("", include("studio.traffic.urls")),  # agents, traffic, review, replay (issue 20)
]
