"""The people page: an admin adds people, gives and takes roles, deactivates someone and hands
out one-time set-password links. Every form answers with a redirect (post/redirect/get)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse_lazy
from django.views.decorators.http import require_http_methods, require_POST

from studio.models import AuditEntry
from studio.people.accounts import (
    PeopleRefused,
    create_person,
    password_link,
    roles_of,
    set_active,
    set_roles,
)
from studio.people.forms import PersonForm, RolesForm
from studio.shared.labels import history_line
from studio.shared.pages import HtmxHttpRequest
from studio.shared.roles import ADMINISTER

View = Callable[..., HttpResponse]


def admin_page(view: View) -> View:
    """Signed in with the admin role, for reading as for changing."""

    @wraps(view)
    def wrapper(request: HtmxHttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.has_perm(ADMINISTER):
            raise PermissionDenied("Managing people needs the admin role.")
        return view(request, *args, **kwargs)

    return login_required(wrapper)


@require_http_methods(["GET", "POST"])
@admin_page
def people(request: HtmxHttpRequest) -> HttpResponse:
    form = PersonForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        person = create_person(
            data["username"],
            data["email"],
            data["roles"],
            data["password"] or None,
            by=request.user,
        )
        if data["password"]:
            messages.success(request, f"Added {person.username}: they can sign in now.")
        else:
            _give_link(request, person)
        return redirect("people")
    rows = [(p, roles_of(p)) for p in User.objects.order_by("username").prefetch_related("groups")]
    entries = AuditEntry.objects.filter(object_type="user", profile=None)[:30]
    context = {
        "rows": rows,
        "form": form,
        "roles_form": RolesForm(),
        "changes": [(e, history_line(e)) for e in entries],
    }
    return render(request, "studio/people/people.html", context, status=422 if form.errors else 200)


@require_POST
@admin_page
def person_roles(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    person = get_object_or_404(User, pk=pk)
    form = RolesForm(request.POST)
    if form.is_valid():
        _refusable(request, lambda: set_roles(person, form.cleaned_data["roles"], by=request.user))
    return redirect("people")


@require_POST
@admin_page
def person_active(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    person = get_object_or_404(User, pk=pk)
    active = request.POST.get("active") == "1"
    _refusable(request, lambda: set_active(person, active, by=request.user))
    return redirect("people")


@require_POST
@admin_page
def person_link(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    _give_link(request, get_object_or_404(User, pk=pk))
    return redirect("people")


def _give_link(request: HtmxHttpRequest, person: User) -> None:
    url = request.build_absolute_uri(password_link(person, by=request.user))
    messages.success(
        request,
        f"Give {person.username} this one-time link to set their password: {url}",
        extra_tags="password-link",
    )


def _refusable(request: HtmxHttpRequest, change: Callable[[], None]) -> None:
    try:
        change()
    except PeopleRefused as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Saved.")


class PasswordSetView(auth_views.PasswordResetConfirmView):
    """Where a one-time link lands: the person chooses a password, then signs in."""

    template_name = "registration/password_set.html"
    success_url = reverse_lazy("login")
    post_reset_login = False

    def form_valid(self, form: Any) -> HttpResponse:
        messages.success(self.request, "Your password is set: sign in with it.")
        return super().form_valid(form)
