"""docs/pack-format.md's Triage and Verdicts sections, implemented from the text alone, agree
with the engine on thousands of seeded random inputs: the specification says what the code
does, not what it once meant to."""

from __future__ import annotations

import math
import random
import re

from routing_core.policy import Policy, decide
from routing_core.text import compile_keywords
from routing_core.triage import (
    DEFAULT_ACTION_VERBS,
    DEFAULT_KNOWLEDGE_VERBS,
    DEFAULT_QUESTION_PATTERN,
    IntentClassifier,
)

TOOLS = {"refund_order": ["refund", "money back"], "delete_file": ["delete"], "track": ["where is"]}
VOCABULARY = [
    *sorted(DEFAULT_ACTION_VERBS)[:30],
    *sorted(DEFAULT_KNOWLEDGE_VERBS)[:20],
    *"the my order parcel please refund money back where is delete file ? ! _".split(),
]


def _lane(tokens: list[str], lexicon: frozenset[str], bonus: bool) -> tuple[float, int]:
    """A lane's score and its number of signals (Triage, step 4 and 5)."""
    hits = len(dict.fromkeys(t for t in tokens if t in lexicon))
    first = tokens[0] in lexicon
    score = (0.4 + 0.1 * min(hits - 1, 3) if hits else 0.0) + (0.2 if first else 0.0)
    score += 0.3 if bonus else 0.0
    return min(score, 1.2), (hits > 0) + first + bonus


def spec_triage(message: str, floor: float = 0.55, min_signals: int = 2) -> tuple[str, float]:
    if not message.strip():
        return "ambiguous", 0.0
    tokens = re.findall(r"[^\W_]+", message.lower())
    if not tokens:
        return "ambiguous", 0.0
    tools = [n for n, keywords in TOOLS.items() if compile_keywords(keywords).search(message)]
    question = re.search(DEFAULT_QUESTION_PATTERN, message[:2000]) is not None
    a, signals = _lane(tokens, DEFAULT_ACTION_VERBS, bool(tools))
    k, _ = _lane(tokens, DEFAULT_KNOWLEDGE_VERBS, question)
    if a == k == 0:
        return "ambiguous", 0.0
    label = "ambiguous"
    if a > k and signals >= min_signals:
        label = "action"
    elif k > a:
        label = "knowledge"
    confidence = min(1.0, max(a, k))
    return ("ambiguous" if confidence < floor else label), confidence


def test_triage_is_as_specified() -> None:
    rng = random.Random(1)
    classifier = IntentClassifier(tool_keywords=TOOLS)
    for _ in range(3000):
        message = " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(0, 7)))
        verdict = classifier.classify(message)
        label, confidence = spec_triage(message)
        assert (verdict.label, verdict.confidence) == (label, confidence), message


def spec_verdict(
    names: list[str],
    scores: list[float],
    incumbent: str | None,
    policy: Policy,
    scorer_floor: float | None,
    categorical: bool,
) -> tuple[str, str | None, tuple[str, ...]]:
    """Floors and margins, then Verdicts, steps 1-4."""
    floor = policy.floor if policy.floor is not None else scorer_floor

    def rank(i: int) -> tuple[float, int]:
        return (-scores[i] if math.isfinite(scores[i]) else math.inf, i)

    order = sorted(range(len(names)), key=rank)
    alive = [i for i in order if math.isfinite(scores[i]) and (floor is None or scores[i] > floor)]
    if not alive:
        return "unmatched", None, ()
    top = alive[0]

    def gap(i: int) -> float:
        return math.tanh((scores[top] - scores[i]) / 2)

    if categorical or len(alive) == 1 or gap(alive[1]) >= policy.near_tie_margin:
        return ("stay" if names[top] == incumbent else "move"), names[top], ()
    living = [names[i] for i in alive]
    if incumbent is not None and (incumbent in living or incumbent not in names):
        return "stay", incumbent, ()
    near = [names[i] for i in alive if gap(i) < policy.near_tie_margin]
    return "menu", None, tuple(near[: max(2, policy.menu_size)])


def _score(rng: random.Random) -> float:
    if rng.random() < 0.1:
        return rng.choice([math.nan, -math.inf, math.inf, rng.random()])
    return round(rng.random(), rng.choice([1, 2, 6]))  # rounding makes exact ties


def test_verdicts_are_as_specified() -> None:
    rng = random.Random(3)
    for _ in range(5000):
        names = [f"r{i}" for i in range(rng.randint(1, 6))]
        scores = [_score(rng) for _ in names]
        policy = Policy(
            near_tie_margin=rng.choice([0.0, 0.05, 0.15, 0.5]),
            menu_size=rng.randint(1, 4),
            floor=rng.choice([None, None, 0.2, 0.5]),
        )
        incumbent = rng.choice([None, "r0", "r1", "elsewhere"])
        scorer_floor = rng.choice([None, 0.0, 0.3])
        categorical = rng.random() < 0.1
        verdict = decide(
            list(zip(names, scores, strict=True)), incumbent, policy, scorer_floor, categorical
        )
        expected = spec_verdict(names, scores, incumbent, policy, scorer_floor, categorical)
        assert (verdict.kind, verdict.to, verdict.offered) == expected, (scores, incumbent, policy)
