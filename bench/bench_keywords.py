"""Keyword rules and tool trigger words: the regex alternation they were vs the one-pass matcher.

Two shapes, each on a 16 KB message, before (one `re` alternation per rule or tool, as
`text.compile_keywords` builds it, then one search per declared keyword for the evidence)
and after (`routing_core.keywords`: one Aho-Corasick pass):

- a rule of 500 keywords shaped "a a … a z" (20–59 a's then a letter) on 16 KB of "a a a …":
  every keyword matches for tens of characters at every position before it fails;
- 50 tools × 100 trigger words on 16 KB of ordinary words none of which is a trigger.

Also the same rule in a real `Router.route()`, the automaton's worst case (keywords nested in
one another, "a", "a a", …, each place ends a match of hundreds), and its build time and size.
Prints figures with the load average (the machine is shared); asserts nothing. Run:

    .venv/bin/python bench/bench_keywords.py [--quick]

(`--quick`: 2 KB messages, for a look in seconds; the old regex takes minutes on 16 KB.)
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable

from routing_core import Router, load_pack
from routing_core.keywords import KeywordGroups, KeywordMatcher
from routing_core.text import compile_keywords, keyword_pattern


def _timed(run: Callable[[], object], repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def _load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _old_rule(words: list[str]) -> Callable[[str], object]:
    """The rule matcher as it was: the alternation as a gate, then each keyword for evidence."""
    import re

    gate = compile_keywords(words)
    each = [(w, re.compile(keyword_pattern(w), re.IGNORECASE)) for w in words]

    def hit(message: str) -> object:
        if gate is None or not gate.search(message):
            return None
        return next(((w, m.span()) for w, p in each if (m := p.search(message))), None)

    return hit


def _old_tools(groups: dict[str, list[str]]) -> Callable[[str], object]:
    patterns = [(name, compile_keywords(words)) for name, words in groups.items()]
    return lambda message: tuple(n for n, p in patterns if p is not None and p.search(message))


def rule_shape(size: int) -> None:
    letters = "bcdefghijklmnopqrstuvwxyz"
    words = [" ".join(["a"] * (20 + i % 40) + [letters[i % 25]]) for i in range(500)]
    message = ("a " * size)[:size]
    started = time.perf_counter()
    new = KeywordMatcher(words)
    built = time.perf_counter() - started
    after = _timed(lambda: new.first_declared(message), repeat=5)
    old = _old_rule(words)
    before = _timed(lambda: old(message))
    print(
        f"rule, 500 keywords 'a a … z', {size // 1024} KB of 'a a …': "
        f"before {before:.3f} s, after {after * 1000:.2f} ms "
        f"({before / after:,.0f}x); automaton built in {built * 1000:.0f} ms  [{_load()}]"
    )
    doc = {
        "profile": {"slug": "b", "name": "Bench"},
        "routes": [{"name": "r", "description": "d"}, {"name": "s", "description": "e"}],
        "rules": [{"match": {"keywords": words}, "route": "r"}],
    }
    router = Router(load_pack(doc))
    per_turn = _timed(lambda: router.route(message), repeat=3)
    print(f"  Router.route() on that message with the rule: {per_turn * 1000:.1f} ms  [{_load()}]")


def tool_shape(size: int) -> None:
    rng = random.Random(7)
    syllables = ["ka", "lo", "mi", "ne", "tu", "ra", "so", "vi", "de", "po"]

    def word() -> str:
        return "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))

    groups = {f"tool{t}": [word() + " " + word() for _ in range(100)] for t in range(50)}
    triggers = {w for words in groups.values() for w in words}
    filler = [w for w in (word() for _ in range(4000)) if w not in triggers]
    message = " ".join(filler)[:size]
    new = KeywordGroups(groups)
    after = _timed(lambda: new.matches(message), repeat=5)
    old = _old_tools(groups)
    before = _timed(lambda: old(message), repeat=2)
    print(
        f"tools, 50 x 100 trigger words, {size // 1024} KB of other words: "
        f"before {before * 1000:.0f} ms, after {after * 1000:.2f} ms "
        f"({before / after:,.0f}x)  [{_load()}]"
    )


def nested_shape(size: int) -> None:
    """The automaton's own worst case: keywords nested in one another report at every place."""
    words = [" ".join(["a"] * n) for n in range(500, 0, -1)] + ["z"]
    message = ("a " * size)[:size]
    new = KeywordMatcher(words)
    after = _timed(lambda: new.leftmost(message), repeat=3)
    tools = KeywordGroups({"nested": words[:-1], "never": ["z"]})
    groups = _timed(lambda: tools.matches(message), repeat=3)
    print(
        f"500 nested keywords ('a', 'a a', …) on {size // 1024} KB of 'a a …', every leftmost "
        f"span: {after * 1000:.1f} ms; as tools with one never matched: {groups * 1000:.1f} ms  "
        f"[{_load()}]"
    )


def automaton_size() -> None:
    words = [" ".join(["a"] * (20 + i % 40) + [chr(98 + i % 25)]) for i in range(500)]
    matcher = KeywordMatcher(words)
    stats = matcher._marked._automaton.get_stats()
    total = sum(len(w) for w in words)
    print(
        f"automaton for those 500 keywords ({total:,} characters): {stats['nodes_count']:,} "
        f"nodes, {stats['total_size'] / 1024:.0f} KB"
    )
    rng = random.Random(3)
    words = ["".join(rng.choice("abcdefghij ") for _ in range(2000)) for _ in range(500)]
    started = time.perf_counter()
    matcher = KeywordMatcher(words)
    built = time.perf_counter() - started
    stats = matcher._marked._automaton.get_stats()
    print(
        f"automaton for 500 random keywords of 2,000 characters (the pack's limit per keyword): "
        f"{stats['nodes_count']:,} nodes, {stats['total_size'] / 1e6:.0f} MB, built in "
        f"{built:.2f} s  [{_load()}]"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="2 KB messages instead of 16 KB")
    size = 2048 if parser.parse_args().quick else 16384
    print("measured beside other work: compare the ratios within one run")
    rule_shape(size)
    tool_shape(size)
    nested_shape(size)
    automaton_size()


if __name__ == "__main__":
    main()
