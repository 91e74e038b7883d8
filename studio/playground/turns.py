"""The playground's engine room: one turn on the draft's router (studio.shared.drafts), explained.

Everything shown about a decision is read from the `routing_core` Decision; this module only
arranges it for people (bar widths, the one-sentence why).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from routing_core import Decision, Ranked, Router, background_left_out, message_language_gap
from routing_core.scorers.lexical import LexicalScorer
from studio.models import Profile
from studio.playground.wording import Lead, lead_of, strength
from studio.shared import languages
from studio.shared.drafts import ModelPending, playground_router
from studio.shared.labels import DECIDED_BY

# With many routes the table shows the leaders and folds the rest behind a disclosure.
SHOWN_ROWS = 10
# A share of a first turn's score that went to no route is said from this much on.
NO_ROUTE_NOTED = 0.05
# The save form's value for "a menu offering <route>", beside the plain route names.
MENU_CHOICE = "menu:"


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
    scorer = router.scorer
    unscored = _unscored(router, decision, message)
    return Outcome(
        decision,
        message,
        scorer.info.temperature,
        unscored,
        scorer.spelling_share(message) if isinstance(scorer, LexicalScorer) else None,
        _no_route(scorer, message) if not incumbent else None,
        # Only an unmatched first turn can have been taken by the out-of-scope class.
        _nearest(scorer, message) if unscored and not incumbent else None,
        # None without the languages extra, as everything about languages on a page.
        message_language_gap(router.pack, message),
    )


def _no_route(scorer: object, message: str) -> float | None:
    """What a first turn's scores left to no route (routing_core's
    `LexicalScorer.no_route_share`), for a lexical first tier; None otherwise."""
    return scorer.no_route_share(message) if isinstance(scorer, LexicalScorer) else None


def _nearest(scorer: object, message: str) -> tuple[str, float, float] | None:
    """The route nearest to a message the out-of-scope class took (routing_core's
    `LexicalScorer.nearest_route`), for a lexical first tier; None otherwise."""
    return scorer.nearest_route(message) if isinstance(scorer, LexicalScorer) else None


def _unscored(router: Router, decision: Decision, message: str) -> str | None:
    """Why an unmatched turn's message was not scored at all, when the scorer can say."""
    scorer = router.scorer
    if decision.verdict != "unmatched" or not isinstance(scorer, LexicalScorer):
        return None
    pack = router.pack
    own = sum(1 for text in pack.out_of_scope if text.strip())
    left_out = background_left_out([len(r.examples) for r in pack.routes], own, pack.no_background)
    return scorer.unscored_reason(message, own=own > 0, background=left_out is None)


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
    score_x: str = "0"  # where the raw score sits on the score axis, in percent
    behind: float | None = None  # top score − this score: the lead, in the scores' own units
    is_tied: bool = False  # within the near-tie margin of the top route (the engine's gap test)

    @property
    def behind_text(self) -> str:
        return "—" if self.behind is None else _fmt(self.behind)

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
    # The share of its spelling the routes' texts hold, for a message none of whose words
    # they hold (routing_core's `LexicalScorer.spelling_share`); None otherwise.
    spelling: float | None = None
    # The share of a first turn's score that went to no route (routing_core's
    # `LexicalScorer.no_route_share`); None when the profile's model has no such share.
    no_route: float | None = None
    # When the out-of-scope class took the message: the route that came nearest, its share
    # of the score and the class's (routing_core's `LexicalScorer.nearest_route`).
    nearest: tuple[str, float, float] | None = None
    # The routes without an example in the message's language, and what would read it
    # (routing_core's `message_language_gap`); None when there is nothing to say.
    language_gap: str | None = None

    @cached_property
    def said(self) -> list[tuple[str, str]]:
        """What the page says of how the message was read: (its test id, a sentence) each, in
        the page's order; the page and the API (`notes`) both read this one list."""
        notes = {
            "unscored": f"not scored: {self.unscored}" if self.unscored else "",
            "nearest": self.nearest_note,
            "reading": self.reading_note,
            "no-route": self.no_route_note,
            "spelling": self.spelling_note,
            "language-gap": self.language_gap or "",
        }
        return [(key, note[:1].upper() + note[1:] + ".") for key, note in notes.items() if note]

    @cached_property
    def notes(self) -> list[str]:
        """The page's sentences on how the message was read, for a script (`said`)."""
        return [sentence for _, sentence in self.said]

    @cached_property
    def nearest_note(self) -> str:
        """Which route came nearest to a message that read as off-topic, and by how much the
        off-topic reading outweighed it, "" otherwise: every route's score is then 0, and a
        person who meant the message for a route wants to know which one it leaned to (and
        may add it there as an example)."""
        if self.nearest is None:
            return ""
        route, share, taken = self.nearest
        return (
            f"of your routes, {route} came nearest, with {_share(share)} of the score"
            f" (off-topic took {_share(taken)})"
        )

    @cached_property
    def no_route_note(self) -> str:
        """Where the rest of the score went, when a noticeable share went to no route.

        A profile without out-of-scope examples nor the built-in off-topic messages keeps a
        share of a first turn's score for "no route" (docs/pack-format.md, Lexical scorer,
        step 7): the routes' scores then add up to less than 100%, and an off-topic
        message's best route scores under the floor. Said from NO_ROUTE_NOTED on."""
        if self.no_route is None or self.no_route < NO_ROUTE_NOTED:
            return ""
        share = round(self.no_route * 100)
        return (
            f"{share}% of the score went to no route: the message's words speak little more"
            " for its best route than for the others"
        )

    @cached_property
    def spelling_note(self) -> str:
        """Why a message of unknown words counted for little (or still routed), "" otherwise.

        Its score leans on the fragments of its spelling the routes' texts share, only as
        much as they cover it (docs/pack-format.md, Lexical scorer, step 5)."""
        if self.spelling is None:
            return ""
        share = round(self.spelling * 100)
        return (
            "no route uses any of its words, so it was read on parts of their spelling:"
            f" {share}% of those parts are known, and it counted for that share"
        )

    @cached_property
    def reading_note(self) -> str:
        """How the deciding tier read the message, when it says (a hybrid on an encoder that
        knows many languages reads a message in a language none of the examples is in by
        its meaning alone, an e5 embedding tier with a head by its likeness to the examples
        alone), "" otherwise. An LLM that made no pick did not decide."""
        for tier in self.decision.tiers:
            if tier.decided and tier.note:
                return tier.note
        return ""

    @cached_property
    def why(self) -> str:
        return explain(self.decision)

    @cached_property
    def language(self) -> str:
        """The message's language in plain words ("Spanish"), "" when unsure."""
        return languages.name_of(self.message)

    @cached_property
    def headline(self) -> str:
        """What happened, in words: a first turn *chose* a route; later turns move or stay."""
        return verdict_words(self.decision)

    @cached_property
    def skipped_patterns(self) -> str:
        """The patterns the turn's time budget cut, as people number them ("rule 4")."""
        regex = self.decision.regex
        return ", ".join(_pattern_name(where) for where in (regex.skipped if regex else ()))

    @cached_property
    def rows(self) -> list[ScoreRow]:
        d, floor = self.decision, self.decision.floor
        top = self._top
        margin = d.policy.near_tie_margin
        rows = []
        for rank, r in enumerate(d.ranked, start=1):
            alive = math.isfinite(r.score) and (floor is None or r.score > floor)
            behind = None
            if top is not None and rank > 1 and alive:
                behind = top.score - r.score
            rows.append(
                ScoreRow(
                    rank,
                    r.route,
                    r.score,
                    r.relevance,
                    alive,
                    r.route in d.offered,
                    r.route == d.route,
                    r.route == d.from_route,
                    self._on_score_axis(r.score),
                    behind,
                    behind is not None and math.tanh(behind / 2) < margin,
                )
            )
        return rows

    @cached_property
    def score_axis(self) -> float:
        """The score bars' full width: 1 for probabilities, more for a scorer that exceeds it."""
        top = self._top
        return max(1.0, top.score) if top is not None else 1.0

    def _on_score_axis(self, score: float) -> str:
        if not math.isfinite(score):
            return "0"
        return f"{100 * min(max(score, 0.0), self.score_axis) / self.score_axis:.1f}"

    @cached_property
    def floor_x(self) -> str | None:
        """The floor on the *score* axis, where it belongs: it is a threshold on raw scores."""
        floor = self.decision.floor
        return None if floor is None else self._on_score_axis(floor)

    @cached_property
    def lead(self) -> Lead | None:
        """The top's lead over the runner-up and the lead the margin asks for, in score units."""
        return lead_of(self.decision)

    @cached_property
    def lead_meter(self) -> tuple[str, str] | None:
        """The lead and the needed lead on the score bars' own axis, so the three line up."""
        lead = self.lead
        if lead is None:
            return None
        return (
            self._on_score_axis(lead.value),
            self._on_score_axis(min(lead.needed, self.score_axis)),
        )

    @cached_property
    def menu_order(self) -> str | None:
        """How a menu was put together, so its tie-break can be seen."""
        d = self.decision
        if d.verdict != "menu" or not d.offered:
            return None
        tied = sum(1 for r in self.rows if r.is_tied) + 1
        if tied < 2:
            return "nothing was close enough to call, so every route is offered in the pack's order"
        left_out = tied - len(d.offered)
        cut = (
            f"; {left_out} more within the margin left out (menu size {d.policy.menu_size})"
            if left_out > 0
            else ""
        )
        return (
            "the menu lists the routes within the margin of the top, best score first; "
            f"equal scores keep the pack's route order{cut}"
        )

    def shown_rows(self, show_all: bool = False) -> list[ScoreRow]:
        """Every route, or on a large profile the leaders (and any route the turn involves)."""
        if show_all or len(self.rows) <= SHOWN_ROWS + 2:
            return self.rows
        return [r for r in self.rows if r.rank <= SHOWN_ROWS or r.is_offered or r.is_current]

    @cached_property
    def evidence_parts(self) -> tuple[str, str, str] | None:
        """The message split around a rule's matched span (escaped by the template)."""
        evidence = self.decision.evidence
        if evidence is None or evidence.span is None:
            return None
        start, end = evidence.span
        text = self.message
        return (text[:start], text[start:end], text[end:])

    @cached_property
    def evidence_terms(self) -> list[tuple[str, float, str]]:
        """The scorer's terms as the message wrote them (text, weight, kind), each once."""
        evidence = self.decision.evidence
        shown: dict[str, tuple[str, float, str]] = {}
        for term in evidence.terms if evidence is not None else ():
            text = term.term if term.kind == "example" else as_written(term.term, self.message)
            shown.setdefault(text.lower(), (text, term.weight, term.kind))
        return list(shown.values())

    @property
    def signals(self) -> list[str]:
        """The triage signals that fired, each once (both lanes may name e.g. "verb")."""
        triage = self.decision.triage
        return list(dict.fromkeys(triage.signals)) if triage else []

    @property
    def expected_route(self) -> str:
        """What a test case saved from this turn expects by default (blank: no route).

        A menu's default is "menu:" and its first offer: the case then expects a menu offering
        that route, which passes today (docs/decisions.md, "Test cases that expect a menu").
        """
        d = self.decision
        if d.verdict == "menu":
            return f"{MENU_CHOICE}{d.offered[0]}" if d.offered else ""
        return (d.route or "") if d.verdict in ("move", "stay") else ""

    @cached_property
    def event_json(self) -> str:
        return json.dumps(self.decision.to_event(), indent=2, ensure_ascii=False)

    @property
    def _top(self) -> Ranked | None:
        ranked = self.decision.ranked
        return ranked[0] if ranked and math.isfinite(ranked[0].score) else None


def verdict_words(d: Decision) -> str:
    """The verdict as a person says it ("chose billing", "moved from shipping to billing")."""
    return turn_words(d.verdict, d.route, d.from_route, decided_by(d), has_menu=bool(d.offered))


def decided_by(d: Decision) -> str:
    """What decided the turn, as the words name it: a stay the conversation settled (no new
    topic, or the incumbent's prior) is the conversation's, not a near-tie's continuity."""
    return "conversation" if d.by == "continuity" and _conversation_reason(d) else d.by


def _conversation_reason(d: Decision) -> str | None:
    """Why the conversation, not the message alone, settled the turn (docs/pack-format.md,
    Continuity): the engine says it in plain words, naming routes only."""
    e = d.evidence
    return e.reason if e is not None and e.source == "conversation" else None


def turn_words(
    verdict: str, route: str | None, from_route: str | None, by: str, *, has_menu: bool = True
) -> str:
    """One turn in words, for the verdict header and the conversation transcript alike.

    The event's `move` on a first turn is right for a log (there was nothing to stay on) but
    reads as if the conversation had been somewhere before.
    """
    if verdict == "menu":
        what = "offered a menu" if has_menu else "no menu (rails)"
    elif verdict == "unmatched":
        what = f"unmatched → {route}" if route else "unmatched"
    elif verdict == "stay":
        what = f"stayed on {route}"
    elif from_route:
        what = f"moved from {from_route} to {route}"
    else:
        what = f"chose {route}"
    if verdict == "unmatched" and by == "menu":
        # Nothing scored above the floor: no near-tie, so not "too close to call".
        return f"{what} · no route fits: the agent offers every route"
    return f"{what} · {DECIDED_BY.get(by, by)}"


def as_written(term: str, message: str) -> str:
    """A scorer's term as the message wrote it. The engine reads "what's" as the words "what"
    and "s" (docs/pack-format.md, Lexical scorer); a person reads the chip "what's", not "s".

    Each word of the term matches a whole word of the message, or else the start of one (a
    stem); the match grows over an apostrophe to the whole written word. A term the message
    does not show is kept as the engine wrote it.
    """
    words = term.split()
    found = None
    for tail in (r"\b", r"\w*"):
        pattern = r"\W+".join(rf"\b{re.escape(w)}{tail}" for w in words)
        found = re.search(pattern, message, re.IGNORECASE) if words else None
        if found:
            break
    if found is None:
        return term
    start, end = found.span()
    while start > 1 and message[start - 1] in _APOSTROPHES and message[start - 2].isalnum():
        start = _word_start(message, start - 2)
    while end + 1 < len(message) and message[end] in _APOSTROPHES and message[end + 1].isalnum():
        end = _word_end(message, end + 1)
    return message[start:end]


_APOSTROPHES = "'’"


def _word_start(text: str, i: int) -> int:
    while i > 0 and text[i - 1].isalnum():
        i -= 1
    return i


def _word_end(text: str, i: int) -> int:
    while i < len(text) and text[i].isalnum():
        i += 1
    return i


def _pattern_name(where: str) -> str:
    if where.startswith("rules["):
        return f"rule {int(where[6:-1]) + 1}"
    return "the question pattern" if where == "triage.question_pattern" else where


def explain(d: Decision) -> str:
    """One sentence a product person can read: why the turn went where it went."""
    if d.by == "rule" and d.evidence is not None:
        return _why_rule(d)
    if reason := _conversation_reason(d):
        return reason
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
    """A scorer's decisive top, in words as sure as its numbers (studio.playground.wording)."""
    if d.scorer.categorical:
        lead = "decisively stays on" if d.verdict == "stay" else "decisively matched"
        return f"{lead} {d.route}: the {d.scorer.name} scorer picked it"
    sure = strength(d)
    verb = "stays on" if d.verdict == "stay" else "matched"
    lead = f"decisively {verb}" if sure.is_clear else verb
    score = _fmt(_score_of(d, d.route))
    floor = "the floor" if d.floor is None else f"the floor {_fmt(d.floor)}"
    ahead = lead_of(d)
    if ahead is None:
        said = f"{lead} {d.route}: {score}, the only route above {floor}"
    else:
        said = (
            f"{lead} {d.route}: {score} vs {_fmt(ahead.rival_score)} for {ahead.rival}, "
            f"{ahead.sentence}"
        )
    doubts = sure.doubts(d.floor)
    return f"{said}; a weak match: {' and '.join(doubts)}" if doubts else said


def _why_near_tie(d: Decision) -> str:
    top = d.ranked[0]
    ahead = lead_of(d)
    if ahead is None:
        return f"{d.verdict} on {top.route}"
    tie = (
        f"near-tie between {top.route} ({_fmt(top.score)}) and {ahead.rival} "
        f"({_fmt(ahead.rival_score)}): {ahead.sentence}"
    )
    if d.verdict == "stay" and d.route:
        return f"{tie}; stays on the current route {d.route}"
    if d.offered:
        stay = f", or staying on {d.from_route}" if d.stay_offered and d.from_route else ""
        return f"{tie}; offers a menu of {', '.join(d.offered)}{stay}"
    return f"{tie}; under rails no menu is offered and the turn is not routed"


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


def _share(value: float) -> str:
    """A share of the score in whole percent, "under 1%" rather than a 0% that was not zero."""
    percent = round(100 * value)
    return f"{percent}%" if percent >= 1 else "under 1%"


def _fmt(value: float) -> str:
    return f"{value:.2f}" if math.isfinite(value) else str(value)
