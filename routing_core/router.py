"""The Router: one compiled pack, one `route()` call per turn, one full Decision back.

Specified in docs/pack-format.md.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from routing_core._records import builder, draft_class, seal
from routing_core.cascade import Cascade, Outcome
from routing_core.codec import PackSource, load_pack
from routing_core.conversation import carries_no_topic, no_topic_reason, prior_text
from routing_core.decision import (
    By,
    Decision,
    Evidence,
    RegexReport,
    RouteAction,
    ScorerReport,
    TierRecord,
    ToolRecord,
)
from routing_core.errors import PackError
from routing_core.limits import MAX_MESSAGE_CHARS
from routing_core.pack import Pack, Route
from routing_core.policy import Policy, Ranking, Verdict, VerdictKind, softmax
from routing_core.rules import RuleSet
from routing_core.scorers import Tier, build_decider, build_tiers
from routing_core.scorers.base import NO_USAGE, Scorer, ScorerInfo, Usage
from routing_core.scorers.llm import STAY, LlmDecider
from routing_core.text import RegexBudget
from routing_core.tools import estimate_dropped_tokens, narrow_tools
from routing_core.triage import IntentClassifier, TriageVerdict

# A Decision's fields set plainly, then sealed into the Decision (routing_core._records).
_DecisionDraft: Any = draft_class(Decision)
# `RegexReport(...)` as a draft, sealed (routing_core._records).
_regex_report_of: Callable[..., RegexReport] = builder(RegexReport)

# Longer messages are clipped before any tier looks at them (MAX_MESSAGE_CHARS, from
# routing_core.limits): routing cost stays bounded whatever an upstream system sends, and no
# real turn needs more to be routed.
EXPLAIN_TERMS = 5


class Router:
    """Routes turns for one pack. Compiles everything at construction; safe across threads.

    A process that loads a large pack once and then serves turns may call `gc.freeze()`
    after making its routers: Python's collector then never walks the loaded pack again (a
    full collection over a 2,000-route pack's objects took ~56 ms inside a turn, about once
    in thousands of turns; docs/lab/benchmarks.md). The library does not call it: it is the
    whole process's setting.

    Args:
        pack: a `Pack`, or anything `load_pack` accepts.
        scorer: a scorer to use instead of the tiers the pack's settings build.
        decider: a tier-3 menu decider instead of the one the pack's settings build.

    Raises:
        PackError: the pack is invalid, or names a scorer whose optional extra is missing.
    """

    def __init__(
        self,
        pack: Pack | PackSource,
        *,
        scorer: Scorer | None = None,
        decider: LlmDecider | None = None,
    ) -> None:
        self.pack = load_pack(pack)
        self._names = self.pack.route_names
        tiers = (Tier(scorer),) if scorer is not None else _built_tiers(self.pack)
        self.cascade = Cascade(tiers, self._names, _prior_texts(self.pack))
        self.scorer: Scorer = tiers[0].scorer  # the first (cheapest) tier
        self.decider = decider if decider is not None else build_decider(self.pack)
        self._routes = {r.name: r for r in self.pack.routes}
        self._actions = {r.name: _action(r) for r in self.pack.routes}
        self._rules = RuleSet(self.pack.rules)
        self._triage = _classifier(self.pack)
        self._always = tuple(t.name for t in self.pack.tools if t.always_include)
        self._tool_names = tuple(t.name for t in self.pack.tools)
        # A pack without tools records the same (empty) narrowing on every turn: made once.
        self._no_tools = ToolRecord(self.pack.triage.mode, (), (), (), 0)
        self._descriptions = MappingProxyType({r.name: r.description for r in self.pack.routes})
        self._identity = (self.pack.profile.slug, self.pack.version, self.pack.checksum)
        # id(ScorerInfo) -> (that info, its report without an error): see `_report`.
        self._reports: dict[int, tuple[ScorerInfo, ScorerReport]] = {}

    def policy_with(self, **overrides: Any) -> Policy:
        """The pack's policy with some values replaced, validated.

        Raises:
            PackError: when an override is out of range (path `policy.<field>`).
        """
        from pydantic import ValidationError

        from routing_core.codec import format_location

        values = {**self.pack.policy.model_dump(), **overrides}
        try:
            return Policy.model_validate(values)
        except ValidationError as exc:
            raise PackError(
                ("policy." + format_location(e["loc"]), e["msg"]) for e in exc.errors()
            ) from None

    def route(
        self, message: Any, incumbent: str | None = None, *, policy: Policy | None = None
    ) -> Decision:
        """Route one turn.

        Args:
            message: the user's text. Anything else is coerced; nothing raises.
            incumbent: the route the conversation is in. One the pack lacks is dropped
                (and recorded in `dropped_incumbent`), not an error.
            policy: thresholds for this call instead of the pack's.

        Returns:
            The decision, with every tier's evidence.
        """
        started = time.perf_counter_ns()
        known = incumbent if isinstance(incumbent, str) and incumbent in self._routes else None
        turn = _Turn(
            text=_as_text(message)[:MAX_MESSAGE_CHARS],
            incumbent=known,
            dropped=None if incumbent is None or known is not None else _printable(incumbent),
            policy=policy or self.pack.policy,
            started=started,
        )
        try:
            return self._route(turn)
        except Exception as exc:  # noqa: BLE001 - an agent must never crash on routing
            turn.error = f"internal error: {type(exc).__name__}: {exc}"[:300]
            turn.triage = turn.verdict = None
            if turn.incumbent:
                return self._decision(turn, turn.incumbent, "continuity", "stay")
            return self._decision(turn, None, "none", "unmatched")

    def _route(self, turn: _Turn) -> Decision:
        # Rules before triage: they decide, so they have the first call on the regex budget.
        hit = self._rules.first_match(turn.text, turn.regex)
        turn.triage = self._triage.classify(turn.text, budget=turn.regex) if self._triage else None
        quiet = hit is None and self._carries_no_topic(turn)
        self._score(turn, first_only=hit is not None or quiet)
        if hit is not None:
            kind: VerdictKind = "stay" if hit.route == turn.incumbent else "move"
            return self._decision(turn, hit.route, "rule", kind, decisive=True, evidence=hit)
        if quiet and turn.incumbent is not None:
            reason = no_topic_reason(turn.incumbent)
            evidence = Evidence(source="conversation", route=turn.incumbent, reason=reason)
            return self._decision(turn, turn.incumbent, "continuity", "stay", evidence=evidence)
        if turn.verdict is None:
            return self._scorer_failed(turn)
        return self._judge(turn, turn.verdict)

    def _carries_no_topic(self, turn: _Turn) -> bool:
        """A turn after the first that only acknowledges, confirms or answers: it stays by
        rule (routing_core.conversation), after the pack's own rules had their say."""
        if turn.incumbent is None or not turn.policy.follows_conversation:
            return False
        return carries_no_topic(turn.text)

    def _score(self, turn: _Turn, first_only: bool) -> None:
        outcome = self.cascade.run(turn.text, turn.incumbent, turn.policy, first_only=first_only)
        turn.outcome, turn.verdict, turn.error = outcome, outcome.verdict, outcome.error
        turn.policy = outcome.policy
        turn.records = list(outcome.records)

    def _judge(self, turn: _Turn, verdict: Verdict) -> Decision:
        if verdict.kind == "menu" and self.decider is not None:
            resolved = self._resolve(turn, verdict)
            if resolved is not None:
                return resolved
        rails = turn.policy.strictness == "rails"
        route, offered = verdict.to, verdict.offered
        by: By
        if verdict.kind in ("move", "stay"):
            by = "scorer" if verdict.decisive else "continuity"
        elif verdict.kind == "menu":
            by = "none" if rails else "menu"
        else:
            return self._unmatched(turn, verdict.kind)
        evidence = self._explain(turn, route, verdict) if by == "scorer" and route else None
        if evidence is None and route is not None and verdict.message_top is not None:
            evidence = Evidence("conversation", route, reason=_prior_reason(verdict, route))
        return self._decision(
            turn, route, by, verdict.kind, () if rails else offered, verdict.decisive, evidence
        )

    def _unmatched(self, turn: _Turn, kind: VerdictKind) -> Decision:
        """Nothing fits: the default route when the pack has one, else the full menu."""
        if self.pack.default_route is not None:
            return self._decision(turn, self.pack.default_route, "default", kind)
        if turn.policy.strictness == "rails":
            return self._decision(turn, None, "none", kind)
        return self._decision(turn, None, "menu", kind, offered=self._names)

    def _resolve(self, turn: _Turn, verdict: Verdict) -> Decision | None:
        """Tier 3: the decider picks among the menu, `stay` and `none`; None = the menu stands."""
        assert self.decider is not None
        started = time.perf_counter_ns()
        try:
            pick = self.decider.resolve(turn.text, verdict.offered, turn.incumbent)
        except Exception as exc:  # noqa: BLE001 - a failing decider leaves the menu standing
            usage = getattr(exc, "usage", NO_USAGE)
            message = f"{type(exc).__name__}: {exc}"[:300]
            turn.records.append(TierRecord("decider", False, None, _since(started), usage, message))
            return None
        if pick.choice is None:
            note = f"no pick: {pick.answer[:80]!r}"
            turn.records.append(
                TierRecord("decider", False, None, _since(started), pick.usage, None, note)
            )
            return None
        route, kind = _decided_route(pick.choice, verdict.offered, turn.incumbent)
        # The decider, not the scoring tier, settled this turn.
        turn.records = [dataclasses.replace(r, decided=False) for r in turn.records]
        turn.records.append(TierRecord("decider", True, kind, _since(started), pick.usage))
        if route is None:
            return self._unmatched(turn, "unmatched")
        return self._decision(turn, route, "decider", kind)

    def _scorer_failed(self, turn: _Turn) -> Decision:
        """A failed scorer: mid-conversation stay put; cold, offer every route."""
        if turn.incumbent is not None:
            return self._decision(turn, turn.incumbent, "continuity", "stay")
        if turn.policy.strictness == "rails":
            return self._decision(turn, None, "none", "menu")
        return self._decision(turn, None, "menu", "menu", offered=self._names)

    def _explain(self, turn: _Turn, route: str, verdict: Verdict) -> Evidence:
        """The scorer's evidence, its terms computed only when someone reads them; with the
        conversation's reason when the incumbent's prior changed the message's top."""
        scorer = turn.outcome.tier.scorer if turn.outcome else self.scorer
        text = turn.text
        return Evidence(
            source="scorer",
            route=route,
            explain=lambda: scorer.explain(text, route, EXPLAIN_TERMS),
            reason=_prior_reason(verdict, route) if verdict.message_top else None,
        )

    def _decision(
        self,
        turn: _Turn,
        route: str | None,
        by: By,
        kind: VerdictKind,
        offered: Sequence[str] = (),
        decisive: bool = False,
        evidence: Evidence | None = None,
    ) -> Decision:
        info = turn.outcome.tier.scorer.info if turn.outcome else self.scorer.info
        verdict, policy = turn.verdict, turn.policy
        # Filled in as a draft and sealed (routing_core._records): the same Decision as
        # the constructor's, without its 23 `object.__setattr__` calls.
        d = _DecisionDraft()
        d.route = route
        d.by = by
        d.verdict = kind
        d.from_route = turn.incumbent
        d.offered = tuple(offered)
        d.stay_offered = bool(offered) and route is None and turn.incumbent is not None
        d.ranked = verdict.ranked if verdict else self._uniform()
        d.runner_up = verdict.runner_up if verdict else None
        d.decisive = decisive
        d.evidence = evidence
        d.action = self._actions.get(route) if route else None
        d.triage = turn.triage
        d.tools = self._tools(turn.triage)
        d.usage = _total(turn.records)
        d.policy = policy
        d.floor = policy.floor if policy.floor is not None else info.floor
        d.scorer = self._report(info, turn.error)
        d.elapsed_us = (time.perf_counter_ns() - turn.started) // 1000
        d.dropped_incumbent = turn.dropped
        d.descriptions = self._descriptions
        d.pack = self._identity
        d.tiers = tuple(turn.records)
        d.regex = _regex_report(turn.regex)
        return seal(d, Decision)

    def _report(self, info: ScorerInfo, error: str | None) -> ScorerReport:
        """The decision's scorer report: a tier's report without an error is the same on
        every turn (a frozen record), so it is made once per tier's `info`, not per turn."""
        if error is not None:
            return ScorerReport(info.name, info.categorical, info.floor, error)
        made = self._reports.get(id(info))
        if made is None or made[0] is not info:
            made = (info, ScorerReport(info.name, info.categorical, info.floor))
            self._reports[id(info)] = made  # the info held, so that its id is not reused
        return made[1]

    def _uniform(self) -> Ranking:
        names = list(self._names)
        return Ranking(names, [math.nan] * len(names), softmax([math.nan] * len(names)))

    def _tools(self, triage: TriageVerdict | None) -> ToolRecord:
        tools, names, mode = self.pack.tools, self._tool_names, self.pack.triage.mode
        if not tools:
            return self._no_tools
        if triage is None:
            return ToolRecord(mode, names, names, (), 0)
        kept = narrow_tools(triage, tools, self._always)
        kept_names = tuple(t.name for t in kept)
        keep = set(kept_names)  # once per turn, not once per tool
        dropped = [t for t in tools if t.name not in keep]
        bound = names if mode == "shadow" else kept_names
        return ToolRecord(
            mode,
            bound,
            kept_names,
            tuple(t.name for t in dropped),
            estimate_dropped_tokens(dropped),
        )


@dataclass(slots=True)
class _Turn:
    """What one `route()` call knows so far, handed from tier to tier."""

    text: str
    incumbent: str | None
    dropped: str | None
    policy: Policy
    started: int
    triage: TriageVerdict | None = None
    outcome: Outcome | None = None
    verdict: Verdict | None = None
    error: str | None = None
    records: list[TierRecord] = field(default_factory=list)
    regex: RegexBudget = field(default_factory=RegexBudget)


def _prior_reason(verdict: Verdict, route: str) -> str:
    """Why the conversation, not the message alone, settled the turn, in plain words."""
    alone = verdict.message_top
    if verdict.decisive:
        return (
            f"the message alone leaned to {alone}, but read in the conversation it fits "
            f"{route} better"
        )
    return f"the message alone leaned to {alone}; read in the conversation it was too close to call"


def _prior_texts(pack: Pack) -> dict[str, str]:
    """Each route's own text (name and description) that makes a conversation's prior."""
    return {r.name: prior_text(r.name, r.description) for r in pack.routes}


def _decided_route(
    choice: str, offered: Sequence[str], incumbent: str | None
) -> tuple[str | None, VerdictKind]:
    """What a decider's valid answer means: an offered route, the incumbent (`stay`), or none."""
    if choice in offered:
        return choice, "stay" if choice == incumbent else "move"
    if choice == STAY and incumbent is not None:
        return incumbent, "stay"
    return None, "unmatched"  # `none`: nothing on the menu fits


def _regex_report(budget: RegexBudget) -> RegexReport:
    spent, total = round(budget.spent * 1e6), round(budget.seconds * 1e6)
    return _regex_report_of(spent, total, tuple(budget.skipped))


def _total(records: list[TierRecord]) -> Usage:
    if len(records) == 1:  # one tier ran (the usual turn): its usage is the total
        return records[0].usage
    total = NO_USAGE
    for record in records:
        total += record.usage
    return total


def _since(started: int) -> int:
    return (time.perf_counter_ns() - started) // 1000


def _as_text(message: Any) -> str:
    if isinstance(message, str):
        return message
    if isinstance(message, bytes | bytearray):
        return bytes(message).decode("utf-8", errors="replace")
    return "" if message is None else _printable(message)


def _printable(value: Any) -> str:
    """`str(value)`, or "" when that raises (`10**5000`, a broken `__str__`): never an error."""
    try:
        return str(value)
    except Exception:  # noqa: BLE001 - whatever a caller hands in, routing goes on
        return ""


def _built_tiers(pack: Pack) -> tuple[Tier, ...]:
    """The pack's tiers; whatever building them trips on is a PackError, the one error a
    caller handles (a loaded pack must never surface a library's own exception)."""
    try:
        return build_tiers(pack)
    except PackError:
        raise
    except (ValueError, TypeError, ArithmeticError) as exc:  # pydantic's ValidationError too
        raise PackError([("scorer", f"the pack's scorer cannot be built: {exc}"[:500])]) from None


def _classifier(pack: Pack) -> IntentClassifier | None:
    settings = pack.triage
    if settings.mode == "off":
        return None
    return IntentClassifier(
        ambiguity_confidence_floor=settings.ambiguity_confidence_floor,
        min_action_signals=settings.min_action_signals,
        action_verbs=settings.action_verbs,
        knowledge_verbs=settings.knowledge_verbs,
        question_pattern=settings.question_pattern,
        tool_keywords={t.name: t.trigger_keywords for t in pack.tools},
    )


def _action(route: Route) -> RouteAction:
    action = route.action
    if action.kind == "delegate":
        return RouteAction("delegate", agent=action.agent)
    if action.kind == "stuck":
        return RouteAction("stuck", message=action.message or route.description)
    return RouteAction("answer")
