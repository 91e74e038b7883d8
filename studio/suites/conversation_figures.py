"""A run's conversation figures for people: turn, stay and move accuracy in words, and the
turns that went wrong with the conversation around them.

Nothing is measured here: the figures are `routing_core`'s `ConversationReport`, stored with the
run as part of `EvalReport.to_dict()` (what `routing-core eval --json` prints), so the page and
the command line agree. This module only turns them into sentences whose words match the
numbers ("3 of 4 turns that should stay on their route stayed").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from routing_core import MENU, UNMATCHED
from studio.shared.labels import DECIDED_BY


@dataclass(frozen=True)
class Share:
    """One accuracy: the figure, how many turns were right of how many, and that in words."""

    label: str
    value: float | None
    right: int
    total: int
    words: str
    testid: str


@dataclass(frozen=True)
class ShownTurn:
    """A turn of a conversation around a wrong one."""

    number: int  # 1-based in its conversation
    text: str
    expected: str
    routed: str
    why: str
    is_wrong: bool


@dataclass(frozen=True)
class WrongTurnView:
    conversation: str
    position: int
    should: str  # what the turn should have done, in words
    turns: list[ShownTurn]


@dataclass(frozen=True)
class ConversationFigures:
    conversations: int
    turns: int
    shares: list[Share]
    wrong: list[WrongTurnView]
    wrong_total: int

    @property
    def wrong_hidden(self) -> int:
        """Wrong turns the stored figures leave out (they keep the first ones)."""
        return self.wrong_total - len(self.wrong)


def conversation_figures(figures: Mapping[str, Any]) -> ConversationFigures | None:
    """The run's conversation figures in words; None when the suite has no conversation."""
    talk = figures.get("conversations")
    if not isinstance(talk, Mapping):
        return None
    stay, move = int(talk["stay_turns"]), int(talk["move_turns"])
    first = talk.get("first_turns")
    shares = [
        _stay_share(talk["stay_accuracy"], stay),
        _move_share(talk["move_accuracy"], move),
    ]
    if first is not None:  # runs stored before opening turns were counted show no count
        shares.insert(0, _turn_share(talk["turn_accuracy"], int(first) + stay + move))
    return ConversationFigures(
        conversations=int(talk["conversations"]),
        turns=int(talk["turns"]),
        shares=shares,
        wrong=[_wrong_view(w) for w in talk.get("wrong", [])],
        wrong_total=int(talk.get("wrong_turns", 0)),
    )


def _count(value: float | None, total: int) -> int:
    # The stored accuracy has four decimals: exact for any suite under 10,000 turns.
    return round((value or 0.0) * total)


def _turns(n: int) -> str:
    return f"{n} turn" if n == 1 else f"{n} turns"


def _turn_share(value: float | None, total: int) -> Share:
    right = _count(value, total)
    words = f"{right} of {_turns(total)} of conversations routed where expected"
    return Share("Turn accuracy", value, right, total, words, "turn-accuracy")


def _stay_share(value: float | None, total: int) -> Share:
    kept = "that should keep the route kept it"
    return _kind_share("Stay", value, total, kept, "should stay on the route of the turn before")


def _move_share(value: float | None, total: int) -> Share:
    moved = "that should change the route moved to the right one"
    return _kind_share("Move", value, total, moved, "should change the route")


def _kind_share(kind: str, value: float | None, total: int, did: str, none: str) -> Share:
    """A stay or move share: "3 of 4 turns that ...", or "no turn ..." when none should."""
    right = _count(value, total)
    words = f"{right} of {_turns(total)} {did}" if total else f"no turn {none}"
    return Share(f"{kind} accuracy", value, right, total, words, f"{kind.lower()}-accuracy")


def label_words(label: str | None) -> str:
    """An evaluation label as a person says it: a route's name, "a menu" or "no route"."""
    if label is None or label == UNMATCHED:
        return "no route"
    return "a menu" if label == MENU else label


def _wrong_view(wrong: Mapping[str, Any]) -> WrongTurnView:
    turns = [_shown(wrong, i, t) for i, t in enumerate(wrong["turns"])]
    this = next(t for t in turns if t.is_wrong)
    return WrongTurnView(
        conversation=str(wrong["conversation"]),
        position=int(wrong["position"]),
        should=_should(str(wrong["kind"]), this.expected),
        turns=turns,
    )


def _shown(wrong: Mapping[str, Any], index: int, turn: Mapping[str, Any]) -> ShownTurn:
    # `turns` holds the wrong turn's neighbours in order; numbering starts from the wrong one's.
    this_at = next(i for i, t in enumerate(wrong["turns"]) if t["this"])
    reason = turn.get("reason") or DECIDED_BY.get(str(turn.get("by")), str(turn.get("by")))
    return ShownTurn(
        number=int(wrong["position"]) + index - this_at,
        text=str(turn["text"]),
        expected=label_words(turn.get("expected")),
        routed=label_words(turn.get("predicted")),
        why=reason,
        is_wrong=bool(turn["this"]),
    )


def _should(kind: str, expected: str) -> str:
    if kind == "stay":
        return f"should have stayed on {expected}"
    if kind == "move":
        return f"should have moved to {expected}"
    return f"the opening turn should have gone to {expected}"
