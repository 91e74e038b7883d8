"""`routing-core replay PACK EVENTS...`: the flip report of logged turns on a candidate pack.

Its own module so that the command line's other subcommands stay independent of it; `cli.py`
only registers it.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from routing_core.replay import ReplayReport

EXIT_OK, EXIT_INVALID = 0, 2
SHOWN_PER_GROUP = 5


def add_replay_command(commands: Any) -> None:
    """Register `replay` on the `routing-core` subcommand parsers."""
    replay = commands.add_parser(
        "replay", help="replay logged turns on a pack: what would change route, verdict or tools"
    )
    replay.add_argument("pack")
    replay.add_argument("events", nargs="+", help="JSON-lines or Parquet files, paths or URLs")
    replay.add_argument("--engine", choices=["local", "dask", "ray"], default="local")
    replay.add_argument("--scheduler", help="a Dask scheduler address (default: a local cluster)")
    replay.add_argument("--workers", type=int, default=2, help="local cluster worker processes")
    replay.add_argument("--json", action="store_true", help="print the report as one JSON object")
    replay.set_defaults(handler=run_replay)


def run_replay(args: argparse.Namespace) -> int:
    """Read the pack, replay on the chosen engine, print the report."""
    from routing_core import replay_engines
    from routing_core.codec import load_pack

    with open(args.pack, encoding="utf-8") as handle:
        pack_text = handle.read()
    load_pack(pack_text)  # refuse an invalid pack before any cluster starts
    if args.engine == "ray":
        print("error: Ray is not supported; use --engine dask (docs/decisions.md)", file=sys.stderr)
        return EXIT_INVALID
    if args.engine == "dask":
        report = replay_engines.run_dask(
            pack_text, args.events, scheduler=args.scheduler, workers=args.workers
        )
    else:
        report = replay_engines.run_local(pack_text, args.events)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=1))
    else:
        print(render_replay(report))
    return EXIT_OK


def render_replay(report: ReplayReport) -> str:
    """The flip report as text: the share that moves, then each from → to group with messages."""
    lines = [
        f"replayed {report.replayed} turns ({report.skipped} without a message skipped); "
        f"{report.changed} change ({report.share_changed:.2%})"
    ]
    if report.bad_lines:
        lines.append(f"{report.bad_lines} line(s) holding no record skipped:")
        lines += [f"  {b.path}:{b.line}: {b.reason}" for b in report.bad]
        if report.bad_lines > len(report.bad):
            lines.append(f"  … and {report.bad_lines - len(report.bad)} more")
    for group in report.groups:
        lines.append(f"  {group.old} → {group.new}: {len(group.changes)} ({group.share:.2%})")
        for change in group.changes[:SHOWN_PER_GROUP]:
            what = ", ".join(change.changed)
            lines.append(f"      {change.message!r} [{what}]")
        if len(group.changes) > SHOWN_PER_GROUP:
            lines.append(f"      … and {len(group.changes) - SHOWN_PER_GROUP} more")
    return "\n".join(lines)
