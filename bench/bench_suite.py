"""Time the studio's suite run on CLINC150 and compare its figures with `routing-core eval`.

Usage: .venv/bin/python bench/bench_suite.py [--data ../shared/datasets/clinc150] [--split val]

A throwaway SQLite database (a temporary file, so the run's background thread sees it) gets a
profile imported from `routes.json` through the studio's pack import, and the split as its test
cases through the studio's case import. The suite then runs through `studio.suites.runs.start_run`
(in its background thread, polled as the page polls it), and `routing-core eval` runs in a
subprocess on the exported pack and cases. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FIGURES = ["n", "pass_rate", "top1_accuracy", "in_scope_accuracy", "oos_recall", "oos_precision",
           "menu_rate"]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets" / "clinc150"))
    parser.add_argument("--split", default="val")
    args = parser.parse_args()
    data = Path(args.data)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        studio = _studio_run(data, args.split, Path(tmp))
        cli = studio.pop("cli")
        assert isinstance(cli, dict)
    _print(studio, cli)
    return 0


def _studio_run(data: Path, split: str, tmp: Path) -> dict[str, object]:
    from routing_core import build_pack_file, dump_pack
    from studio.importing.packs import import_pack
    from studio.suites.case_import import import_cases, parse_cases

    started = time.perf_counter()
    pack = build_pack_file(data / "routes.json", slug="clinc150", name="CLINC150")
    profile = import_pack(dump_pack(pack), user=None)
    parsed = parse_cases((data / f"{split}.jsonl").read_text(encoding="utf-8"), "jsonl")
    import_cases(profile, parsed.rows, user=None)
    imported = time.perf_counter() - started

    cold, run = _timed_run(profile)  # compiles the router for this draft revision
    warm, again = _timed_run(profile)  # the per-revision cache, as after any playground use
    assert again.figures == run.figures or again.figures["latency_us"] != run.figures["latency_us"]
    result = {
        "cli": _cli_run(profile.pk, tmp),  # on the same pack and the same cases, before scaling
        "routes": profile.routes.count(),
        "cases": run.total,
        "bad_rows": len(parsed.errors),
        "import_s": imported,
        "cold_s": cold,
        "warm_s": warm,
        "status": run.status,
        "figures": run.figures,
    }
    rows = parsed.rows * (-(-10_000 // len(parsed.rows)))
    import_cases(profile, rows[: 10_000 - len(parsed.rows)], user=None)
    result["big_s"], big = _timed_run(profile)
    result["big_cases"] = big.total
    return result


def _timed_run(profile: Any) -> tuple[float, Any]:
    from studio.suites.runs import start_run

    started = time.perf_counter()
    run = start_run(profile, user=None)
    while run.is_running:
        time.sleep(0.05)  # the page polls every 500 ms; this only measures more finely
        run.refresh_from_db()
    return time.perf_counter() - started, run


def _cli_run(profile_pk: int, tmp: Path) -> dict[str, object]:
    from routing_core import dump_pack
    from studio.models import Profile
    from studio.shared.packs import build_pack
    from studio.suites.case_import import export_jsonl

    profile = Profile.objects.get(pk=profile_pk)
    pack, cases = tmp / "pack.json", tmp / "cases.jsonl"
    pack.write_text(dump_pack(build_pack(profile)), encoding="utf-8")
    cases.write_text(export_jsonl(profile), encoding="utf-8")
    started = time.perf_counter()
    out = subprocess.run(
        [str(Path(sys.executable).parent / "routing-core"), "eval", str(pack), str(cases), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return {"wall_s": time.perf_counter() - started, "figures": json.loads(out.stdout)}


def _print(studio: dict[str, object], cli: dict[str, object]) -> None:
    s_fig, c_fig = studio["figures"], cli["figures"]
    assert isinstance(s_fig, dict) and isinstance(c_fig, dict)
    print(f"profile: {studio['routes']} routes, {studio['cases']} test cases "
          f"({studio['bad_rows']} bad rows), imported in {studio['import_s']:.2f} s")  # fmt: skip
    print(
        f"studio suite run, {studio['cases']} cases: {studio['cold_s']:.2f} s cold (compiling "
        f"the router for the draft), {studio['warm_s']:.2f} s warm (router cached)"
    )
    print(f"studio suite run, {studio['big_cases']} cases, warm: {studio['big_s']:.2f} s")
    print(f"routing-core eval (subprocess, incl. interpreter start and pack load): "
          f"{cli['wall_s']:.2f} s")  # fmt: skip
    print(f"\n{'figure':<20} {'studio':>10} {'routing-core eval':>18}")
    for key in FIGURES:
        print(f"{key:<20} {_fmt(s_fig.get(key)):>10} {_fmt(c_fig.get(key)):>18}")
    same = _untimed(s_fig) == _untimed(c_fig)
    print(f"\nevery figure but timings identical (per route, confusions, tiers too): {same}")


def _untimed(value: object) -> object:
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k != "latency_us"}
    return value


def _fmt(value: object) -> str:
    return "—" if value is None else (f"{value:.4f}" if isinstance(value, float) else str(value))


if __name__ == "__main__":
    raise SystemExit(main())
