"""How well `routing_core.languages.detect` names short messages' languages, and what it costs.

Usage:
    .venv/bin/python bench/bench_language_detection.py [--data ../shared/datasets]

Reads home-assistant's `<lang>/routes.json` (the training halves: the cut-offs of
`routing_core.languages` were chosen on them) for every language with a two-letter code of its
own (regional variants such as `pt-br` and `zh-hk` are left out: the detector names the
language, not the region). Prints, per letter count and overall: how many messages get an
answer, and how many answers are right; then the model's load and the per-message cost
(`time.process_time`, median of five passes). Figures are measured beside other work: the load
average is printed with them. Asserts nothing; docs/decisions.md ("Detecting a message's
language") compares it with the other libraries measured.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from routing_core import languages

REGIONAL = {"de-CH", "pt-br", "sr-Latn", "zh-hk", "zh-tw"}
SAME = {"nb": "no", "zh-cn": "zh"}
BUCKETS = [(0, 6), (6, 12), (12, 20), (20, 40), (40, 10_000)]


def messages(root: Path) -> list[tuple[str, str]]:
    """(language code, message) for every example of every language kept."""
    found = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.name not in REGIONAL):
        code = SAME.get(folder.name, folder.name)
        for route in json.loads((folder / "routes.json").read_text(encoding="utf-8")):
            found += [(code, example) for example in route["examples"]]
    return found


def report(rows: list[tuple[str, str, str | None]], label: str) -> None:
    answered = [r for r in rows if r[2] is not None]
    right = sum(1 for code, _, got in answered if got == code)
    print(
        f"{label:>16}: {len(rows):6} messages, answered {len(answered) / max(1, len(rows)):6.1%}, "
        f"right of answered {right / max(1, len(answered)):6.1%}, "
        f"right of all {right / max(1, len(rows)):6.1%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/datasets")
    args = parser.parse_args()
    found = messages(Path(args.data) / "home-assistant")
    started = time.process_time()
    languages.detect("warm the model up, please")
    load = time.process_time() - started
    rows = [(code, text, languages.detect(text)) for code, text in found]
    print(f"{len({c for c, _ in found})} languages; load average {os.getloadavg()}")
    report(rows, "all")
    for low, high in BUCKETS:
        bucket = [r for r in rows if low <= sum(ch.isalpha() for ch in r[1]) < high]
        report(bucket, f"{low}-{high} letters")
    passes = []
    for _ in range(5):
        started = time.process_time()
        for _, text in found:
            languages.detect(text)
        passes.append((time.process_time() - started) / len(found))
    print(
        f"model load {load * 1000:.0f} ms CPU; per message {statistics.median(passes) * 1e6:.1f} µs "
        f"(median of 5 passes); load average {os.getloadavg()}"
    )


if __name__ == "__main__":
    main()
