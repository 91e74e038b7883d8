"""Evaluation: run labelled cases through a Router and measure it. The CLI and the studio share it."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from routing_core.cases import Case
from routing_core.decision import Decision
from routing_core.policy import Policy
from routing_core.router import Router
from routing_core.tier_stats import TierStats, tier_stats

UNMATCHED = "(unmatched)"
MENU = "(menu)"

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class CaseResult:
    """A case with what the router did on it."""

    case: Case
    decision: Decision
    predicted: str
    top: str | None
    elapsed_us: float

    @property
    def expected_label(self) -> str:
        """The expected route, or `(unmatched)`."""
        return self.case.expected if self.case.expected is not None else UNMATCHED

    @property
    def route_ok(self) -> bool:
        """The decision routed where the case expects.

        A menu is never right, except for a case that expects one: "where is my refund" may
        rightly be a menu of tracking and refunds, and such a case names a route the menu must
        offer (docs/decisions.md, "Test cases that expect a menu"). A decisive turn is judged
        by its route as usual; its verdict check says it was no menu.
        """
        d, case = self.decision, self.case
        if d.verdict == "menu" and case.expected_verdict == "menu" and case.expected is not None:
            return case.expected in d.offered
        return self.predicted == self.expected_label

    @property
    def failures(self) -> list[str]:
        """Every expectation the decision missed, as short sentences (empty: passed)."""
        case, d = self.case, self.decision
        misses = []
        if not self.route_ok:
            misses.append(f"route: expected {self.expected_label}, got {self.predicted}")
        if case.expected_verdict and d.verdict != case.expected_verdict:
            misses.append(f"verdict: expected {case.expected_verdict}, got {d.verdict}")
        label = d.triage.label if d.triage else None
        if case.expected_triage and label != case.expected_triage:
            misses.append(f"triage: expected {case.expected_triage}, got {label}")
        misses.extend(case.tool_misses(d.tools.kept))
        return misses

    @property
    def passed(self) -> bool:
        """Every expectation of the case held."""
        return not self.failures


@dataclass(frozen=True, slots=True)
class RouteStats:
    """Precision, recall and F1 of one route, with its support (cases expecting it)."""

    precision: float
    recall: float
    f1: float
    support: int


TurnKind = Literal["first", "stay", "move"]
# Turns shown before and after a wrong one, and the most wrong turns `to_dict` lists.
TURNS_BEFORE, TURNS_AFTER, MAX_WRONG_TURNS = 3, 1, 50


@dataclass(frozen=True, slots=True)
class WrongTurn:
    """A conversation's turn that went wrong, with the turns around it (result indexes).

    `kind` says what the turn should have done: `first` (opened the conversation), `stay`
    (kept the previous turn's expected route) or `move` (changed it).
    """

    conversation: str
    position: int  # 1-based, in the conversation
    kind: TurnKind
    index: int  # in `EvalReport.results`
    around: tuple[int, ...]  # this turn's neighbours in its conversation, itself included


@dataclass(frozen=True, slots=True)
class ConversationReport:
    """How the router held conversations: accuracy by what each turn should have done.

    Over in-scope turns (a turn that expects no route counts in `oos_recall`, not here):
    `turn_accuracy` over all of them, `stay_accuracy` over those whose expected route is
    the previous turn's, `move_accuracy` over those whose expected route changed, and
    `first_accuracy` over the opening turns. Each turn runs from where the previous one
    landed, so one wrong move costs the turns after it too.
    """

    conversations: int
    turns: int
    turn_accuracy: float | None
    first_accuracy: float | None
    stay_accuracy: float | None
    move_accuracy: float | None
    stay_turns: int
    move_turns: int
    wrong: tuple[WrongTurn, ...] = ()
    first_turns: int = 0  # in-scope opening turns: with stay and move, turn accuracy's count

    def to_dict(self, results: Sequence[CaseResult]) -> dict[str, Any]:
        """The JSON form, the wrong turns with their text (the first MAX_WRONG_TURNS)."""
        return {
            "conversations": self.conversations,
            "turns": self.turns,
            "turn_accuracy": _r(self.turn_accuracy),
            "first_accuracy": _r(self.first_accuracy),
            "stay_accuracy": _r(self.stay_accuracy),
            "move_accuracy": _r(self.move_accuracy),
            "stay_turns": self.stay_turns,
            "move_turns": self.move_turns,
            "first_turns": self.first_turns,
            "wrong_turns": len(self.wrong),
            "wrong": [_wrong_dict(w, results) for w in self.wrong[:MAX_WRONG_TURNS]],
        }


def _wrong_dict(wrong: WrongTurn, results: Sequence[CaseResult]) -> dict[str, Any]:
    return {
        "conversation": wrong.conversation,
        "position": wrong.position,
        "kind": wrong.kind,
        "turns": [
            {
                "text": results[i].case.text,
                "expected": results[i].case.expected,
                "predicted": results[i].predicted,
                "from_route": results[i].decision.from_route,
                "by": results[i].decision.by,
                "reason": _reason(results[i].decision),
                "this": i == wrong.index,
            }
            for i in wrong.around
        ],
    }


def _reason(decision: Decision) -> str | None:
    return decision.evidence.reason if decision.evidence is not None else None


@dataclass(frozen=True, slots=True)
class EvalReport:
    """Every figure `routing-core eval` prints (and the studio's suite runs show)."""

    n: int
    pass_rate: float | None
    top1_accuracy: float | None
    in_scope_accuracy: float | None
    oos_recall: float | None
    oos_precision: float | None
    menu_rate: float | None
    per_route: dict[str, RouteStats]
    confusions: list[tuple[str, str, int]]
    latency_us: dict[str, float]
    results: list[CaseResult] = field(repr=False, default_factory=list)
    tiers: dict[str, TierStats] = field(default_factory=dict)
    decided_by: dict[str, int] = field(default_factory=dict)
    # The thresholds the cases were judged with (`evaluate` fills them): the effective floor
    # and where it came from ("policy", "fitted at build", "scorer").
    floor: float | None = None
    floor_source: str | None = None
    near_tie_margin: float | None = None
    # The conversation figures, when some cases are turns of conversations.
    conversations: ConversationReport | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (`routing-core eval --json`)."""
        return {
            "n": self.n,
            "pass_rate": _r(self.pass_rate),
            "top1_accuracy": _r(self.top1_accuracy),
            "in_scope_accuracy": _r(self.in_scope_accuracy),
            "oos_recall": _r(self.oos_recall),
            "oos_precision": _r(self.oos_precision),
            "menu_rate": _r(self.menu_rate),
            "per_route": {
                name: {
                    "precision": _r(s.precision),
                    "recall": _r(s.recall),
                    "f1": _r(s.f1),
                    "support": s.support,
                }
                for name, s in self.per_route.items()
            },
            "confusions": [
                {"expected": e, "predicted": p, "count": c} for e, p, c in self.confusions
            ],
            "latency_us": {k: round(v, 1) for k, v in self.latency_us.items()},
            "tiers": {name: t.to_dict(self.n) for name, t in self.tiers.items()},
            "decided_by": dict(self.decided_by),
            "floor": self.floor,
            "floor_source": self.floor_source,
            "near_tie_margin": self.near_tie_margin,
            "conversations": (
                self.conversations.to_dict(self.results) if self.conversations else None
            ),
        }


def predicted_label(decision: Decision) -> str:
    """What a decision routed to, as an evaluation label: a route, `(menu)` or `(unmatched)`."""
    if decision.verdict in ("move", "stay") and decision.route is not None:
        return decision.route
    return MENU if decision.verdict == "menu" else UNMATCHED


def top_label(decision: Decision) -> str | None:
    """The route ranked first: the rule's route on a rule win, else the scorer's top."""
    if decision.by == "rule":
        return decision.route
    if decision.ranked and decision.ranked[0].score == decision.ranked[0].score:
        return decision.ranked[0].route
    return None


def evaluate(
    router: Router,
    cases: Sequence[Case],
    *,
    policy: Policy | None = None,
    progress: Progress | None = None,
) -> EvalReport:
    """Route every case and measure the outcome.

    Args:
        router: the compiled pack to evaluate.
        cases: labelled turns.
        policy: thresholds to judge with instead of the pack's.
        progress: called with (done, total) as cases finish.
    """
    results = []
    conversation: str | None = None
    incumbent: str | None = None
    for i, case in enumerate(cases, 1):
        if case.conversation is None or case.conversation != conversation:
            incumbent = case.incumbent  # a new conversation (or a lone turn) starts here
        conversation = case.conversation
        result = run_case(router, case, incumbent, policy)
        incumbent = result.decision.route or incumbent
        results.append(result)
        if progress is not None:
            progress(i, len(cases))
    report = summarize(results, router.pack.route_names)
    return replace(report, **judged_by(router, policy or router.pack.policy))


def judged_by(router: Router, policy: Policy) -> dict[str, Any]:
    """The effective floor (the policy's, else the scorer's), its source, and the margin."""
    info = router.scorer.info
    floor: float | None
    if policy.floor is not None:
        floor, source = policy.floor, "policy"
    elif info.details.get("fitted_floor") is not None:
        floor, source = info.floor, "fitted at build"
    else:
        floor, source = info.floor, "scorer"
    return {"floor": floor, "floor_source": source, "near_tie_margin": policy.near_tie_margin}


def run_case(
    router: Router, case: Case, incumbent: str | None, policy: Policy | None = None
) -> CaseResult:
    """Route one case with the given incumbent, timing `route()` alone."""
    started = time.perf_counter_ns()
    decision = router.route(case.text, incumbent, policy=policy)
    elapsed = (time.perf_counter_ns() - started) / 1000
    return CaseResult(case, decision, predicted_label(decision), top_label(decision), elapsed)


def summarize(results: Sequence[CaseResult], routes: Iterable[str]) -> EvalReport:
    """Figures from already-routed cases (the studio stores results and re-summarizes)."""
    in_scope = [r for r in results if r.case.expected is not None]
    oos = [r for r in results if r.case.expected is None]
    said_unmatched = [r for r in results if r.predicted == UNMATCHED]
    latencies = _latencies(results)
    tiers, decided_by = tier_stats(r.decision for r in results)
    return EvalReport(
        n=len(results),
        pass_rate=_share(list(results), lambda r: r.passed),
        top1_accuracy=_share(in_scope, lambda r: r.top == r.case.expected),
        in_scope_accuracy=_share(in_scope, lambda r: r.route_ok),
        oos_recall=_share(oos, lambda r: r.route_ok),
        oos_precision=_share(said_unmatched, lambda r: r.case.expected is None),
        menu_rate=_share(list(results), lambda r: r.predicted == MENU),
        per_route=_per_route(results, routes),
        confusions=_confusions(results),
        latency_us={
            "p50": _percentile(latencies, 50),
            "p99": _percentile(latencies, 99),
            "first": results[0].elapsed_us if results else 0.0,
        },
        results=list(results),
        tiers=tiers,
        decided_by=decided_by,
        conversations=conversation_report(results),
    )


def conversation_report(results: Sequence[CaseResult]) -> ConversationReport | None:
    """The conversation figures over the results that are turns of a conversation (in the
    order they ran); None when none is."""
    threads = _threads(results)
    if not threads:
        return None
    kinds: dict[int, TurnKind] = {}
    for indexes in threads.values():
        kinds[indexes[0]] = "first"
        for before, index in zip(indexes, indexes[1:], strict=False):
            same = results[index].case.expected == results[before].case.expected
            kinds[index] = "stay" if same else "move"
    in_scope = [i for i in kinds if results[i].case.expected is not None]

    def share(kind: TurnKind | None) -> float | None:
        picked = [i for i in in_scope if kind is None or kinds[i] == kind]
        return sum(results[i].route_ok for i in picked) / len(picked) if picked else None

    return ConversationReport(
        conversations=len(threads),
        turns=len(kinds),
        turn_accuracy=share(None),
        first_accuracy=share("first"),
        stay_accuracy=share("stay"),
        move_accuracy=share("move"),
        stay_turns=sum(kinds[i] == "stay" for i in in_scope),
        move_turns=sum(kinds[i] == "move" for i in in_scope),
        first_turns=sum(kinds[i] == "first" for i in in_scope),
        wrong=tuple(_wrong_turns(results, threads, kinds, in_scope)),
    )


def _threads(results: Sequence[CaseResult]) -> dict[str, list[int]]:
    """Each conversation's result indexes in order. A conversation id met again after
    another conversation's turns starts afresh, as `evaluate` runs it (its key gets `#n`)."""
    threads: dict[str, list[int]] = {}
    last: str | None = None
    for index, result in enumerate(results):
        conversation = result.case.conversation
        if conversation is None:
            last = None
            continue
        key = conversation
        if conversation != last:
            n = 1
            while key in threads:
                n += 1
                key = f"{conversation}#{n}"
        else:
            key = next(reversed(threads))
        threads.setdefault(key, []).append(index)
        last = conversation
    return threads


def _wrong_turns(
    results: Sequence[CaseResult],
    threads: dict[str, list[int]],
    kinds: dict[int, TurnKind],
    in_scope: list[int],
) -> list[WrongTurn]:
    scored = set(in_scope)
    wrong = []
    for key, indexes in threads.items():
        for position, index in enumerate(indexes):
            if index in scored and not results[index].route_ok:
                start, end = max(0, position - TURNS_BEFORE), position + TURNS_AFTER + 1
                conversation = results[index].case.conversation or key
                around = tuple(indexes[start:end])
                wrong.append(WrongTurn(conversation, position + 1, kinds[index], index, around))
    return wrong


def _share(items: list[CaseResult], hit: Callable[[CaseResult], bool]) -> float | None:
    if not items:
        return None
    return sum(1 for r in items if hit(r)) / len(items)


def _per_route(results: Sequence[CaseResult], routes: Iterable[str]) -> dict[str, RouteStats]:
    """Each route's precision, recall and F1 over the cases.

    A case that expects a menu and got one offering its route is right *for that route*
    (`route_ok`): it counts as predicted and correct there, not under `(menu)`, where it
    lowered its route's recall though it passed. A wrong menu still counts for no route.
    """
    scored = [(r.expected_label if r.route_ok else r.predicted, r) for r in results]
    expected = Counter(r.expected_label for r in results)
    predicted = Counter(label for label, _ in scored)
    correct = Counter(label for label, r in scored if r.route_ok)
    stats = {}
    for name in routes:
        if not expected[name] and not predicted[name]:
            continue
        precision = correct[name] / predicted[name] if predicted[name] else 0.0
        recall = correct[name] / expected[name] if expected[name] else 0.0
        total = precision + recall
        f1 = 2 * precision * recall / total if total else 0.0
        stats[name] = RouteStats(precision, recall, f1, expected[name])
    return stats


def _confusions(results: Sequence[CaseResult]) -> list[tuple[str, str, int]]:
    pairs = Counter((r.expected_label, r.predicted) for r in results if not r.route_ok)
    return [(e, p, c) for (e, p), c in sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0]))]


def _latencies(results: Sequence[CaseResult]) -> list[float]:
    """Every case's time but the first's, sorted: the first turn pays for cold caches.

    On a small suite that one cold case *is* the p99 (20 cases: the 20th-fastest), so it
    is reported apart as `first` instead of skewing the percentiles.
    """
    timed = results[1:] if len(results) > 1 else results
    return sorted(r.elapsed_us for r in timed)


def _percentile(sorted_values: list[float], pct: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not sorted_values:
        return 0.0
    rank = max(1, -(-len(sorted_values) * pct // 100))
    return sorted_values[int(rank) - 1]


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
