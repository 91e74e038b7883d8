"""`routing-core import FORMAT PATH -o PACK.json`: another tool's export as a pack, with a summary.

Kept apart from `cli.py` so the command line only has to register it. The summary says
what came over (routes, examples, keywords, out-of-scope examples, rules) and lists every
note of the import; exit codes are `validate`'s: 0 written, 2 the export could not be imported.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from routing_core.codec import dump_pack
from routing_core.importers import IMPORTERS, LABELS, ImportResult, import_export

EXIT_OK = 0


def add_import_command(commands: Any) -> None:
    """Register `import` on the `routing-core` subparsers."""
    command = commands.add_parser(
        "import",
        help="make a pack from a Rasa, Dialogflow, semantic-router, Lex V2 or Azure CLU export",
        description="; ".join(f"{k}: {v}" for k, v in LABELS.items()),
    )
    command.add_argument("format", choices=sorted(IMPORTERS))
    command.add_argument("path", help="the export: a file, a folder or a zip")
    command.add_argument("-o", "--output", help="write the pack here (else to stdout)")
    command.add_argument("--language", help="the language to import (default: the agent's)")
    command.add_argument("--slug", default="imported", help="the pack's profile slug")
    command.add_argument("--name", help="the pack's profile name (default: the agent's)")
    command.set_defaults(handler=run_import)


def run_import(args: argparse.Namespace) -> int:
    result = import_export(args.format, args.path, language=args.language)
    pack = result.to_pack(slug=args.slug, name=args.name)
    text = dump_pack(pack, indent=1)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text + "\n")
        print_summary(result, sys.stdout, written_to=args.output)
    else:
        print(text)
        print_summary(result, sys.stderr)
    return EXIT_OK


def print_summary(result: ImportResult, stream: TextIO, *, written_to: str | None = None) -> None:
    """What came over as a table, then every note grouped by kind."""
    from rich.console import Console
    from rich.table import Table

    console = Console(file=stream, width=110, highlight=False, soft_wrap=True)
    where = f" → {written_to}" if written_to else ""
    language = f", language {result.language}" if result.language else ""
    console.print(
        f"imported {len(result.routes)} routes, {result.example_count} examples, "
        f"{len(result.out_of_scope)} out-of-scope examples, "
        f"{len(result.rules)} rules from {result.format}{language}{where}"
    )
    table = Table("route", "from", "examples", "keywords", box=None, pad_edge=False)
    for route in result.routes:
        table.add_row(route.name, route.source, str(len(route.examples)), str(len(route.keywords)))
    console.print(table)
    for kind in ("left out", "kept aside", "changed"):
        notes = result.notes_of(kind)
        if notes:
            console.print(f"{kind} ({len(notes)}):")
            for note in notes:
                console.print(f"  {note.line()}", markup=False)
