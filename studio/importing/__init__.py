"""Importing: a pack file, or another tool's export (Rasa, Dialogflow, semantic-router, Lex,
CLU), made a profile on the job queue; its pages.

Other areas use what this package re-exports below, and nothing else of it.
"""

from __future__ import annotations

from studio.importing.imports import PACK, problem_lines, start_import
from studio.importing.packs import MAX_IMPORT_BYTES

__all__ = [
    "MAX_IMPORT_BYTES",
    "PACK",
    "problem_lines",
    "start_import",
]
