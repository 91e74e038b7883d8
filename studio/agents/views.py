"""The agents page: which agents pull the profile's packs, and whether each can read the next one."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from routing_core import engine_version
from studio.agents.fleet import can_read, fleet
from studio.shared.pages import HtmxHttpRequest, get_profile, profile_context, studio_page


@require_GET
@studio_page
def agents_page(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    made_by = engine_version()
    rows = [(row, can_read(row.agent.engine_version, made_by)) for row in fleet(profile)]
    context = profile_context(request, profile, rows=rows, made_by=made_by)
    return render(request, "studio/agents/agents.html", context)
