"""The Decision: everything that happened on one turn, and what the agent may act on.

Specified in docs/pack-format.md, The decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from routing_core._numbers import event_number as _num
from routing_core._records import draft_class
from routing_core.policy import Policy, Ranked, Ranking, RunnerUp, VerdictKind
from routing_core.scorers.base import NO_USAGE, Term
from routing_core.scorers.base import Usage as Usage  # re-exported: part of the Decision API
from routing_core.triage import TriageVerdict

By = Literal["rule", "scorer", "continuity", "menu", "decider", "default", "none"]
EvidenceSource = Literal["rule", "scorer", "conversation"]
# How a rule matched: its keywords, its pattern, or every one of its conditions.
EvidenceMatch = Literal["keywords", "regex", "all"]
EVENT_SCHEMA = "route-decision/1"

_NO_DESCRIPTIONS: Mapping[str, str] = MappingProxyType({})
# Sets a slot of a read-only record (whose own `__setattr__` refuses).
_SET = object.__setattr__
_MENU_NOTE = (
    "These scores are a hint from an offline scorer that cannot see the conversation; "
    "choose the route that fits the user's need."
)


class Evidence:
    """Why the deciding tier picked its route: a rule's matched text, or a scorer's top terms.

    `reason` says in plain words why a turn after the first stayed or moved when the
    conversation decided it (source `conversation`: the turn carried no new topic; or a
    scorer's turn whose message alone leaned elsewhere; routing_core.conversation). It
    names routes, never the message's words.

    A scorer's `terms` may be given as `explain`, a function called the first time someone
    reads them (the playground, `--json`, `to_event`): an agent's turn that never looks at
    them does not pay for them (about a sixth of `route()` at CLINC150 size). A failing
    `explain` gives no terms: explanation is a nicety, never a failure. Read-only.
    """

    __slots__ = (
        "_explain",
        "_terms",
        "keyword",
        "match",
        "reason",
        "route",
        "rule",
        "source",
        "span",
        "text",
    )
    _FIELDS = ("source", "route", "rule", "match", "text", "keyword", "span", "terms", "reason")

    source: EvidenceSource
    route: str
    rule: int | None
    match: EvidenceMatch | None
    text: str | None
    keyword: str | None
    span: tuple[int, int] | None
    reason: str | None
    _terms: tuple[Term, ...] | None
    _explain: Callable[[], Sequence[Term]] | None

    def __init__(
        self,
        source: EvidenceSource,
        route: str,
        rule: int | None = None,
        match: EvidenceMatch | None = None,
        text: str | None = None,
        keyword: str | None = None,
        span: tuple[int, int] | None = None,
        terms: Sequence[Term] = (),
        *,
        explain: Callable[[], Sequence[Term]] | None = None,
        reason: str | None = None,
    ) -> None:
        own = type(self)
        # Filled in as a draft (routing_core._records): a class of the same slots, set by
        # plain assignment, then turned back; ten `object.__setattr__` calls cost a turn more.
        # A subclass (whose layout may differ) is filled in the long way.
        draft: Any = self
        if own is Evidence:
            _SET(self, "__class__", _EvidenceDraft)
        else:
            draft = _Slots(self)
        draft.source = source
        draft.route = route
        draft.rule = rule
        draft.match = match
        draft.text = text
        draft.keyword = keyword
        draft.span = span
        draft.reason = reason
        draft._terms = None if explain is not None else tuple(terms)
        draft._explain = explain
        if own is Evidence:
            draft.__class__ = Evidence

    @property
    def terms(self) -> tuple[Term, ...]:
        """The scorer's strongest terms for the route (computed on first reading)."""
        if self._terms is None:
            try:
                terms = tuple(self._explain()) if self._explain is not None else ()
            except Exception:  # noqa: BLE001 - explanation is a nicety, never a failure
                terms = ()
            object.__setattr__(self, "_terms", terms)
            object.__setattr__(self, "_explain", None)
            return terms
        return self._terms

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Evidence is read-only: cannot set {name!r}")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Evidence) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={v!r}" for n, v in zip(self._FIELDS, self._values(), strict=True))
        return f"Evidence({fields})"

    def to_event(self, *, terms: bool = True) -> dict[str, Any]:
        """JSON-safe form; with `terms` False, a scorer's terms are left out uncomputed."""
        return {
            "source": self.source,
            "route": self.route,
            "rule": self.rule,
            "match": self.match,
            "text": self.text,
            "keyword": self.keyword,
            "span": list(self.span) if self.span else None,
            "terms": [
                {"term": t.term, "weight": _num(t.weight), "kind": t.kind}
                for t in (self.terms if terms or self.source != "scorer" else ())
            ],
            "reason": self.reason,
        }


_EvidenceDraft: Any = draft_class(Evidence)


class _Slots:
    """Sets a read-only object's slots by assignment (`object.__setattr__` on each)."""

    __slots__ = ("_target",)
    _target: object

    def __init__(self, target: object) -> None:
        object.__setattr__(self, "_target", target)

    def __setattr__(self, name: str, value: object) -> None:
        _SET(self._target, name, value)


@dataclass(frozen=True, slots=True)
class RouteAction:
    """What the agent does on the chosen route: answer, delegate to an agent, or stop with a message."""

    kind: Literal["answer", "delegate", "stuck"]
    agent: str | None = None
    message: str | None = None

    def to_event(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"kind": self.kind, "agent": self.agent, "message": self.message}


@dataclass(frozen=True, slots=True)
class ToolRecord:
    """The tool-routing decision: which tools are bound, and what narrowing dropped."""

    mode: Literal["off", "shadow", "enforce"]
    bound: tuple[str, ...]
    kept: tuple[str, ...]
    dropped: tuple[str, ...]
    tokens_saved: int

    def to_event(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "mode": self.mode,
            "bound": list(self.bound),
            "kept": list(self.kept),
            "dropped": list(self.dropped),
            "tokens_saved": self.tokens_saved,
        }


@dataclass(frozen=True, slots=True)
class TierRecord:
    """One tier's part in a turn: whether its verdict stood, what it took, what it cost."""

    name: str
    decided: bool
    verdict: VerdictKind | None
    elapsed_us: int
    usage: Usage = NO_USAGE
    error: str | None = None
    note: str | None = None

    def to_event(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "name": self.name,
            "decided": self.decided,
            "verdict": self.verdict,
            "elapsed_us": self.elapsed_us,
            "usage": self.usage.to_event(),
            "error": self.error,
            "note": self.note,
        }


@dataclass(frozen=True, slots=True)
class RegexReport:
    """The turn's regex budget: time the pack's patterns took, and those cut short or skipped.

    `skipped` names them as the pack does (`rules[3]`, `triage.question_pattern`); a skipped
    pattern counted as no match, so a rule in it may have been passed over.
    """

    spent_us: int
    budget_us: int
    skipped: tuple[str, ...] = ()

    def to_event(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "spent_us": self.spent_us,
            "budget_us": self.budget_us,
            "skipped": list(self.skipped),
        }


@dataclass(frozen=True, slots=True)
class ScorerReport:
    """Which scorer judged the turn, with what floor, and whether it failed."""

    name: str
    categorical: bool
    floor: float | None
    error: str | None = None

    def to_event(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "name": self.name,
            "categorical": self.categorical,
            "floor": _num(self.floor),
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class Decision:
    """The full, explainable outcome of routing one turn."""

    route: str | None
    by: By
    verdict: VerdictKind
    from_route: str | None
    offered: tuple[str, ...]
    stay_offered: bool
    ranked: Sequence[Ranked]
    runner_up: RunnerUp | None
    decisive: bool
    evidence: Evidence | None
    action: RouteAction | None
    triage: TriageVerdict | None
    tools: ToolRecord
    usage: Usage
    policy: Policy
    floor: float | None
    scorer: ScorerReport
    elapsed_us: int
    dropped_incumbent: str | None = None
    descriptions: Mapping[str, str] = field(default_factory=lambda: _NO_DESCRIPTIONS)
    pack: tuple[str, int, str] = ("", 0, "")
    tiers: tuple[TierRecord, ...] = ()
    regex: RegexReport | None = None

    @property
    def kept_tools(self) -> tuple[str, ...]:
        """The tools narrowing kept (what the agent binds under `enforce`)."""
        return self.tools.kept

    @property
    def dropped_tools(self) -> tuple[str, ...]:
        """The tools narrowing dropped (under `shadow` they stay bound: what it *would* drop)."""
        return self.tools.dropped

    @property
    def tokens_saved(self) -> int:
        """Estimated prompt tokens saved by the dropped tools."""
        return self.tools.tokens_saved

    @property
    def is_menu_outstanding(self) -> bool:
        """A menu waits for the agent (or the user) to pick."""
        return self.route is None and bool(self.offered)

    def relevance_of(self, route: str) -> float:
        """The softmax relevance of `route` this turn (0 when it is not a candidate)."""
        return next((r.relevance for r in self.ranked if r.route == route), 0.0)

    def admits(self, route: str) -> bool:
        """May the agent switch to `route` on its own this turn?

        `assist`: any route of the pack; `guard`: only a route on an outstanding menu;
        `rails`: none.
        """
        if self.policy.strictness == "rails":
            return False
        if self.policy.strictness == "guard":
            return self.is_menu_outstanding and route in self.offered
        return any(r.route == route for r in self.ranked)

    def menu_text(self) -> str | None:
        """The text an agent puts in its prompt while a menu is outstanding (None otherwise)."""
        if not self.is_menu_outstanding or self.policy.strictness == "rails":
            return None
        described = self.descriptions
        lines = ["The request could belong to several routes:"]
        for name in self.offered:
            share = round(100 * self.relevance_of(name))
            about = described.get(name, "")
            lines.append(f"- {name} (≈{share}%)" + (f": {about}" if about else ""))
        if self.stay_offered and self.from_route:
            lines.append(f"- STAY: keep the current route ({self.from_route})")
        lines.append(_MENU_NOTE)
        return "\n".join(lines)

    def to_event(self, *, scorer_terms: bool = True, ranking: bool = True) -> dict[str, Any]:
        """A JSON-safe dict with a stable schema (`route-decision/1`); floats to 3 decimals.

        `scorer_terms` False leaves a scorer's evidence terms out without computing them:
        they cost more than the turn, and a server sends them only when asked (docs/server.md).
        `ranking` False leaves `ranked` None, for a writer that puts the ranking in itself
        from `Ranking.event_rows_sparse` (a dict per route is most of the event's cost).
        """
        slug, version, checksum = self.pack
        return {
            "schema": EVENT_SCHEMA,
            "pack": {"slug": slug, "version": version, "checksum": checksum},
            "route": self.route,
            "by": self.by,
            "verdict": self.verdict,
            "from_route": self.from_route,
            "dropped_incumbent": self.dropped_incumbent,
            "offered": list(self.offered),
            "stay_offered": self.stay_offered,
            "decisive": self.decisive,
            "ranked": (
                None
                if not ranking
                else self.ranked.event_rows()
                if isinstance(self.ranked, Ranking)
                else [
                    {"route": r.route, "score": _num(r.score), "relevance": _num(r.relevance)}
                    for r in self.ranked
                ]
            ),
            "runner_up": (
                {"route": self.runner_up.route, "gap": _num(self.runner_up.gap)}
                if self.runner_up
                else None
            ),
            "evidence": self.evidence.to_event(terms=scorer_terms) if self.evidence else None,
            "action": self.action.to_event() if self.action else None,
            "triage": self.triage.to_event() if self.triage else None,
            "tools": self.tools.to_event(),
            "usage": self.usage.to_event(),
            "policy": {
                "near_tie_margin": _num(self.policy.near_tie_margin),
                "menu_size": self.policy.menu_size,
                "floor": _num(self.policy.floor),
                "strictness": self.policy.strictness,
                "effective_floor": _num(self.floor),
            },
            "scorer": self.scorer.to_event(),
            "tiers": [t.to_event() for t in self.tiers],
            "regex": self.regex.to_event() if self.regex else None,
            "elapsed_us": self.elapsed_us,
        }
