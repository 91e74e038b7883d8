"""Page: "Import from …" another tool: upload, preview what comes over, confirm (editors only)."""

from __future__ import annotations

import secrets
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from routing_core import PackError
from routing_core.importers import LABELS
from studio.importing import ImportPreview, create_imported_profile, preview_import
from studio.publishing import MAX_IMPORT_BYTES
from studio.roles import can_edit
from studio.services import Refused
from studio.views._common import HtmxHttpRequest, studio_page

SESSION_KEY = "studio.import_preview"


class ImportFromForm(forms.Form):
    format = forms.ChoiceField(label="The file comes from", choices=list(LABELS.items()))
    file = forms.FileField(label="Export file (.zip, .yml, .yaml or .json)")
    language = forms.RegexField(
        label="Language",
        regex=r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$",
        max_length=20,
        required=False,
        help_text="For an export with several languages, e.g. en, de or en_US "
        "(empty: the agent's default).",
        error_messages={"invalid": "a language code such as en, pt-BR or en_US"},
    )
    slug = forms.RegexField(
        label="Slug",
        regex=r"^[a-z0-9][a-z0-9_-]*$",
        max_length=64,
        required=False,
        help_text="Empty: made from the agent's name.",
        error_messages={"invalid": "lowercase letters, digits, '-' or '_'"},
    )
    name = forms.CharField(label="Name", max_length=200, required=False)


@require_http_methods(["GET", "POST"])
@studio_page
def import_from(request: HtmxHttpRequest) -> HttpResponse:
    if not can_edit(request.user):
        raise PermissionDenied("Importing needs the editor role.")
    if request.method == "POST" and "confirm" in request.POST:
        return _confirm(request)
    posted = request.method == "POST"
    form = ImportFromForm(request.POST if posted else None, request.FILES if posted else None)
    preview, token, errors = None, "", []
    if posted and form.is_valid():
        try:
            preview, token = _preview(request, form)
        except (PackError, Refused) as exc:
            errors = [f"{path}: {message}" for path, message in exc.errors]
    return _page(request, form, preview=preview, token=token, errors=errors)


def _preview(request: HtmxHttpRequest, form: ImportFromForm) -> tuple[ImportPreview, str]:
    """Parse and validate; the pack waits in the session for the person's confirmation."""
    upload = form.cleaned_data["file"]
    preview = preview_import(
        form.cleaned_data["format"],
        upload.read(MAX_IMPORT_BYTES + 1),
        filename=upload.name or "upload",
        language=form.cleaned_data["language"],
        slug=form.cleaned_data["slug"],
        name=form.cleaned_data["name"],
    )
    token = secrets.token_urlsafe(16)
    request.session[SESSION_KEY] = {
        "token": token,
        "document": preview.document,
        "report": preview.report(),
    }
    return preview, token


def _confirm(request: HtmxHttpRequest) -> HttpResponse:
    stored = request.session.get(SESSION_KEY)
    if not stored or not secrets.compare_digest(stored["token"], request.POST.get("token", "")):
        messages.error(request, "That preview has expired: choose the file again.")
        return redirect("import-from")
    try:
        profile = create_imported_profile(stored["document"], stored["report"], user=request.user)
    except (PackError, Refused) as exc:
        errors = [f"{path}: {message}" for path, message in exc.errors]
        return _page(request, ImportFromForm(), preview=None, token="", errors=errors)
    del request.session[SESSION_KEY]
    messages.success(request, f"Created {profile.slug} with {_came_over(stored['report'])}.")
    return redirect("profile-detail", slug=profile.slug)


def _came_over(report: dict[str, Any]) -> str:
    """What the import created, in words: "4 routes and 2 out-of-scope examples from the import"."""
    routes = f"{report['routes']} route{'s' if report['routes'] != 1 else ''}"
    outside = len(report.get("out_of_scope", []))
    if outside:
        plural = "s" if outside != 1 else ""
        routes += f" and {outside} out-of-scope example{plural}"
    return f"{routes} from the import"


def _page(
    request: HtmxHttpRequest,
    form: ImportFromForm,
    *,
    preview: ImportPreview | None,
    token: str,
    errors: list[str],
) -> HttpResponse:
    context: dict[str, Any] = {
        "form": form,
        "preview": preview,
        "token": token,
        "errors": errors,
        "limit_kb": MAX_IMPORT_BYTES // 1024,
    }
    if preview is not None:
        result = preview.result
        context["notes"] = [
            (title, result.notes_of(kind))  # type: ignore[arg-type]
            for kind, title in (
                ("left out", "Left out"),
                ("kept aside", "Kept aside"),
                ("changed", "Changed on the way"),
            )
        ]
    status = 422 if errors or form.errors else 200
    return render(request, "studio/import_from.html", context, status=status)
