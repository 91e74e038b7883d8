"""One route on one page, read-only: what a viewer needs to understand where turns go."""

from __future__ import annotations

from django.db.models import Q
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from studio.models import Route
from studio.shared.labels import match_text
from studio.shared.pages import HtmxHttpRequest, get_profile, profile_context, studio_page


@require_GET
@studio_page
def route_view(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    """Every example, keyword and never-phrase, the rules that send here and the cases that expect it."""
    profile = get_profile(slug)
    route = get_object_or_404(Route, profile=profile, pk=pk)
    rules = [
        (rule.order + 1, match_text(rule.match_kind, rule.keywords, rule.regex, rule.all_of), rule)
        for rule in profile.rules.filter(route_name=route.name).order_by("order", "pk")
    ]
    cases = profile.test_cases.filter(
        Q(expected_route=route.name) | Q(incumbent=route.name)
    ).order_by("conversation", "turn", "order", "pk")
    context = profile_context(request, profile, route=route, rules=rules, cases=list(cases))
    return render(request, "studio/authoring/route_view.html", context)
