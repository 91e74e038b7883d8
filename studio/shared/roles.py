"""Roles (viewer, editor, publisher, admin) as Django groups, and the checks views use."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group, Permission
from django.db.models import Q

VIEW = "studio.view_profile"
EDIT = "studio.edit_profile"
PUBLISH = "studio.publish_profile"
ADMINISTER = "studio.administer_studio"

# Each role holds the permissions of the ones before it.
ROLES: dict[str, tuple[str, ...]] = {
    "viewer": (VIEW,),
    "editor": (VIEW, EDIT),
    "publisher": (VIEW, EDIT, PUBLISH),
    "admin": (VIEW, EDIT, PUBLISH, ADMINISTER),
}

User = AbstractBaseUser | AnonymousUser


def ensure_roles(using: str = "default") -> None:
    """Create the role groups with their permissions (idempotent)."""
    from django.apps import apps
    from django.contrib.auth.management import create_permissions

    create_permissions(apps.get_app_config("studio"), verbosity=0, using=using)
    for role, perms in ROLES.items():
        group, _ = Group.objects.using(using).get_or_create(name=role)
        codenames = [p.split(".", 1)[1] for p in perms]
        group.permissions.set(
            Permission.objects.using(using).filter(
                content_type__app_label="studio", codename__in=codenames
            )
        )


def grant(user: Any, *roles: str) -> None:
    """Put a user in the named role groups."""
    ensure_roles()
    user.groups.add(*Group.objects.filter(name__in=roles))


class RoleBackend(ModelBackend):
    """Django's ModelBackend, reading a user's permissions in one query instead of two.

    Every API call checks a role on a freshly loaded user, and the default's separate user- and
    group-permission queries were a third of a playground call's time. Same answers, same
    per-request cache (`_perm_cache`), so a page asking many times still queries once.
    """

    def get_all_permissions(self, user_obj: Any, obj: object = None) -> set[str]:
        if not user_obj.is_active or user_obj.is_anonymous or obj is not None:
            return set()
        if not hasattr(user_obj, "_perm_cache"):
            found = Permission.objects.all()
            if not user_obj.is_superuser:
                found = found.filter(Q(user=user_obj) | Q(group__user=user_obj))
            pairs = found.order_by().values_list("content_type__app_label", "codename")
            user_obj._perm_cache = {f"{app}.{codename}" for app, codename in pairs}
        cached: set[str] = user_obj._perm_cache
        return cached


def can_view(user: Any) -> bool:
    return bool(user.is_authenticated and user.has_perm(VIEW))


def can_edit(user: Any) -> bool:
    return bool(user.is_authenticated and user.has_perm(EDIT))
