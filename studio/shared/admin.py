"""Django admin: a read-mostly window for operators; the studio pages are where people edit."""

from __future__ import annotations

from django.contrib import admin

from studio.models import AuditEntry, Profile, Route, Rule, TestCase, Tool


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["slug", "name", "draft_revision", "updated_at"]
    search_fields = ["slug", "name"]


@admin.register(Route, Rule, Tool, TestCase)
class ItemAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["__str__", "profile", "order", "revision"]
    list_filter = ["profile"]


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["at", "username", "profile_slug", "action", "object_repr"]
    list_filter = ["action"]
    readonly_fields = [f.name for f in AuditEntry._meta.fields]

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False
