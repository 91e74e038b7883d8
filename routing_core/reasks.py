"""Re-asks: a user's next turn that says the same again, or corrects the last ("no, I meant …").

A re-ask is the cheapest outcome signal production gives: the route chosen for the turn
before did not serve the user. It is read from two consecutive messages of one conversation
only, so the studio can count it from reported turns (per route and per pack revision) and a
rollout can be halted when the candidate's re-ask rate rises (docs/pack-format.md, "Rollouts over HTTP").
"""

from __future__ import annotations

import re

from routing_core.text import words

# Openings of a correction, on the message's lower-cased words joined by single spaces.
_CORRECTIONS = re.compile(
    r"^(no+|nope|not that|wrong|that s not|thats not|that is not|not what i|i meant|i mean"
    r"|i said|i asked|i was asking|you misunderstood|no no)\b"
)
SAME_AGAIN = 0.6  # shared words over all words of the two turns (Jaccard) to count as a repeat


def is_reask(previous: str, message: str) -> bool:
    """True when `message`, the next turn after `previous`, repeats or corrects it.

    Args:
        previous: the user's message on the turn before (redacted text works as well).
        message: the user's message on this turn.
    """
    before, now = words(previous), words(message)
    if not now:
        return False
    if _CORRECTIONS.match(" ".join(now)):
        return True
    if len(before) < 2 or len(now) < 2:
        return before == now and bool(before)
    shared = set(before) & set(now)
    return len(shared) / len(set(before) | set(now)) >= SAME_AGAIN
