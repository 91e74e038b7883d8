"""People and their roles, managed in the product by an admin (no Django admin, no manage.py).

Each change is one transaction with its audit entry (profile-less: a person is studio-wide).
A one-time set-password link uses Django's password-reset token, which expires once the
password changes (or after PASSWORD_RESET_TIMEOUT), so a link handed over can be used once.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group, User
from django.contrib.auth.tokens import default_token_generator
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from studio.models import AuditEntry
from studio.shared.roles import ROLES, ensure_roles


class PeopleRefused(Exception):
    """A change that would lock the studio out (an admin removing their own admin role)."""


def roles_of(user: User) -> list[str]:
    """The roles a person holds, in the order of ROLES (viewer … admin)."""
    held = {g.name for g in user.groups.all()}
    return [role for role in ROLES if role in held]


def create_person(
    username: str, email: str, roles: list[str], password: str | None, *, by: Any
) -> User:
    """A new person with these roles; without a password they sign in through a link."""
    ensure_roles()
    with transaction.atomic():
        person = User.objects.create_user(username, email=email, password=password)
        if password is None:
            person.set_unusable_password()
            person.save(update_fields=["password"])
        person.groups.set(Group.objects.filter(name__in=roles))
        _audit(by, "user.create", person, None, {"roles": roles, "email": email})
    return person


def set_roles(person: User, roles: list[str], *, by: Any) -> None:
    """Give and take roles; an admin cannot take their own admin role (who would give it back?),
    nor anyone the last admin's."""
    if person.pk == by.pk and "admin" in roles_of(person) and "admin" not in roles:
        raise PeopleRefused("You cannot take away your own admin role: ask another admin.")
    with transaction.atomic():
        _lock_admins()
        before = roles_of(person)
        person.groups.set(Group.objects.filter(name__in=roles))
        _keep_an_admin(person)
        _audit(by, "user.roles", person, {"roles": before}, {"roles": roles_of(person)})


def set_active(person: User, active: bool, *, by: Any) -> None:
    """Deactivate someone (they can no longer sign in; their history stays) or bring them back."""
    if person.pk == by.pk and not active:
        raise PeopleRefused("You cannot deactivate yourself.")
    with transaction.atomic():
        _lock_admins()
        person.is_active = active
        person.save(update_fields=["is_active"])
        _keep_an_admin(person)
        action = "user.activate" if active else "user.deactivate"
        _audit(by, action, person, {"active": not active}, {"active": active})


def _lock_admins() -> None:
    """Serialise every change that could remove an admin, on the admin role's row.

    Two admins demoting each other at once each saw the other still an admin and both went
    through. Taking this lock first (a write, so SQLite takes its write lock here too, before
    anything is read) makes the second change wait for the first and then count afresh.
    """
    ensure_roles()
    Group.objects.filter(name="admin").update(name="admin")


def _keep_an_admin(person: User) -> None:
    """Refuse (and so roll back) a change that leaves the studio without an active admin."""
    admins = User.objects.filter(is_active=True).filter(
        Q(groups__name="admin") | Q(is_superuser=True)
    )
    if not admins.exists():
        raise PeopleRefused(
            f"{person.get_username()} is the last admin: make someone else an admin first."
        )


def password_link(person: User, *, by: Any) -> str:
    """The path of a one-time link where the person sets their own password."""
    uid = urlsafe_base64_encode(force_bytes(person.pk))
    token = default_token_generator.make_token(person)
    _audit(by, "user.password_link", person, None, None)
    return reverse("password-set", args=[uid, token])


def _audit(by: Any, action: str, person: User, before: Any, after: Any) -> None:
    AuditEntry.objects.create(
        user=by,
        username=by.get_username(),
        action=action,
        object_type="user",
        object_repr=person.get_username(),
        before=before,
        after=after,
    )
