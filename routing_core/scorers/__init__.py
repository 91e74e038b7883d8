"""Scorers: tier 2's one-score-per-route judges, behind one protocol (DESIGN §4)."""

from __future__ import annotations

from routing_core.pack import Pack
from routing_core.scorers.base import RouteText, Scorer, ScorerInfo, Term

__all__ = ["RouteText", "Scorer", "ScorerInfo", "Term", "build_scorer", "route_texts"]


def route_texts(pack: Pack) -> list[RouteText]:
    """What a scorer may learn from: names, descriptions, examples, keywords (never messages)."""
    return [
        RouteText(r.name, r.description, tuple(r.examples), tuple(r.keywords)) for r in pack.routes
    ]


def build_scorer(pack: Pack) -> Scorer:
    """The scorer the pack's settings name, built from its routes."""
    from routing_core.scorers.lexical import LexicalScorer

    return LexicalScorer.build(route_texts(pack))
