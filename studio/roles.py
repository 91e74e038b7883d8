"""Roles (viewer, editor, publisher, admin) as Django groups, and the checks views use."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group, Permission

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


def can_view(user: Any) -> bool:
    return bool(user.is_authenticated and user.has_perm(VIEW))


def can_edit(user: Any) -> bool:
    return bool(user.is_authenticated and user.has_perm(EDIT))
