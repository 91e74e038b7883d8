"""Pages: "Import from …" another tool (editors only), and an import's job page.

The form only stores the upload and queues it (`studio.importing.imports.start_import`); the job's
page shows its progress, then what came over with a link to the new profile, or the problems
in words with the form filled in again as the person typed it.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from routing_core.importers import LABELS
from studio.importing.imports import (
    PACK,
    keep_refused,
    kept_upload,
    problem_lines,
    release_kept,
    start_import,
)
from studio.importing.packs import MAX_IMPORT_BYTES
from studio.jobs import cancel_job, recover_job
from studio.models import ImportJob, JobStatus
from studio.shared.errors import Refused
from studio.shared.labels import source_line
from studio.shared.pages import HtmxHttpRequest, studio_page
from studio.shared.roles import can_edit

# What each part of an import's report is called on its page.
NOTES = (("left out", "Left out"), ("kept aside", "Kept aside"), ("changed", "Changed on the way"))


class ImportFromForm(forms.Form):
    format = forms.ChoiceField(label="The file comes from", choices=list(LABELS.items()))
    # Not required: a form shown again after a refusal offers the file chosen then (`again`).
    file = forms.FileField(label="Export file (.zip, .yml, .yaml or .json)", required=False)
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


def _editor(request: HtmxHttpRequest) -> None:
    if not can_edit(request.user):
        raise PermissionDenied("Importing needs the editor role.")


@require_http_methods(["GET", "POST"])
@studio_page
def import_from(request: HtmxHttpRequest) -> HttpResponse:
    _editor(request)
    posted = request.method == "POST"
    form = ImportFromForm(
        request.POST if posted else None,
        request.FILES if posted else None,
        initial=_typed_before(request),
    )
    kept = _kept(request)
    errors: list[str] = []
    if posted and form.is_valid():
        upload = form.cleaned_data["file"]
        if upload is None and kept is None:
            form.add_error("file", "choose the export file")
            return _page(request, form, errors, kept)
        if upload is not None:
            data, filename = upload.read(MAX_IMPORT_BYTES + 1), upload.name or "upload"
        else:
            data, filename = bytes(kept.upload), kept.filename  # type: ignore[union-attr]
        typed = {k: form.cleaned_data[k] for k in ("language", "slug", "name")}
        try:
            job = start_import(
                form.cleaned_data["format"], data, user=request.user, filename=filename, **typed
            )
        except Refused as exc:
            errors = _refusal(form, exc)
            kept = _keep(request, form, kept, data, filename, exc, typed, new=upload is not None)
        else:
            if kept is not None:
                release_kept(kept)
            return redirect("import-job", pk=job.pk)
    return _page(request, form, errors, kept)


def _refusal(form: ImportFromForm, exc: Refused) -> list[str]:
    """A refused import's problems: a taken slug beside its field, the rest above the form."""
    errors = []
    for path, message in exc.errors:
        if path == "slug":  # taken: said beside the field, with what was typed kept
            form.add_error(path, message)
        else:
            errors.append(source_line(path, message))
    return errors


def _keep(
    request: HtmxHttpRequest,
    form: ImportFromForm,
    kept: ImportJob | None,
    data: bytes,
    filename: str,
    exc: Refused,
    typed: dict[str, str],
    *,
    new: bool,
) -> ImportJob | None:
    """The file to offer again on the refused form: the one just chosen (replacing any kept
    before), or the kept one it reused. A file over the size limit is not kept."""
    if not new:
        return kept
    if kept is not None:
        release_kept(kept)
    if len(data) > MAX_IMPORT_BYTES:
        return None
    return keep_refused(
        form.cleaned_data["format"],
        data,
        user=request.user,
        filename=filename,
        errors=list(exc.errors),
        **{k: v or "" for k, v in typed.items()},
    )


def _kept(request: HtmxHttpRequest) -> ImportJob | None:
    """The refused import whose file this form offers again (`again`, in the query or posted)."""
    again = request.POST.get("again") or request.GET.get("again", "")
    return kept_upload(int(again), request.user) if again.isdigit() else None


def _typed_before(request: HtmxHttpRequest) -> dict[str, str]:
    """`?again=<job>`: the form as the person filled it in for an import that was refused."""
    again = request.GET.get("again", "")
    if not again.isdigit():
        return {}
    job = ImportJob.objects.filter(pk=int(again)).exclude(format=PACK).defer("upload").first()
    if job is None:
        return {}
    return {"format": job.format, "language": job.language, "slug": job.slug, "name": job.name}


def _page(
    request: HtmxHttpRequest, form: ImportFromForm, errors: list[str], kept: ImportJob | None
) -> HttpResponse:
    context = {
        "form": form,
        "errors": errors,
        "kept": kept,
        "kept_kb": max(1, round(len(kept.upload) / 1024)) if kept else 0,
        "limit_kb": MAX_IMPORT_BYTES // 1024,
    }
    status = 422 if errors or form.errors else 200
    return render(request, "studio/importing/import_from.html", context, status=status)


def _import_job(request: HtmxHttpRequest, pk: int) -> ImportJob:
    _editor(request)
    return get_object_or_404(ImportJob.objects.defer("upload").select_related("profile"), pk=pk)


@require_GET
@studio_page
def import_job(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The import's progress (polled by htmx), then what it created or why it did not."""
    job = recover_job(_import_job(request, pk))
    template = "studio/importing/import_job.html"
    if request.htmx:
        template += "#import-status"
    return render(request, template, job_context(job))


@require_POST
@studio_page
def import_job_cancel(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    job = _import_job(request, pk)
    cancel_job(job)
    if job.status == JobStatus.CANCELLED:  # it ended before a worker read the upload
        ImportJob.objects.filter(pk=job.pk).update(upload=b"")
    if request.htmx:
        return render(request, "studio/importing/import_job.html#import-status", job_context(job))
    return redirect("import-job", pk=job.pk)


def job_context(job: ImportJob) -> dict[str, Any]:
    """What the job's page says: its state, the report of what came over, the problems."""
    report = job.report or {}
    return {
        "job": job,
        "is_pack": job.format == PACK,
        "label": "a pack file" if job.format == PACK else LABELS.get(job.format, job.format),
        "report": report,
        "came_over": came_over(report) if report else "",
        "notes": [(title, report.get(kind, [])) for kind, title in NOTES],
        "problems": problem_lines(job),
    }


def came_over(report: dict[str, Any]) -> str:
    """What the import created, in words: "4 routes and 2 out-of-scope examples from the import"."""
    routes = f"{report['routes']} route{'s' if report['routes'] != 1 else ''}"
    outside = len(report.get("out_of_scope", []))
    if outside:
        plural = "s" if outside != 1 else ""
        routes += f" and {outside} out-of-scope example{plural}"
    return f"{routes} from the import"
