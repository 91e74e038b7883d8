"""The profile list (with create) and a profile's own settings: identity and default route."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from studio.authoring.conflicts import reshown, with_choices
from studio.authoring.forms import ProfileCreateForm, ProfileForm
from studio.authoring.item_views import KINDS, render_page
from studio.authoring.restore import is_restorable, restore
from studio.models import AuditEntry, Profile
from studio.shared.edits import create_profile, save_profile
from studio.shared.errors import Conflict, Refused
from studio.shared.labels import history_line
from studio.shared.pages import HtmxHttpRequest, fragment, get_profile, profile_context, studio_page
from studio.shared.roles import can_edit


@require_http_methods(["GET", "POST"])
@studio_page
def profile_list(request: HtmxHttpRequest) -> HttpResponse:
    form = ProfileCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            profile = create_profile(form.instance, user=request.user)
        except Refused as exc:
            form.add_pack_errors(exc.errors, "profile")
        else:
            messages.success(request, f"Created {profile.slug}. Add its first route below.")
            return redirect("profile-detail", slug=profile.slug)
    status = 422 if form.errors else 200
    profiles = Profile.objects.annotate(route_count=Count("routes"))
    context = {"profiles": profiles, "form": form, "can_edit": can_edit(request.user)}
    return render(request, "studio/authoring/profile_list.html", context, status=status)


@require_GET
@studio_page
def profile_detail(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    return render_page(request, KINDS["routes"], profile)


@require_GET
@studio_page
def pack_badge(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    return render(request, "studio/authoring/_pack_badge.html", profile_context(request, profile))


@require_GET
@studio_page
def out_of_scope_notice(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The out-of-scope notice again, after an edit on its page changed what it says."""
    profile = get_profile(slug)
    context = profile_context(request, profile, on_policy=request.GET.get("on_policy") == "1")
    return render(request, "studio/authoring/_out_of_scope_notice.html", context)


@require_POST
@studio_page
def profile_settings(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    form = ProfileForm(with_choices(request.POST), instance=profile)
    status, conflict = 422, None
    if form.is_valid():
        try:
            save_profile(
                form.instance, user=request.user, expected_revision=form.cleaned_data["revision"]
            )
        except Conflict as exc:
            current = exc.current or get_profile(slug)
            yours, theirs = (
                ProfileForm(request.POST, instance=current),
                ProfileForm(instance=current),
            )
            conflict, data = reshown(request.POST, yours, theirs, exc, current.revision)
            form, status = ProfileForm(data, instance=current), 409
        except Refused as exc:
            form.add_pack_errors(exc.errors)
        else:
            if not request.htmx:
                messages.success(request, "Saved the profile settings.")
                return redirect("profile-detail", slug=slug)
            form, status = ProfileForm(instance=get_profile(slug)), 200
    if request.htmx:
        context = profile_context(
            request, get_profile(slug), profile_form=form, settings_conflict=conflict
        )
        return fragment(
            request, "studio/authoring/profile_detail.html#profile-settings", context, status=status
        )
    return render_page(
        request,
        KINDS["routes"],
        get_profile(slug),
        status=status,
        profile_form=form,
        settings_conflict=conflict,
    )


@require_GET
@studio_page
def audit_log(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    entries = AuditEntry.objects.filter(profile=profile).select_related("user")[:200]
    rows = [(e, history_line(e), is_restorable(e)) for e in entries]
    return render(
        request, "studio/authoring/audit.html", profile_context(request, profile, rows=rows)
    )


@require_POST
@studio_page
def audit_restore(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    """Bring back what a delete removed (editor role); refused when the pack would be invalid."""
    entry = get_object_or_404(AuditEntry, profile=get_profile(slug), pk=pk)
    try:
        item = restore(entry, user=request.user)
    except Refused as exc:
        reasons = "; ".join(message for _, message in exc.errors)
        messages.error(request, f"Not restored: {reasons}")
    else:
        messages.success(request, f"Restored {item}.")
    return redirect("audit", slug=slug)
