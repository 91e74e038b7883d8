"""Comments cite the specification by section title ("docs/pack-format.md, Verdicts"): each
cited title must be a section of docs/pack-format.md, so renaming a section cannot leave the
code pointing at nothing."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "docs" / "pack-format.md"
CITED_IN = ("routing_core", "tests/routing_core", "bench")
# "docs/pack-format.md, Verdicts, step 3" or "docs/pack-format.md: Tier 3, Failures": the first
# name after the path, up to the next , ; . ) or the end of the comment.
CITATION = re.compile(r"docs/pack-format\.md[,:] ([A-Z][^,;.)\"`]*)")
HEADING = re.compile(r"^#{2,3} (?:[\d.]+ )?(.+?)(?: \{#[a-z0-9-]+\})?$", re.MULTILINE)


def _sections() -> list[str]:
    return HEADING.findall(SPEC.read_text(encoding="utf-8"))


def _citations() -> list[tuple[str, str]]:
    found = []
    for folder in CITED_IN:
        for path in sorted((ROOT / folder).rglob("*.py")):
            # Comments wrap: join the lines, without their comment markers, into one text.
            text = re.sub(r"\n\s*#?\s*", " ", path.read_text(encoding="utf-8"))
            found += [
                (str(path.relative_to(ROOT)), name.strip()) for name in CITATION.findall(text)
            ]
    return found


def test_every_cited_section_of_the_specification_exists() -> None:
    sections = _sections()
    citations = _citations()
    assert citations, "no citation of docs/pack-format.md found: the pattern is wrong"
    missing = [
        (where, name)
        for where, name in citations
        if not any(section.startswith(name) for section in sections)
    ]
    assert not missing, f"cited sections missing from docs/pack-format.md: {missing}"


def test_every_section_of_the_specification_has_a_stable_anchor() -> None:
    text = SPEC.read_text(encoding="utf-8")
    headings = re.findall(r"^#{2,3} .+$", text, re.MULTILINE)
    assert headings
    assert all(re.search(r" \{#[a-z0-9-]+\}$", h) for h in headings), headings
