"""Import from another tool (Rasa, Dialogflow, semantic-router, Lex, CLU): preview, then create.

The export is parsed by `routing_core.importers` and validated as a pack before anything
is saved; the person sees what came over and what was left out, then confirms. Creation
is one transaction: the profile with its routes, rules and out-of-scope examples (the
other tool's fallback or negative intent, kept as `Profile.out_of_scope`), and two audit
entries (the import itself, and the report of what came over and what the other tool had
that a pack has no place for, so that nothing is lost without a trace).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from django.db import transaction

from routing_core import load_pack
from routing_core.importers import IMPORTERS, ImportResult, import_export
from routing_core.importers.result import route_name
from studio.models import Profile
from studio.publishing import import_pack, read_upload
from studio.services import Refused, _audit


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
                kind: [n.line() for n in r.notes_of(kind)]
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
) -> ImportPreview:
    """Parse an upload and validate the pack it makes, saving nothing.

    Raises:
        Refused: an unknown format, a file over the size limit, or a slug already taken.
        PackError: the export cannot be read, or makes no valid pack (`path: reason`).
    """
    if format not in IMPORTERS:
        raise Refused([("format", "choose which tool the file comes from")])
    read_upload(data)
    result = import_export(format, data, filename=filename, language=language or None)
    slug = slug or route_name(result.name or PurePosixPath(filename).stem)
    document = result.to_document(slug=slug, name=name or None)
    load_pack(document)
    _refuse_taken(slug)
    return ImportPreview(format, result, document)


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
        _audit(user, profile, "profile.import-from", profile, None, report)
    return profile
