"""API: publish a version, list and download versions, move environments, diff, import a pack."""

from __future__ import annotations

import json
from typing import Any, Literal

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from ninja import Router, Status
from ninja.params import functions as params
from pydantic import BaseModel, Field

from routing_core import PackError
from routing_core.signing import SIGNATURE_HEADER
from studio.importing import PACK as IMPORTED_PACK
from studio.importing import start_import
from studio.models import Environment, ImportJob, JobStatus, Version
from studio.publishing.gate import ReasonRequired, RedGate, publish_through_gate, review_gate
from studio.publishing.versions import environments, pack_diff, promote
from studio.shared.api_access import USER_AUTH, profile_for, require
from studio.shared.downloads import attachment
from studio.shared.errors import Conflict, Refused
from studio.shared.roles import EDIT, PUBLISH
from studio.shared.schemas import (
    ERRORS,
    MAX_INT,
    SLUG,
    SLUG_PATTERN,
    DiffOut,
    EnvironmentOut,
    ProfileOut,
    PromoteIn,
    PublishIn,
    VersionOut,
)
from studio.shared.signing import signature_for

router = Router(tags=["publishing"], auth=USER_AUTH)
imports = Router(tags=["publishing"], auth=USER_AUTH)  # mounted at /imports
NUMBER: Any = params.Path(..., ge=1, le=MAX_INT)
SIDE = r"^(draft|[1-9][0-9]{0,8})$"
PACK: Any = params.Body(..., description="a route pack document")
NEW_SLUG: Any = params.Query(
    None, max_length=64, pattern=SLUG_PATTERN, description="instead of the pack's"
)


def _version_out(version: Version) -> dict[str, Any]:
    return {
        **{f: getattr(version, f) for f in ("number", "checksum", "published_by", "note")},
        "published_at": version.published_at,
        "tests_passed": version.tests_passed,
        "tests_total": len(version.test_results),
        "test_results": version.test_results,
    }


def _environment_out(env: Environment) -> dict[str, Any]:
    v = env.version
    return {
        "name": env.name,
        "version": v.number if v else None,
        "checksum": v.checksum if v else None,
        "revision": env.revision,
        "updated_at": env.updated_at,
    }


@router.get("/{slug}/versions", response={200: list[VersionOut], **ERRORS})
def list_versions(request: HttpRequest, slug: str = SLUG) -> list[dict[str, Any]]:
    return [_version_out(v) for v in profile_for(request, slug).versions.all()]


class PublicationOut(BaseModel):
    status: str = Field(description="`queued` or `running`: poll `url` (the page) for the end.")
    percent: int = Field(description="Training the draft's model, then storing the version.")
    detail: str
    url: str


@router.post("/{slug}/versions", response={201: VersionOut, 202: PublicationOut, **ERRORS})
def publish_version(
    request: HttpRequest, payload: PublishIn, slug: str = SLUG
) -> Status[dict[str, Any]]:
    """Publish the draft as the next version (publisher role), through the same gate as the page.

    The gate is red while lint finds errors, the draft's model is training, or the test suite
    has not finished on this draft or has failing cases: then publishing needs `reason` (kept in
    the audit trail with what was red), else it is a 409 naming what is red. The first call on a
    draft with test cases starts its suite run, so a script that waits for a green gate
    retries after `Retry-After` seconds (a profile without test cases has none to wait for).
    An invalid draft is a 422. Publishing runs on the job queue: 201 with the version when it
    finished at once (the draft's model was ready), else 202 with the publication's progress;
    the request never waits.
    """
    profile = profile_for(request, slug, PUBLISH)
    user = request.auth  # type: ignore[attr-defined]
    gate = review_gate(profile, user=user)
    try:
        job = publish_through_gate(
            profile,
            gate,
            user=user,
            reason=payload.reason,
            note=payload.note,
            environment=payload.environment,
            expected_draft_revision=payload.draft_revision,
        )
    except ReasonRequired as exc:
        detail = f"the checks are red ({exc}): give a reason to publish anyway"
        raise RedGate(detail, waiting=gate.is_running) from exc
    if job.status == JobStatus.DONE and job.version is not None:
        return Status(201, _version_out(job.version))
    if job.is_running:
        url = reverse("job", args=[profile.slug, "publication", job.pk])
        detail = "publishing: waiting for the draft's model, then storing the version"
        return Status(
            202, {"status": job.status, "percent": job.percent, "detail": detail, "url": url}
        )
    raise Conflict(job.error or "the publication was cancelled")


@router.get("/{slug}/versions/{number}", response={200: VersionOut, **ERRORS})
def read_version(request: HttpRequest, slug: str = SLUG, number: int = NUMBER) -> dict[str, Any]:
    profile = profile_for(request, slug)
    return _version_out(get_object_or_404(Version, profile=profile, number=number))


@router.get(
    "/{slug}/versions/{number}/pack",
    response={200: dict[str, Any], **ERRORS},
    summary="Download a version as `<slug>-v<N>.json`",
)
def download_version(request: HttpRequest, slug: str = SLUG, number: int = NUMBER) -> HttpResponse:
    """The pack file, with its signature in `Route-Pack-Signature` when the studio signs."""
    version = get_object_or_404(Version, profile=profile_for(request, slug), number=number)
    response = attachment(version.pack_json, "application/json", version.filename)
    signature = signature_for(version.pack_json.encode("utf-8"))
    if signature is not None:
        response[SIGNATURE_HEADER] = signature
    return response


@router.get(
    "/{slug}/versions/{number}/signature",
    response={200: dict[str, Any], **ERRORS},
    summary="Download a version's detached signature as `<slug>-v<N>.json.sig`",
)
def download_signature(
    request: HttpRequest, slug: str = SLUG, number: int = NUMBER
) -> HttpResponse:
    """The signature file to keep beside the pack file (docs/pack-format.md, Signed packs);
    404 when the studio has no signing key."""
    version = get_object_or_404(Version, profile=profile_for(request, slug), number=number)
    signature = signature_for(version.pack_json.encode("utf-8"))
    if signature is None:
        raise Http404("the studio does not sign packs: it has no signing key")
    return attachment(signature + "\n", "application/json", version.filename + ".sig")


@router.get("/{slug}/environments", response={200: list[EnvironmentOut], **ERRORS})
def list_environments(request: HttpRequest, slug: str = SLUG) -> list[dict[str, Any]]:
    return [_environment_out(e) for e in environments(profile_for(request, slug))]


@router.put("/{slug}/environments/{environment}", response={200: EnvironmentOut, **ERRORS})
def promote_version(
    request: HttpRequest,
    payload: PromoteIn,
    environment: Literal["staging", "production"],
    slug: str = SLUG,
) -> dict[str, Any]:
    """Point an environment at a version: promote, or roll back to an earlier one."""
    profile = profile_for(request, slug, PUBLISH)
    version = get_object_or_404(Version, profile=profile, number=payload.version)
    env = promote(version, environment, user=request.auth, expected_revision=payload.revision)  # type: ignore[attr-defined]
    return _environment_out(env)


@router.get("/{slug}/diff", response={200: DiffOut, **ERRORS}, operation_id="diff_versions")
def diff(
    request: HttpRequest,
    slug: str = SLUG,
    old: str = params.Query(..., pattern=SIDE, description="a version number or `draft`"),
    new: str = params.Query("draft", pattern=SIDE, description="a version number or `draft`"),
) -> dict[str, Any]:
    """Changes from `old` to `new`, and the test cases whose verdict flips; 422 on an invalid draft."""
    result = pack_diff(profile_for(request, slug), old, new)
    return {"old": old, "new": new, **result.to_dict()}


class ImportOut(BaseModel):
    status: str = Field(description="`queued` or `running`: poll `url` (the page) for the end.")
    percent: int
    detail: str
    url: str


@imports.post("", response={201: ProfileOut, 202: ImportOut, **ERRORS})
def import_new(
    request: HttpRequest,
    pack: dict[str, Any] = PACK,
    slug: str | None = NEW_SLUG,
) -> Status[Any]:
    """Create a profile from a pack (editor role); every problem of a bad pack is listed.

    The import runs on the job queue: 201 with the profile when it finished at once, else 202
    with the job's page to follow. Of simultaneous imports of one slug one creates it, the rest
    get 409 (or, when they end on a worker, a failed job whose page says the slug is taken).
    """
    user = require(request, EDIT)
    job = start_import(IMPORTED_PACK, _as_file(pack), user=user, slug=slug or "")
    return _import_answer(job, 201)


@router.post("/{slug}/import", response={200: ProfileOut, 202: ImportOut, **ERRORS})
def import_draft(
    request: HttpRequest,
    pack: dict[str, Any] = PACK,
    slug: str = SLUG,
) -> Status[Any]:
    """Replace the profile's draft with a pack (its test cases and versions stay); on the job
    queue like a new profile's import: 200 when it finished at once, else 202."""
    profile = profile_for(request, slug, EDIT)
    user = request.auth  # type: ignore[attr-defined]
    return _import_answer(start_import(IMPORTED_PACK, _as_file(pack), user=user, into=profile), 200)


def _as_file(pack: dict[str, Any]) -> bytes:
    """The posted pack as the file the job keeps (its size judged like an uploaded one's)."""
    return json.dumps(pack).encode("ascii")  # \u escapes: a lone surrogate reaches the validator


def _import_answer(job: ImportJob, done: int) -> Status[Any]:
    """The profile (`done`), 202 while the job runs, or its refusal as the API's errors."""
    if job.status == JobStatus.DONE and job.profile is not None:
        return Status(done, job.profile)
    if job.is_running:
        url = reverse("import-job", args=[job.pk])
        detail = "importing: reading the pack, checking it, creating the routes"
        return Status(
            202, {"status": job.status, "percent": job.percent, "detail": detail, "url": url}
        )
    problems = [(str(path), str(message)) for path, message in job.problems]
    if job.refusal == "conflict":
        raise Conflict("; ".join(f"{p}: {m}" for p, m in problems))
    if job.refusal == "pack":
        raise PackError(problems)
    if job.refusal == "refused":
        raise Refused(problems)
    raise Conflict(job.error or "the import was cancelled")
