"""Whether the studio can suggest examples: the routes table says so before anyone clicks."""

from __future__ import annotations

from django import template

from studio.authoring.suggestions import SETUP_HELP
from studio.shared.llm import llm_client

register = template.Library()


@register.simple_tag
def suggestions_off() -> str:
    """Why "Suggest…" would dead-end (no language model configured), or "" when it works."""
    return SETUP_HELP if llm_client() is None else ""
