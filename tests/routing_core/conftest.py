"""Fixtures for the engine's tests: no Django, no database."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from routing_core.scorers import _background
from routing_core.scorers.base import ScorerInfo, Term

PACKS = Path(__file__).resolve().parents[1] / "packs"


class TableScorer:
    """A real scorer whose scores come from a table: message -> {route: score}.

    Router tests use it to pin the tier-2 scores exactly, so each policy branch is reached
    on purpose. Unknown messages score 0 everywhere; `raises` makes it fail like a broken scorer.
    """

    def __init__(
        self,
        table: Mapping[str, Mapping[str, float]],
        *,
        floor: float | None = 0.0,
        categorical: bool = False,
        raises: bool = False,
    ) -> None:
        self.table = table
        self.info = ScorerInfo("table", floor=floor, categorical=categorical, temperature=0.1)
        self.raises = raises

    def score(self, message: str, candidates: Sequence[str]) -> Sequence[float]:
        if self.raises:
            raise RuntimeError("scorer backend down")
        row = self.table.get(message, {})
        return [row.get(c, 0.0) for c in candidates]

    def explain(self, message: str, route: str, limit: int = 5) -> Sequence[Term]:
        return [Term(word, 1.0) for word in message.split()[:limit]]


@pytest.fixture
def support_doc() -> dict[str, Any]:
    """The sample support pack as a plain dict (each test gets its own copy)."""
    return json.loads((PACKS / "support.json").read_text(encoding="utf-8"))


def minimal_doc(**overrides: Any) -> dict[str, Any]:
    """The smallest valid pack document, with overrides."""
    doc: dict[str, Any] = {
        "profile": {"slug": "t", "name": "Test"},
        "routes": [
            {"name": "billing", "description": "invoices and charges"},
            {"name": "shipping", "description": "parcels and delivery"},
            {"name": "human", "action": {"kind": "stuck", "message": "Handing over."}},
        ],
    }
    doc.update(overrides)
    return doc


# Three routes with enough varied examples to calibrate on (every tenth text is held out):
# the lexical model, out-of-scope and studio tests share them.
TOPICS = {
    "billing": ["invoice", "charge", "payment", "refund", "card", "receipt", "bill", "fee"],
    "orders": ["parcel", "delivery", "package", "tracking", "shipment", "order", "courier"],
    "weather": ["rain", "forecast", "sunny", "temperature", "snow", "wind", "storm"],
}
TEMPLATES = [
    "where is my {}",
    "a question about the {}",
    "{} please",
    "help with the {} now",
    "what about the {}",
    "i have a {} problem",
    "tell me more on {}",
    "something odd with {}",
    "the {} again",
    "any news on the {}",
]


@pytest.fixture(scope="module")
def without_background() -> Iterator[None]:
    """The engine as it learns without the built-in background (`scorers/_background.py`):
    for tests that pin how a profile's own texts are learned (counts, calibration, warm
    starts), which the background's extra texts would move. Module-scoped, so that
    module-scoped packs are built without it too."""
    saved = _background.BACKGROUND_BELOW
    _background.BACKGROUND_BELOW = 0
    try:
        yield
    finally:
        _background.BACKGROUND_BELOW = saved


@pytest.fixture
def fold_schedules(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """The schedule of every set of fold models a pack of 100-199 texts learns, in order
    (True: learned fully; docs/decisions.md, "Packs of 100-199 texts"), the real models
    still learned; the process's model cache emptied before and after."""
    from routing_core.scorers import _model, lexical

    learned: list[bool] = []
    real = _model._fold_logits

    def counted(*args: Any, learns_fully: bool) -> Any:
        learned.append(learns_fully)
        return real(*args, learns_fully=learns_fully)

    monkeypatch.setattr(_model, "_fold_logits", counted)
    lexical._LEARNED.clear()
    yield learned
    lexical._LEARNED.clear()
