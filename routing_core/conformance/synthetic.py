"""A CLINC150-size profile made of synthetic text: 150 routes, 100 examples each.

The conformance suite needs a pack the size of CLINC150 (docs/benchmarks.md measures the
engine there), but a pack built from CLINC150 carries its examples, and public data sets are
never committed to the project. So this module writes the same shape from the project's own
words: 15 domains of 10 intents, as in CLINC150, where an intent is an action on a domain's
objects. Intents of one domain share its nouns and intents of one action share its verbs, so
routes overlap the way real ones do (near-ties, menus, the semantic view at work). A seeded
generator makes the same texts on every machine and Python version.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial
from typing import Any

DOMAINS: dict[str, tuple[str, ...]] = {
    "banking": ("account", "balance", "savings", "checking account", "bank transfer"),
    "card": ("credit card", "debit card", "card limit", "card pin", "card statement"),
    "travel": ("flight", "hotel room", "train ticket", "boarding pass", "rental car"),
    "home": ("thermostat", "lights", "garage door", "alarm system", "smart lock"),
    "kitchen": ("recipe", "grocery list", "oven timer", "dinner plan", "shopping order"),
    "auto": ("car", "oil change", "tire pressure", "insurance policy", "parking spot"),
    "work": ("meeting", "calendar", "payroll", "vacation days", "timesheet"),
    "music": ("playlist", "song", "album", "radio station", "podcast"),
    "health": ("doctor appointment", "prescription", "health plan", "lab results", "dentist"),
    "phone": ("phone plan", "voicemail", "contacts", "text messages", "data usage"),
    "school": ("homework", "class schedule", "exam", "tuition bill", "library book"),
    "shopping": ("order", "package", "return label", "gift card", "wish list"),
    "utility": ("electric bill", "water bill", "gas meter", "internet service", "trash pickup"),
    "fitness": ("workout", "step count", "gym membership", "running route", "sleep score"),
    "pets": ("vet visit", "dog food", "pet insurance", "grooming", "cat litter"),
}
ACTIONS: dict[str, tuple[str, ...]] = {
    "check": ("check", "look up", "show me", "tell me about"),
    "cancel": ("cancel", "stop", "call off", "get rid of"),
    "change": ("change", "update", "edit", "modify"),
    "book": ("book", "schedule", "set up", "arrange"),
    "report": ("report a problem with", "complain about", "flag an issue with", "fix"),
    "pay": ("pay", "pay for", "settle", "cover the cost of"),
    "share": ("share", "send", "forward", "give access to"),
    "remind": ("remind me about", "set a reminder for", "alert me about", "notify me about"),
    "explain": ("explain", "help me understand", "what does it mean for", "describe"),
    "compare": ("compare", "rank", "find a better", "shop around for"),
}
OPENERS = (
    "",
    "please",
    "can you",
    "could you",
    "i need to",
    "i want to",
    "help me",
    "would you",
    "i'd like to",
    "quickly",
)
TAILS = (
    "",
    "today",
    "right now",
    "for me",
    "this week",
    "again",
    "before friday",
    "when you can",
    "as soon as possible",
    "tonight",
)
DETERMINERS = ("my", "the", "our", "this")
OUT_OF_SCOPE_WORDS = (
    "volcano",
    "poem",
    "galaxy",
    "dinosaur",
    "riddle",
    "painting",
    "ocean",
    "castle",
    "dragon",
    "meteor",
    "opera",
    "glacier",
    "pyramid",
    "chess",
    "comet",
    "jungle",
)
OUT_OF_SCOPE_FRAMES = (
    "write a {0} about a {1}",
    "what is the biggest {0}",
    "tell me a story about a {0} and a {1}",
    "who would win between a {0} and a {1}",
    "how old is the oldest {0}",
    "draw me a {0}",
)
EXAMPLES_PER_ROUTE = 100
OUT_OF_SCOPE_EXAMPLES = 100


def route_names() -> list[str]:
    """`<domain>_<action>` for every domain and action: 150 names."""
    return [f"{d}_{a}" for d in DOMAINS for a in ACTIONS]


def message(rng: random.Random, domain: str, action: str) -> str:
    """One request for `action` on one of `domain`'s objects."""
    parts = (
        rng.choice(OPENERS),
        rng.choice(ACTIONS[action]),
        rng.choice(DETERMINERS),
        rng.choice(DOMAINS[domain]),
        rng.choice(TAILS),
    )
    return " ".join(p for p in parts if p)


def out_of_scope(rng: random.Random) -> str:
    """A request that belongs to no domain."""
    frame = rng.choice(OUT_OF_SCOPE_FRAMES)
    first, second = rng.sample(OUT_OF_SCOPE_WORDS, 2)
    return frame.format(first, second)


def profile(seed: int = 150) -> tuple[list[dict[str, Any]], list[str]]:
    """The routes (`[{name, description, examples}]`) and out-of-scope texts, all distinct."""
    rng = random.Random(seed)
    seen: set[str] = set()
    routes = []
    for domain in DOMAINS:
        for action in ACTIONS:
            examples = _distinct(seen, EXAMPLES_PER_ROUTE, partial(message, rng, domain, action))
            description = f"{ACTIONS[action][0]} {DOMAINS[domain][0]} and other {domain} things"
            routes.append(
                {"name": f"{domain}_{action}", "description": description, "examples": examples}
            )
    oos = _distinct(seen, OUT_OF_SCOPE_EXAMPLES, lambda: out_of_scope(rng))
    return routes, oos


def _distinct(seen: set[str], n: int, make: Callable[[], str]) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        text = make()
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out
