"""The rule builder's live check: as an editor types, which of the rule's examples it matches."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from studio.authoring.forms import RuleForm
from studio.authoring.rule_builder import preview
from studio.models import Rule
from studio.shared.packs import rule_match
from studio.shared.pages import HtmxHttpRequest, get_profile, studio_page


@require_POST
@studio_page
def rule_preview(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The rule as typed so far (nothing saved), run by routing_core over its examples."""
    profile = get_profile(slug)
    form = RuleForm(request.POST, profile=profile, instance=Rule(profile=profile))
    form.is_valid()  # fills cleaned_data and the conditions, whatever else is still wrong
    data = form.cleaned_data
    rule = form.instance
    rule.match_kind = data.get("match_kind") or rule.match_kind
    rule.keywords, rule.regex = data.get("keywords") or [], data.get("regex") or ""
    result = preview(
        data.get("route_name") or "",
        rule_match(rule),
        data.get("examples") or [],
        data.get("try_message") or "",
    )
    return render(request, "studio/authoring/_rule_preview.html", {"preview": result})
