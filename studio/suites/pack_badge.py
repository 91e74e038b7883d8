"""The pack badge's lint count: every profile page shows whether lint finds errors."""

from __future__ import annotations

from django import template

from studio.models import Profile
from studio.suites.checkups import lint_error_count

register = template.Library()


@register.simple_tag
def lint_errors(profile: Profile) -> int:
    """The draft's lint error count (cached per draft revision)."""
    return lint_error_count(profile)
