"""Imports, on the job queue: a pack file, or another tool's export (Rasa, Dialogflow, ...).

A request only stores the upload (`start_import`) and answers with the job's page; a worker
parses it with `routing_core.importers`, validates the pack and creates the profile
(`execute_import`), so a large export never ties up a web request. Creation is one
transaction: the profile with its routes, rules and out-of-scope examples (the other tool's
fallback or negative intent, kept as `Profile.out_of_scope`), two audit entries (the import
itself, and the report of what came over and what the other tool had that a pack has no
place for, so that nothing is lost without a trace), and the job's link to the profile, so
a job whose worker died after creating it is finished, not run twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import PurePosixPath
from typing import Any

from django.db import transaction
from django.utils import timezone

from routing_core import PackError, load_pack
from routing_core.importers import (
    IMPORTERS,
    LABELS,
    ImportCancelled,
    ImportResult,
    import_export,
    route_name,
)
from studio.importing.packs import import_pack, read_upload
from studio.jobs import Cancelled, Reporter, retry_locked, start_job
from studio.models import ImportJob, JobStatus, Profile
from studio.shared.audit import audit
from studio.shared.errors import Conflict, Refused, SlugTaken
from studio.shared.labels import plain_problem, source_line

PACK = "pack"  # an ImportJob's format for a Route Studio pack file
STEPS = 3  # read, parse and validate, create
CHECK_EVERY_S = 0.2
# How long a refused import's file waits for its person to try again with other settings.
KEEP_REFUSED_FOR = timedelta(days=1)


@dataclass(frozen=True)
class ImportPreview:
    """What a confirmed import would create: the validated pack document and the report."""

    format: str
    result: ImportResult
    document: dict[str, Any]

    @property
    def slug(self) -> str:
        return str(self.document["profile"]["slug"])

    def report(self) -> dict[str, Any]:
        """The import's report as plain JSON, for the session and the audit trail."""
        r = self.result
        return {
            "format": self.format,
            "language": r.language,
            "routes": len(r.routes),
            "examples": r.example_count,
            "rules": len(r.rules),
            "out_of_scope": list(r.out_of_scope),
            "lexicons": {k: list(v) for k, v in r.lexicons.items()},
            **{
                kind: [source_line(n.path, n.reason) for n in r.notes_of(kind)]
                for kind in ("left out", "kept aside", "changed")
            },
        }


def preview_import(
    format: str,
    data: bytes,
    *,
    filename: str,
    language: str | None = None,
    slug: str | None = None,
    name: str | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> ImportPreview:
    """Parse an upload and validate the pack it makes, saving nothing.

    `cancelled` is asked while the export is parsed (routing_core's importers); True stops it.

    Raises:
        Refused: an unknown format, a file over the size limit, or a slug already taken.
        PackError: the export cannot be read, or makes no valid pack (`path: reason`).
        ImportCancelled: `cancelled()` said so during parsing.
    """
    if format not in IMPORTERS:
        raise Refused([("format", "choose which tool the file comes from")])
    read_upload(data)
    result = import_export(
        format, data, filename=filename, language=language or None, cancelled=cancelled
    )
    own_name = result.name or _unnamed(format, filename)
    slug = slug or route_name(result.name or f"{format} {PurePosixPath(filename).stem}")
    document = result.to_document(slug=slug, name=name or own_name)
    load_pack(document)
    _refuse_taken(slug)
    return ImportPreview(format, result, document)


def _unnamed(format: str, filename: str) -> str:
    """A name for an export that carries none (a Rasa nlu.yml): where it came from, not "nlu"."""
    tool = LABELS.get(format, format).split(" (")[0]
    return f"{tool} import ({PurePosixPath(filename).name})"


def _refuse_taken(slug: str) -> None:
    if Profile.objects.filter(slug=slug).exists():
        raise Refused([("slug", f"a profile '{slug}' exists already: choose another slug")])


def create_imported_profile(
    document: dict[str, Any], report: dict[str, Any], *, user: Any
) -> Profile:
    """Create the previewed profile, all or nothing, with the import's report audited.

    Raises:
        Refused: the slug was taken since the preview.
        PackError: the document is no longer a valid pack.
    """
    with transaction.atomic():
        _refuse_taken(str(document["profile"]["slug"]))
        profile = import_pack(document, user=user)
        audit(user, profile, "profile.import-from", profile, None, report)
    return profile


def start_import(
    format: str,
    data: bytes,
    *,
    user: Any,
    filename: str = "",
    language: str = "",
    slug: str = "",
    name: str = "",
    into: Profile | None = None,
) -> ImportJob:
    """Store an upload and queue its import: a few milliseconds, whatever the file.

    In the tests' ImmediateBackend the import runs here, so the job comes back finished.

    Raises:
        Refused: an unknown format, a file over the size limit, or a slug typed for a new profile
            that is taken (judged before storing it, so the person need not wait for the job).
    """
    if format != PACK and format not in IMPORTERS:
        raise Refused([("format", "choose which tool the file comes from")])
    read_upload(data)
    if slug and into is None and format == PACK:
        if Profile.objects.filter(slug=slug).exists():
            raise SlugTaken(slug, ": import as a new draft of it instead")
    elif slug and into is None:
        _refuse_taken(slug)
    job = ImportJob.objects.create(
        profile=into,
        into_draft=into is not None,
        format=format,
        filename=filename[:255],
        upload=data,
        language=language or "",
        slug=slug or "",
        name=name or "",
        started_by=user,
        draft_revision=into.draft_revision if into else 0,
        total=STEPS,
    )
    return start_job(job)


def execute_import(job: ImportJob, progress: Reporter) -> dict[str, Any]:
    """The import job's work: parse, validate, create; a refusal ends it with its problems."""
    if (job.profile_id is not None and not job.into_draft) or job.done >= STEPS:
        # Created (or the draft replaced, which counts the last step in the same transaction)
        # by a worker that died before it could say so.
        return _ended({"done": STEPS})
    try:
        progress(1, STEPS)
        profile, report = _import(job, progress)
    except (Cancelled, ImportCancelled):
        retry_locked(lambda: ImportJob.objects.filter(pk=job.pk).update(upload=b""))
        raise Cancelled from None
    except (PackError, Refused) as exc:
        refusal = (
            "conflict"
            if isinstance(exc, Conflict)
            else "pack"
            if isinstance(exc, PackError)
            else "refused"
        )
        return _ended(
            {
                "status": JobStatus.FAILED,
                "error": "Nothing was imported: " + "; ".join(f"{p}: {m}" for p, m in exc.errors),
                "problems": [list(problem) for problem in exc.errors],
                "refusal": refusal,
            }
        )
    return _ended({"profile_id": profile.pk, "report": report, "done": STEPS})


def _import(job: ImportJob, progress: Reporter) -> tuple[Profile, dict[str, Any]]:
    """Create the profile (or replace the draft), and link the job to it in the same transaction."""
    data = bytes(job.upload)
    user = job.started_by
    if job.format == PACK:
        into = job.profile if job.into_draft else None
        progress(2, STEPS)
        with transaction.atomic():
            profile = import_pack(
                data,
                user=user,
                into=into,
                slug=job.slug or None,
                expected_draft_revision=job.draft_revision if into is not None else None,
            )
            ImportJob.objects.filter(pk=job.pk).update(profile=profile, done=STEPS)
        return profile, {}
    preview = preview_import(
        job.format,
        data,
        filename=job.filename or "upload",
        language=job.language,
        slug=job.slug,
        name=job.name,
        cancelled=cancel_requested(job),
    )
    progress(2, STEPS)
    report = preview.report()
    with transaction.atomic():
        profile = create_imported_profile(preview.document, report, user=user)
        ImportJob.objects.filter(pk=job.pk).update(profile=profile)
    return profile, report


def cancel_requested(job: ImportJob) -> Callable[[], bool]:
    """The importers' `cancelled=`: whether the job's cancel was asked for, read at most every
    CHECK_EVERY_S (the importers ask every few thousand values), so a large export stops soon
    after its page's "Cancel" without a query per value."""
    last = -CHECK_EVERY_S

    def cancelled() -> bool:
        nonlocal last
        now = time.monotonic()
        if now - last < CHECK_EVERY_S:
            return False
        last = now
        return ImportJob.objects.filter(pk=job.pk, cancel_requested=True).exists()

    return cancelled


def _ended(fields: dict[str, Any]) -> dict[str, Any]:
    """A finished job's fields: its upload is no longer needed once it has ended, unless the
    import was refused: then the file waits (`kept_upload`) so that trying again with another
    format, language or slug does not mean choosing the file again."""
    if fields.get("status") == JobStatus.FAILED:
        return fields
    return {**fields, "upload": b""}


def keep_refused(
    format: str,
    data: bytes,
    *,
    user: Any,
    filename: str,
    errors: list[tuple[str, str]],
    **typed: str,
) -> ImportJob:
    """Record an import the form refused before queueing it (a slug taken), with its file, so
    the form shown again can offer the same file (`kept_upload`) instead of asking for it."""
    return ImportJob.objects.create(
        format=format,
        filename=filename[:255],
        upload=data,
        started_by=user,
        status=JobStatus.FAILED,
        refusal="refused",
        problems=[list(problem) for problem in errors],
        error="Nothing was imported: " + "; ".join(f"{p}: {m}" for p, m in errors),
        finished_at=timezone.now(),
        total=STEPS,
        **typed,
    )


def kept_upload(job_id: int, user: Any) -> ImportJob | None:
    """The refused import `job_id` of `user` whose file still waits, or None.

    Only the person who chose the file gets it back, for `KEEP_REFUSED_FOR`; older files
    are emptied here, so a kept file never outlives its day by more than the next import.
    """
    since = timezone.now() - KEEP_REFUSED_FOR
    waiting = ImportJob.objects.filter(status=JobStatus.FAILED).exclude(upload=b"")
    waiting.filter(finished_at__lt=since).update(upload=b"")
    return (
        waiting.filter(pk=job_id, started_by=user, finished_at__gte=since)
        .exclude(format=PACK)
        .first()
    )


def release_kept(job: ImportJob) -> None:
    """The file of a refused import was used again (or replaced): it is not kept twice."""
    ImportJob.objects.filter(pk=job.pk).update(upload=b"")


def problem_lines(job: ImportJob) -> list[str]:
    """A refused import's problems in the words its form used to show them."""
    if job.format == PACK:
        return [plain_problem(path, message) for path, message in job.problems]
    return [source_line(path, message) for path, message in job.problems]
