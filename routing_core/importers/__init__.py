"""Importers: other tools' intents (Rasa, Dialogflow ES/CX, semantic-router, Lex V2, Azure
CLU) as packs.

Each importer is a pure function `(source, *, language=None) -> ImportResult`, where the
source is a path (file, folder or zip) or the bytes of a zip or file upload. Nothing is
dropped silently: what has no equivalent is in `ImportResult.notes` as `path: reason`.
YAML formats need PyYAML (`pip install 'routing-core[importers]'`), imported only when used.
"""

from __future__ import annotations

from collections.abc import Callable

from routing_core.importers.azure_clu import import_azure_clu
from routing_core.importers.dialogflow_cx import import_dialogflow_cx
from routing_core.importers.dialogflow_es import import_dialogflow_es
from routing_core.importers.files import Source, read_upload
from routing_core.importers.lex_v2 import import_lex_v2
from routing_core.importers.rasa import import_rasa
from routing_core.importers.result import ImportedRoute, ImportResult, Note, route_name
from routing_core.importers.semantic_router import import_semantic_router

Importer = Callable[..., ImportResult]

IMPORTERS: dict[str, Importer] = {
    "rasa": import_rasa,
    "dialogflow-es": import_dialogflow_es,
    "dialogflow-cx": import_dialogflow_cx,
    "semantic-router": import_semantic_router,
    "lex-v2": import_lex_v2,
    "azure-clu": import_azure_clu,
}
LABELS = {
    "rasa": "Rasa (NLU YAML or a project zip)",
    "dialogflow-es": "Dialogflow ES (agent export zip)",
    "dialogflow-cx": "Dialogflow CX (agent JSON package zip)",
    "semantic-router": "semantic-router (route config, JSON or YAML)",
    "lex-v2": "Amazon Lex V2 (bot export zip)",
    "azure-clu": "Azure AI Language CLU (project JSON)",
}


def import_export(
    format: str, source: Source, *, language: str | None = None, filename: str | None = None
) -> ImportResult:
    """Run the importer for `format` on a path or an upload's bytes.

    Args:
        filename: an upload's file name: a single YAML or JSON file is read as that file
            rather than as a zip.

    Raises:
        KeyError: an unknown format.
        PackError: the export cannot be read or has nothing to import.
    """
    importer = IMPORTERS[format]
    if isinstance(source, bytes) and filename:
        source = read_upload(source, filename)
    return importer(source, language=language)


__all__ = [
    "IMPORTERS",
    "LABELS",
    "ImportResult",
    "ImportedRoute",
    "Source",
    "Note",
    "import_export",
    "route_name",
]
