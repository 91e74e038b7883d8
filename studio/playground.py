"""The playground's engine room: a router per profile revision, and one turn explained.

The router never waits for training (studio/jobs/training): it scores the draft with the model
of exactly its route texts when that is ready, else with the newest model that finished while
the new one trains on the queue (`Compiled.scoring` says which, for the page to say so).

The cache is per process and keyed by what the database says the draft is (`draft_revision`,
bumped by every edit in `studio.services`), never by in-memory state: several studio processes
behind one database each notice an edit on their next request. The key also holds the profile's
`created_at`, so a new profile that reuses a deleted one's primary key never gets its router.

Everything shown about a decision is read from the `routing_core` Decision; this module only
arranges it for people (bar widths, the one-sentence why).
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from routing_core import Decision, Pack, PackError, Router
from routing_core.policy import Ranked
from routing_core.scorers.lexical import LexicalScorer
from studio.jobs.training import Scoring, scoring
from studio.models import ACTIVE, Profile, TrainedModel

MAX_CACHED_PROFILES = 16
# With many routes the table shows the leaders and folds the rest behind a disclosure.
SHOWN_ROWS = 10

_Key = tuple[int, str, int]
_lock = threading.Lock()


class ScorerUnavailable(PackError):
    """The draft is a valid pack, but this process cannot build its scorer (a missing extra)."""


class ModelPending(Exception):
    """The model of exactly this draft is still training (its row has the progress)."""

    def __init__(self, compiled: Compiled) -> None:
        super().__init__("the model of this draft is still training")
        self.compiled = compiled


@dataclass(frozen=True)
class Compiled:
    """The draft's router (None: no model to score with yet) and where its scores come from."""

    router: Router | None
    scoring: Scoring

    @property
    def training(self) -> TrainedModel | None:
        return self.scoring.pending


_cache: OrderedDict[int, tuple[_Key, Compiled]] = OrderedDict()
_building: dict[int, threading.Lock] = {}


def playground_router(profile: Profile) -> Compiled:
    """The router for the profile's draft, at once: the exact model's, else an older one's.

    Raises:
        PackError: the draft is not a valid pack.
        ScorerUnavailable: it is, but its scorer needs an optional extra this studio lacks.
    """
    key = (profile.pk, profile.created_at.isoformat(), profile.draft_revision)
    compiled = _fresh(key)
    if compiled is not None:
        return compiled
    with _lock:
        building = _building.setdefault(profile.pk, threading.Lock())
    with building:  # one build per profile at a time: every keystroke would start its own
        compiled = _fresh(key)
        if compiled is None:
            now = scoring(profile)
            compiled = Compiled(_router(now.pack) if now.pack is not None else None, now)
            with _lock:
                _cache[profile.pk] = (key, compiled)
                _cache.move_to_end(profile.pk)
                while len(_cache) > MAX_CACHED_PROFILES:
                    _cache.popitem(last=False)
    return compiled


def compiled_router(profile: Profile) -> Router:
    """The router with the model of exactly the draft (lint, tuning: figures must be exact).

    Raises:
        PackError: the draft is not a valid pack.
        ModelPending: that model is still training (it has been queued).
    """
    compiled = playground_router(profile)
    if compiled.router is None or not compiled.scoring.exact:
        raise ModelPending(compiled)
    return compiled.router


def _router(pack: Pack) -> Router:
    try:
        return Router(pack)
    except PackError as exc:  # load_pack accepted the pack: only its scorer can fail here
        raise ScorerUnavailable(exc.errors) from exc


def _fresh(key: _Key) -> Compiled | None:
    """The cached router for this revision, unless the model it waited for has finished since."""
    with _lock:
        hit = _cache.get(key[0])
        if hit is None or hit[0] != key:
            return None
        _cache.move_to_end(key[0])
    compiled = hit[1]
    pending = compiled.scoring.pending
    if pending is None:
        return compiled
    now = TrainedModel.objects.defer("source_json", "pack_json").filter(pk=pending.pk).first()
    if now is None or now.status not in ACTIVE:
        return None  # finished (or failed, or pruned): build again
    return replace(compiled, scoring=replace(compiled.scoring, pending=now))


def clear_cache() -> None:
    """Forget every compiled router (tests and benchmarks measure a cold start with it)."""
    with _lock:
        _cache.clear()


def route_turn(
    profile: Profile, message: str, incumbent: str | None, overrides: dict[str, Any]
) -> Outcome:
    """Route one message on the profile's draft, with policy overrides that are not saved.

    Raises:
        PackError: the draft is invalid, or an override is out of range (`policy.<field>`).
    """
    router = playground_router(profile).router
    if router is None:
        raise ModelPending(playground_router(profile))
    policy = router.policy_with(**overrides) if overrides else None
    decision = router.route(message, incumbent or None, policy=policy)
    return Outcome(
        decision, message, router.scorer.info.temperature, _unscored(router, decision, message)
    )


def _unscored(router: Router, decision: Decision, message: str) -> str | None:
    """Why an unmatched turn's message was not scored at all, when the scorer can say."""
    scorer = router.scorer
    if decision.verdict != "unmatched" or not isinstance(scorer, LexicalScorer):
        return None
    return scorer.unscored_reason(message)


@dataclass(frozen=True)
class ScoreRow:
    """One route in the ranking, ready to draw (numbers preformatted: 150 rows render fast)."""

    rank: int
    route: str
    score: float
    relevance: float
    is_alive: bool
    is_offered: bool
    is_chosen: bool
    is_current: bool

    @property
    def score_text(self) -> str:
        return _fmt(self.score)

    @property
    def score_attr(self) -> str:
        return f"{self.score:.3f}"

    @property
    def relevance_attr(self) -> str:
        return f"{self.relevance:.3f}"

    @property
    def percent(self) -> str:
        return f"{100 * self.relevance:.1f}"

    @property
    def css(self) -> str:
        flags = {
            "below-floor": not self.is_alive,
            "offered": self.is_offered,
            "chosen": self.is_chosen,
        }
        return " ".join(["score-row", *(name for name, on in flags.items() if on)])


@dataclass(frozen=True)
class Outcome:
    """A decision and everything the playground shows about it."""

    decision: Decision
    message: str
    temperature: float
    unscored: str | None = None  # why the scorer left the message unscored, if it did

    @cached_property
    def why(self) -> str:
        return explain(self.decision)

    @cached_property
    def rows(self) -> list[ScoreRow]:
        d, floor = self.decision, self.decision.floor
        return [
            ScoreRow(
                rank,
                r.route,
                r.score,
                r.relevance,
                math.isfinite(r.score) and (floor is None or r.score > floor),
                r.route in d.offered,
                r.route == d.route,
                r.route == d.from_route,
            )
            for rank, r in enumerate(d.ranked, start=1)
        ]

    def shown_rows(self, show_all: bool = False) -> list[ScoreRow]:
        """Every route, or on a large profile the leaders (and any route the turn involves)."""
        if show_all or len(self.rows) <= SHOWN_ROWS + 2:
            return self.rows
        return [r for r in self.rows if r.rank <= SHOWN_ROWS or r.is_offered or r.is_current]

    @cached_property
    def floor_percent(self) -> str | None:
        """Where a route scoring exactly the floor would sit on the relevance scale."""
        floor = self.decision.floor
        return None if floor is None else f"{self._percent_at(floor):.1f}"

    @cached_property
    def band(self) -> tuple[str, str] | None:
        """The near-tie band on the relevance scale: where a rival of the top route ties it."""
        top = self._top
        margin = self.decision.policy.near_tie_margin
        if top is None or margin <= 0:
            return None
        # gap(top, s) = tanh((top - s) / 2) < margin  <=>  s > top - 2 * atanh(margin)
        reach = math.inf if margin >= 1 else 2 * math.atanh(margin)
        low = self._percent_at(top.score - reach)
        high = round(100 * top.relevance, 1)
        return (f"{low:.1f}", f"{max(high - low, 0.0):.1f}")  # x and width of the band

    @cached_property
    def evidence_parts(self) -> tuple[str, str, str] | None:
        """The message split around a rule's matched span (escaped by the template)."""
        evidence = self.decision.evidence
        if evidence is None or evidence.span is None:
            return None
        start, end = evidence.span
        text = self.message
        return (text[:start], text[start:end], text[end:])

    @property
    def signals(self) -> list[str]:
        """The triage signals that fired, each once (both lanes may name e.g. "verb")."""
        triage = self.decision.triage
        return list(dict.fromkeys(triage.signals)) if triage else []

    @property
    def expected_route(self) -> str:
        """What a test case saved from this turn expects by default (blank: no route)."""
        d = self.decision
        return (d.route or "") if d.verdict in ("move", "stay") else ""

    @cached_property
    def event_json(self) -> str:
        return json.dumps(self.decision.to_event(), indent=2, ensure_ascii=False)

    @property
    def _top(self) -> Ranked | None:
        ranked = self.decision.ranked
        return ranked[0] if ranked and math.isfinite(ranked[0].score) else None

    def _percent_at(self, score: float) -> float:
        # relevance = softmax(score / T), so relative to the top: exp((score - top) / T).
        top = self._top
        if top is None or not math.isfinite(score):
            return 0.0
        exponent = max((score - top.score) / max(self.temperature, 1e-9), -700.0)
        return round(100 * top.relevance * math.exp(min(exponent, 0.0)), 1)


def explain(d: Decision) -> str:
    """One sentence a product person can read: why the turn went where it went."""
    if d.by == "rule" and d.evidence is not None:
        return _why_rule(d)
    if d.scorer.error:
        outcome = f"stays on {d.route}" if d.route else "offers every route"
        return f"the {d.scorer.name} scorer failed ({d.scorer.error}), so the turn {outcome}"
    if d.verdict == "unmatched":
        return _why_unmatched(d)
    if d.decisive and d.route:
        return _why_decisive(d)
    return _why_near_tie(d)


def _why_rule(d: Decision) -> str:
    e = d.evidence
    assert e is not None
    number = "" if e.rule is None else f" {e.rule + 1}"
    if e.keyword:
        hit = f"the keyword “{e.keyword}”"
    elif e.text:
        hit = f"“{e.text}”"
    else:
        hit = "the message"
    verb = "stays on" if d.verdict == "stay" else "goes to"
    return f"rule{number} ({e.match}) matched {hit}, so the turn {verb} {d.route}; rules decide before the scorer"


def _why_decisive(d: Decision) -> str:
    lead = "decisively stays on" if d.verdict == "stay" else "decisively matched"
    if d.scorer.categorical:
        return f"{lead} {d.route}: the {d.scorer.name} scorer picked it"
    score = _score_of(d, d.route)
    if d.runner_up is None:
        floor = "the floor" if d.floor is None else f"the floor {_fmt(d.floor)}"
        return f"{lead} {d.route}: {_fmt(score)}, the only route above {floor}"
    rival = d.runner_up
    gap, margin = _pair(rival.gap, d.policy.near_tie_margin)
    return (
        f"{lead} {d.route}: {_fmt(score)} vs {_fmt(_score_of(d, rival.route))} for {rival.route}, "
        f"gap {gap} ≥ margin {margin}"
    )


def _why_near_tie(d: Decision) -> str:
    top = d.ranked[0]
    rival = d.runner_up
    if rival is None:
        return f"{d.verdict} on {top.route}"
    gap, margin = _pair(rival.gap, d.policy.near_tie_margin)
    tie = (
        f"near-tie between {top.route} ({_fmt(top.score)}) and {rival.route} "
        f"({_fmt(_score_of(d, rival.route))}), gap {gap} < margin {margin}"
    )
    if d.verdict == "stay" and d.route:
        return f"{tie}: stays on the current route {d.route}"
    if d.offered:
        stay = " or STAY" if d.stay_offered else ""
        return f"{tie}: offers a menu of {', '.join(d.offered)}{stay}"
    return f"{tie}: under rails no menu is offered and the turn is not routed"


def _why_unmatched(d: Decision) -> str:
    floor = "the floor" if d.floor is None else f"the floor {_fmt(d.floor)}"
    best = d.ranked[0] if d.ranked else None
    seen = f" (best: {best.route} {_fmt(best.score)})" if best and _is_nonzero(best.score) else ""
    head = f"no route scored above {floor}{seen}"
    if d.by == "default":
        return f"{head}: falls back to the default route {d.route}"
    if d.offered:
        return f"{head} and there is no default route: offers every route"
    return f"{head}: the turn is not routed"


def _is_nonzero(score: float) -> bool:
    return math.isfinite(score) and round(score, 2) != 0


def _score_of(d: Decision, route: str | None) -> float:
    return next((r.score for r in d.ranked if r.route == route), math.nan)


def _pair(gap: float, margin: float) -> tuple[str, str]:
    """Gap and margin with enough digits that the comparison printed is the one made."""
    digits = 2 if round(gap, 2) != round(margin, 2) else 3
    return f"{gap:.{digits}f}", f"{margin:.{digits}f}"


def _fmt(value: float) -> str:
    return f"{value:.2f}" if math.isfinite(value) else str(value)
