"""Responses a browser saves as a file (test cases, published packs), for pages and the API alike."""

from __future__ import annotations

from django.http import HttpResponse
from django.utils.http import content_disposition_header


def attachment(body: str, content_type: str, filename: str) -> HttpResponse:
    """`body` as a download named `filename` (Django quotes and escapes the name)."""
    disposition = content_disposition_header(as_attachment=True, filename=filename)
    return HttpResponse(
        body, content_type=content_type, headers={"Content-Disposition": disposition}
    )
