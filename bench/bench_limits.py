"""What a pack at each stated limit costs to validate, build, ship and load (docs/reliability.md,
"Pack limits").

Usage: .venv/bin/python bench/bench_limits.py [--rows all] [--list]

Each row is a generated, synthetic profile (made-up words, no public data) that sits at one limit
of `routing_core.limits` (docs/pack-format.md, Limits), or at all of them at once (`combined`),
and runs in a fresh process so that its peak memory is its own. Per row: the time to validate
the document (`load_pack` of the pack without a model: schema, regex compilation and safety),
the build's CPU and wall time (`with_model`, the lexical model learned and stored, as publishing
does), the process's peak RSS, the pack's size as JSON (what `PackFetcher` downloads, before
compression, against its cap `MAX_PACK_BYTES`) and the time to load the built pack into a
`Router`. Prints a table; asserts nothing (benchmarks are not tests).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from routing_core import Router, dump_pack, load_pack  # noqa: E402
from routing_core import limits as L  # noqa: E402
from routing_core.scorers.stored import with_model  # noqa: E402

SYLLABLES = "ba ko ri mu te la zen dor vi sa pel nu qua fi mo ga lu re tis yo kan sho".split()


class Words:
    """A made-up vocabulary: a few common words every route shares, and each route's own."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.common = [self.word() for _ in range(300)]

    def word(self) -> str:
        return "".join(self.rng.sample(SYLLABLES, self.rng.randint(2, 4)))

    def own(self, n: int = 12) -> list[str]:
        return [self.word() for _ in range(n)]

    def text(self, own: list[str], chars: int) -> str:
        """A text of about `chars` characters, a third of its words the route's own."""
        out: list[str] = []
        size = 0
        while size < chars:
            word = self.rng.choice(own if self.rng.random() < 0.35 else self.common)
            out.append(word)
            size += len(word) + 1
        return " ".join(out)[:chars].strip() or own[0]


def profile(
    routes: int,
    examples: int = 0,
    keywords: int = 0,
    example_chars: int = 40,
    description_chars: int = 60,
    rules: int = 0,
    regex_chars: int = 0,
    out_of_scope: int = 0,
    seed: int = 1,
) -> dict[str, Any]:
    """A pack document of `routes` generated routes (no model yet)."""
    words = Words(seed)
    doc_routes = []
    for index in range(routes):
        own = words.own()
        doc_routes.append(
            {
                "name": f"r{index:04d}",
                "description": words.text(own, description_chars),
                "examples": [words.text(own, example_chars) for _ in range(examples)],
                "keywords": [f"{words.word()} {index} {k}" for k in range(keywords)],
            }
        )
    doc: dict[str, Any] = {
        "profile": {"slug": "limits", "name": "limits"},
        "routes": doc_routes,
        "out_of_scope": [words.text(words.common, example_chars) for _ in range(out_of_scope)],
    }
    doc["rules"] = [
        {"route": f"r{i % routes:04d}", "match": {"regex": regex_of(words, regex_chars)}}
        for i in range(rules)
    ]
    return doc


def regex_of(words: Words, chars: int) -> str:
    """A safe regex of exactly `chars` characters: word atoms with optional and repeated parts."""
    text = ""
    while True:
        part = rf"{words.word()}[a-z]?\d+\s"
        if len(text) + len(part) > chars:
            return text + "x" * (chars - len(text))
        text += part


def rows() -> dict[str, dict[str, Any]]:
    """Each stated limit on its own, and all of them at once."""
    per_route = L.MAX_PACK_TEXTS // L.MAX_ROUTES
    # the characters left once the regexes have theirs, shared by every text
    chars_each = (L.MAX_PACK_CHARS - L.MAX_PACK_REGEX_CHARS) // L.MAX_PACK_TEXTS - 1
    return {
        # routes: the most routes, each with its share of the pack's texts
        "routes": {"routes": L.MAX_ROUTES, "examples": per_route},
        # items of one route: one route's list at its limit (the rest of the pack's texts)
        "examples": {"routes": L.MAX_PACK_TEXTS // L.MAX_ITEMS, "examples": L.MAX_ITEMS},
        "keywords": {"routes": L.MAX_PACK_TEXTS // L.MAX_ITEMS, "keywords": L.MAX_ITEMS},
        # the longest texts, as many as the pack's characters allow
        "long-examples": {
            "routes": L.MAX_PACK_CHARS // (10 * L.MAX_TEXT + 20),
            "examples": 10,
            "example_chars": L.MAX_TEXT,
            "description_chars": 0,
        },
        "descriptions": {
            "routes": min(L.MAX_ROUTES, L.MAX_PACK_CHARS // L.MAX_DESCRIPTION),
            "description_chars": L.MAX_DESCRIPTION,
        },
        # the most regex characters: rules at the longest regex
        "regex-rules": {
            "routes": 10,
            "rules": L.MAX_PACK_REGEX_CHARS // L.MAX_TEXT,
            "regex_chars": L.MAX_TEXT,
        },
        # all at once: the most routes, texts, characters and regex characters
        "combined": {
            "routes": L.MAX_ROUTES,
            "examples": per_route - 1,
            "keywords": 1,
            "example_chars": chars_each,
            "description_chars": 0,
            "rules": L.MAX_PACK_REGEX_CHARS // L.MAX_TEXT,
            "regex_chars": L.MAX_TEXT,
        },
    }


def measure(name: str) -> dict[str, Any]:
    """One row, in this process."""
    doc = profile(**rows()[name])
    start = time.process_time()
    pack = load_pack(doc)
    validate_s = time.process_time() - start
    start, wall = time.process_time(), time.perf_counter()
    built = with_model(pack)
    build_s, build_wall = time.process_time() - start, time.perf_counter() - wall
    text = dump_pack(built)
    start = time.process_time()
    Router(load_pack(text))
    load_s = time.process_time() - start
    model = getattr(built.scorer, "model", None)
    return {
        "row": name,
        "texts": sum(len(r["examples"]) + len(r["keywords"]) for r in doc["routes"]),
        "chars": sum(
            len(r["description"]) + sum(map(len, r["examples"])) + sum(map(len, r["keywords"]))
            for r in doc["routes"]
        ),
        "regex_chars": sum(len(r["match"]["regex"]) for r in doc["rules"]),
        "validate_s": round(validate_s, 2),
        "build_cpu_s": round(build_s, 1),
        "build_wall_s": round(build_wall, 1),
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "pack_mb": round(len(text.encode("utf-8")) / 2**20, 1),
        "cap_mb": L.MAX_PACK_BYTES // 2**20,
        "load_s": round(load_s, 2),
        "model_terms": len(model.terms) if model else 0,
        "model_term_chars": sum(map(len, model.terms)) if model else 0,
        "model_cells": len(model.cells) * 3 // 4 // 4 if model else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="all", help="comma-separated rows, or all")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a row in this process (the child)
    parser.add_argument("--list", action="store_true", help="print the rows' settings")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one)))
        return
    if args.list:
        for name, settings in rows().items():
            print(name, settings)
        return
    names = list(rows()) if args.rows == "all" else args.rows.split(",")
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()}")
    header = None
    for name in names:
        child = [sys.executable, __file__, "--one", name]
        out = subprocess.run(child, capture_output=True, text=True, check=False)
        if out.returncode:
            print(name, "failed:", out.stderr.strip().splitlines()[-1:])
            continue
        row = json.loads(out.stdout.strip().splitlines()[-1])
        if header is None:
            header = list(row)
            print(" | ".join(header))
        print(" | ".join(str(row[k]) for k in header), f"| load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
