"""The Router: one compiled pack, one `route()` call per turn, one full Decision back (DESIGN §1)."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from routing_core.codec import PackSource, load_pack
from routing_core.decision import (
    By,
    Decision,
    Evidence,
    RouteAction,
    ScorerReport,
    ToolRecord,
    Usage,
)
from routing_core.errors import PackError
from routing_core.pack import Pack, Route
from routing_core.policy import Policy, Ranked, Verdict, VerdictKind, decide, softmax
from routing_core.rules import RuleSet
from routing_core.scorers import build_scorer
from routing_core.scorers.base import Scorer
from routing_core.tools import estimate_dropped_tokens, narrow_tools
from routing_core.triage import IntentClassifier, TriageVerdict

# Longer messages are clipped before any tier looks at them: routing cost stays bounded
# whatever an upstream system sends, and no real turn needs more to be routed.
MAX_MESSAGE_CHARS = 16_384
EXPLAIN_TERMS = 5


class Router:
    """Routes turns for one pack. Compiles everything at construction; safe across threads.

    Args:
        pack: a `Pack`, or anything `load_pack` accepts.
        scorer: a scorer to use instead of the one the pack's settings build.
    """

    def __init__(self, pack: Pack | PackSource, *, scorer: Scorer | None = None) -> None:
        self.pack = load_pack(pack)
        self.scorer: Scorer = scorer if scorer is not None else build_scorer(self.pack)
        self._names = self.pack.route_names
        self._routes = {r.name: r for r in self.pack.routes}
        self._actions = {r.name: _action(r) for r in self.pack.routes}
        self._rules = RuleSet(self.pack.rules)
        self._triage = _classifier(self.pack)
        self._always = tuple(t.name for t in self.pack.tools if t.always_include)
        self._descriptions = MappingProxyType({r.name: r.description for r in self.pack.routes})
        self._identity = (self.pack.profile.slug, self.pack.version, self.pack.checksum)

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
            dropped=None if incumbent is None or known is not None else str(incumbent),
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
        turn.triage = self._triage.classify(turn.text) if self._triage else None
        hit = self._rules.first_match(turn.text)
        turn.verdict, turn.error = self._score(turn)
        if hit is not None:
            kind: VerdictKind = "stay" if hit.route == turn.incumbent else "move"
            return self._decision(turn, hit.route, "rule", kind, decisive=True, evidence=hit)
        if turn.verdict is None:
            return self._scorer_failed(turn)
        return self._judge(turn, turn.verdict)

    def _score(self, turn: _Turn) -> tuple[Verdict | None, str | None]:
        info = self.scorer.info
        try:
            scores = list(self.scorer.score(turn.text, self._names))
            if len(scores) != len(self._names):
                raise ValueError(f"{len(scores)} scores for {len(self._names)} routes")
            pairs = [(n, float(s)) for n, s in zip(self._names, scores, strict=True)]
        except Exception as exc:  # noqa: BLE001 - a failing scorer is recorded, never raised
            return None, f"{type(exc).__name__}: {exc}"[:300]
        verdict = decide(
            pairs, turn.incumbent, turn.policy, info.floor, info.categorical, info.temperature
        )
        return verdict, None

    def _judge(self, turn: _Turn, verdict: Verdict) -> Decision:
        rails = turn.policy.strictness == "rails"
        route, offered = verdict.to, verdict.offered
        by: By
        if verdict.kind in ("move", "stay"):
            by = "scorer" if verdict.decisive else "continuity"
        elif verdict.kind == "menu":
            by = "none" if rails else "menu"
        elif self.pack.default_route is not None:
            by, route = "default", self.pack.default_route
        else:
            by, offered = ("none" if rails else "menu"), self._names
        evidence = self._explain(turn.text, route) if by == "scorer" and route else None
        return self._decision(
            turn, route, by, verdict.kind, () if rails else offered, verdict.decisive, evidence
        )

    def _scorer_failed(self, turn: _Turn) -> Decision:
        """A failed scorer: mid-conversation stay put; cold, offer every route."""
        if turn.incumbent is not None:
            return self._decision(turn, turn.incumbent, "continuity", "stay")
        if turn.policy.strictness == "rails":
            return self._decision(turn, None, "none", "menu")
        return self._decision(turn, None, "menu", "menu", offered=self._names)

    def _explain(self, text: str, route: str) -> Evidence | None:
        try:
            terms = tuple(self.scorer.explain(text, route, EXPLAIN_TERMS))
        except Exception:  # noqa: BLE001 - explanation is a nicety, never a failure
            return None
        return Evidence(source="scorer", route=route, terms=terms)

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
        info, verdict, policy = self.scorer.info, turn.verdict, turn.policy
        return Decision(
            route=route,
            by=by,
            verdict=kind,
            from_route=turn.incumbent,
            offered=tuple(offered),
            stay_offered=bool(offered) and route is None and turn.incumbent is not None,
            ranked=verdict.ranked if verdict else self._uniform(),
            runner_up=verdict.runner_up if verdict else None,
            decisive=decisive,
            evidence=evidence,
            action=self._actions.get(route) if route else None,
            triage=turn.triage,
            tools=self._tools(turn.triage),
            usage=Usage(),
            policy=policy,
            floor=policy.floor if policy.floor is not None else info.floor,
            scorer=ScorerReport(info.name, info.categorical, info.floor, turn.error),
            elapsed_us=(time.perf_counter_ns() - turn.started) // 1000,
            dropped_incumbent=turn.dropped,
            descriptions=self._descriptions,
            pack=self._identity,
        )

    def _uniform(self) -> tuple[Ranked, ...]:
        share = softmax([math.nan] * len(self._names))
        return tuple(Ranked(n, math.nan, s) for n, s in zip(self._names, share, strict=True))

    def _tools(self, triage: TriageVerdict | None) -> ToolRecord:
        tools = self.pack.tools
        names = tuple(t.name for t in tools)
        mode = self.pack.triage.mode
        if triage is None:
            return ToolRecord(mode, names, names, (), 0)
        kept = narrow_tools(triage, tools, self._always)
        kept_names = tuple(t.name for t in kept)
        dropped = [t for t in tools if t.name not in set(kept_names)]
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
    verdict: Verdict | None = None
    error: str | None = None


def _as_text(message: Any) -> str:
    if isinstance(message, str):
        return message
    if isinstance(message, bytes | bytearray):
        return bytes(message).decode("utf-8", errors="replace")
    return "" if message is None else str(message)


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
