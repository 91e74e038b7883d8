"""`routing-core conformance generate | check` (conformance/README.md)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from routing_core.conformance import buckets
from routing_core.conformance.cases import (
    CaseFile,
    Runtime,
    check,
    from_event,
    generate,
    in_process,
    read_suite,
)

EXIT_OK, EXIT_DIFFERS, EXIT_ERROR = 0, 1, 2
ENV_TOKEN = "ROUTING_CORE_TOKEN"
MAX_SHOWN = 50


def add_conformance_command(commands: Any) -> None:
    """Register `conformance generate` and `conformance check`."""
    conformance = commands.add_parser("conformance", help="the suite every runtime must pass")
    verbs = conformance.add_subparsers(dest="verb", required=True)
    gen = verbs.add_parser("generate", help="build the packs and write the expected decisions")
    gen.add_argument("--dir", default="conformance", help="the suite's folder")
    gen.add_argument("--only", nargs="+", metavar="NAME", help="these packs only")
    gen.set_defaults(handler=_generate)
    chk = verbs.add_parser("check", help="run a runtime over the suite and print what differs")
    chk.add_argument("--dir", default="conformance", help="the suite's folder")
    chk.add_argument("--only", nargs="+", metavar="NAME", help="these packs only")
    target = chk.add_mutually_exclusive_group(required=True)
    target.add_argument(
        "--server",
        metavar="URL",
        help=f"a route server: checks the suite of the pack it serves (token: ${ENV_TOKEN})",
    )
    target.add_argument("--pack", action="store_true", help="this library, in process")
    chk.set_defaults(handler=_check)


def _generate(args: argparse.Namespace) -> int:
    for path in generate(Path(args.dir), set(args.only) if args.only else None):
        print(f"wrote {path}")
    if not args.only:
        print(f"wrote {buckets.write(Path(args.dir))}")
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    files = read_suite(Path(args.dir), set(args.only) if args.only else None)
    try:
        if args.server:
            files, runtime = _server(args.server.rstrip("/"), files)
        else:
            runtime = in_process(files)
        count, report = check(files, runtime)
        if args.pack and not args.only:
            # The canary buckets are computed in process (a route server does not expose them).
            bucket_count, bucket_report = buckets.check(Path(args.dir))
            count, report = count + bucket_count, report + bucket_report
    except ConnectionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    for line in report[:MAX_SHOWN]:
        print(line)
    if len(report) > MAX_SHOWN:
        print(f"... and {len(report) - MAX_SHOWN} more differences")
    names = ", ".join(f.name for f in files) + (", buckets" if args.pack and not args.only else "")
    if report:
        print(f"FAILED: {len(report)} differences in {count} cases ({names})")
        return EXIT_DIFFERS
    print(f"ok: {count} cases ({names})")
    return EXIT_OK


def _server(url: str, files: list[CaseFile]) -> tuple[list[CaseFile], Runtime]:
    """The suite of the pack `url` serves, and a runtime that routes each case there."""
    served = _call(url + "/v1/pack", None)
    matching = [f for f in files if f.checksum == served.get("checksum")]
    if not matching:
        raise ConnectionError(
            f"the server serves {served.get('slug')!r} {served.get('checksum')!r}, "
            "which is not a pack of this suite"
        )

    def run(_name: str, case: Mapping[str, Any]) -> dict[str, Any]:
        body = {"message": case["message"], "incumbent": case.get("incumbent"), "exact": True}
        answer = _call(url + "/v1/route", body)
        if answer.get("pack", {}).get("checksum") != matching[0].checksum:
            raise ConnectionError("the server changed its pack during the check")
        return from_event(answer)

    return matching, run


def _call(url: str, body: Mapping[str, Any] | None) -> dict[str, Any]:
    headers = {"Accept": "application/json"}
    token = os.environ.get(ENV_TOKEN)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - the user's URL
            result: dict[str, Any] = json.loads(answer.read())
            return result
    except urllib.error.HTTPError as exc:
        raise ConnectionError(f"{url}: HTTP {exc.code}: {exc.read()[:300]!r}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ConnectionError(f"{url}: {exc}") from None
