"""Forms of the people page: a new person, and one person's roles."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password

from studio.shared.roles import ROLES

ROLE_CHOICES = [
    ("viewer", "viewer — reads every page, runs the playground"),
    ("editor", "editor — changes routes, rules, tools and policy"),
    ("publisher", "publisher — publishes versions and moves environments"),
    ("admin", "admin — manages people and roles"),
]
assert [r for r, _ in ROLE_CHOICES] == list(ROLES)


class RolesField(forms.MultipleChoiceField):
    widget = forms.CheckboxSelectMultiple

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=ROLE_CHOICES, required=False, **kwargs)


class PersonForm(forms.Form):
    username = forms.CharField(max_length=150, help_text="What they type to sign in.")
    email = forms.EmailField(required=False)
    roles = RolesField(initial=["viewer"])
    password = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="Leave empty to get a one-time link where they set their own.",
    )

    def clean_username(self) -> str:
        name: str = self.cleaned_data["username"].strip()
        if User.objects.filter(username__iexact=name).exists():
            raise forms.ValidationError("Someone already has this username.")
        return name

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        password = data.get("password")
        if password:
            try:
                validate_password(password, User(username=data.get("username", "")))
            except forms.ValidationError as exc:
                self.add_error("password", exc)
        return data


class RolesForm(forms.Form):
    roles = RolesField()
