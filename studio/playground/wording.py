"""How sure the playground's words sound: one set of thresholds over a decision's own numbers.

The engine compares the near-tie margin with a *gap*, tanh((top − runner-up) / 2)
(docs/pack-format.md, Floors and margins). People read scores, so the page says the same test in
score units: the top's lead over the runner-up against the lead the margin asks for,
2·atanh(margin). The two comparisons are the same test.

"Decisively" is kept for a match that is clear on every count below; docs/product/playground.md
("How sure the words are") lists them for the people who read the page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from routing_core import Decision

# The top route must hold at least this share of the relevance to read as clear: more likely
# than every other route together.
CLEAR_RELEVANCE = 0.5


def needed_lead(margin: float) -> float:
    """The score lead over the runner-up that makes the top decisive: tanh(lead / 2) ≥ margin.

    A margin of 1 or more can never be met (a gap is below 1), so no lead is enough.
    """
    return 2 * math.atanh(margin) if margin < 1 else math.inf


def lead_needed_words(margin: float) -> str:
    """The lead a margin asks for, as the slider's help says it: "a lead of 0.30"."""
    needed = needed_lead(margin)
    return (
        f"a lead of {needed:.2f}" if math.isfinite(needed) else "a lead no score difference reaches"
    )


@dataclass(frozen=True)
class Lead:
    """The top route's lead over the runner-up, in score units, and the lead a decisive top needs."""

    top: str
    top_score: float
    rival: str
    rival_score: float
    margin: float
    needed: float
    is_enough: bool  # the engine's own verdict on it (gap ≥ margin), not recomputed

    @property
    def value(self) -> float:
        return self.top_score - self.rival_score

    def texts(self) -> tuple[str, str]:
        """The lead and the needed lead with enough digits that the comparison printed is the one
        made (0.30 vs 0.30 is shown as 0.301 vs 0.302)."""
        if not math.isfinite(self.needed):
            return _fmt(self.value), "more than any score difference"
        for digits in (2, 3, 4):
            if round(self.value, digits) != round(self.needed, digits):
                break
        return f"{self.value:.{digits}f}", f"{self.needed:.{digits}f}"

    @property
    def sentence(self) -> str:
        """ "0.25 ahead, less than the 0.30 lead the near-tie margin 0.15 asks for"."""
        lead, needed = self.texts()
        compare = "at least" if self.is_enough else "less than"
        return f"{lead} ahead, {compare} the {needed} lead the near-tie margin {self.margin:.2f} asks for"


def lead_of(d: Decision) -> Lead | None:
    """The top's lead over the runner-up (None without a runner-up, or on unscored turns)."""
    rival = d.runner_up
    if rival is None or not d.ranked or not math.isfinite(d.ranked[0].score):
        return None
    top = d.ranked[0]
    rival_score = next((r.score for r in d.ranked if r.route == rival.route), math.nan)
    if not math.isfinite(rival_score):
        return None
    margin = d.policy.near_tie_margin
    return Lead(
        top.route,
        top.score,
        rival.route,
        rival_score,
        margin,
        needed_lead(margin),
        rival.gap >= margin,
    )


@dataclass(frozen=True)
class Strength:
    """Why a scorer's match is not clear, if it is not: each count is one of the page's words."""

    is_lone: bool  # no other route above the floor: nothing to be decisive against
    above_floor: float | None  # how far the top is above the floor, when that is too little
    relevance: float | None  # the top's relevance, when it is below CLEAR_RELEVANCE

    @property
    def is_clear(self) -> bool:
        return not self.is_lone and self.above_floor is None and self.relevance is None

    def doubts(self, floor: float | None) -> list[str]:
        """The weak counts in words ("only 0.09 above the floor 0.10")."""
        words = []
        if self.above_floor is not None and floor is not None:
            words.append(f"only {_fmt(self.above_floor)} above the floor {_fmt(floor)}")
        if self.relevance is not None:
            words.append(f"only {100 * self.relevance:.1f}% of the relevance")
        return words


def strength(d: Decision) -> Strength:
    """How clear the top's match is, from the decision's own numbers.

    Weak when it is alone above the floor, when it is closer to the floor than the lead a
    decisive top needs over a runner-up (the floor is the "no route" it must beat), or when it
    holds less than CLEAR_RELEVANCE of the relevance.
    """
    top = d.ranked[0] if d.ranked else None
    if top is None or not math.isfinite(top.score):
        return Strength(is_lone=True, above_floor=None, relevance=None)
    above = None if d.floor is None else top.score - d.floor
    return Strength(
        is_lone=d.runner_up is None,
        above_floor=above
        if above is not None and above < needed_lead(d.policy.near_tie_margin)
        else None,
        relevance=top.relevance if top.relevance < CLEAR_RELEVANCE else None,
    )


def _fmt(value: float) -> str:
    return f"{value:.2f}" if math.isfinite(value) else str(value)
