"""The review inbox: production turns worth a look and what a person says about them.

One row per message and route: the same (redacted) message that went to the same route is
one question, however often agents sent it, so it is one row with a count, and an answer
applies to every turn of it. A row shows the turns its conversation had before it, as
stored, since a short turn ("yes", "thanks!") cannot be judged alone. The answers:
- a test case (one turn, or the conversation up to it as a multi-turn case) or an example
  of the right route (`label_turn`), written through the suites' and the edits' audited paths;
- "looks right" (`confirm_turn`): the route was right; it counts as reviewed;
- "dismiss" (`dismiss_turn`): off the inbox without an answer; not counted as reviewed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from routing_core import Router
from studio.models import Event, Profile, Route, TestCase
from studio.shared.drafts import playground_router
from studio.shared.edits import save_item
from studio.shared.errors import Conflict, Refused
from studio.suites import Turn, add_test_case, save_conversation

REVIEW_WINDOW = 5000  # the latest turns the review queue looks through
CONTEXT_TURNS = 3  # turns shown (and saved with a conversation) before the reviewed one
SHORT_WORDS = 3  # a turn this short is shown with the turns before it open

SaveAs = Literal["test", "example", "conversation"]

# The reasons a turn is in the inbox, in the words the inbox shows; a filter names one by its key.
REASONS = {
    "unmatched": "nothing matched",
    "menu": "a menu was offered",
    "near_tie": "a near tie",
    "left": "the next turn left this route at once",
    # The user's next turn said the same again or corrected it (routing_core.reasks): the
    # cheapest sign from production that the route did not serve them (docs/pack-format.md).
    "reasked": "the user re-asked after this route",
}
SAVE_AS: dict[str, SaveAs] = {"test": "test", "example": "example", "conversation": "conversation"}


@dataclass(frozen=True)
class ReviewItem:
    """One row of the inbox: the newest turn of its message and route, and why it is here."""

    event: Event
    reasons: list[str]
    count: int = 1  # turns with this message that went to this route, this one included
    before: list[Event] = field(default_factory=list)  # the turns before it, oldest first

    @property
    def is_short(self) -> bool:
        return len((self.event.message or "").split()) <= SHORT_WORDS


def row_key(event: Event) -> tuple[str, str]:
    """What makes two turns one row: the message (case and spacing aside) and the route."""
    return " ".join((event.message or "").split()).casefold(), event.route


def review_queue(profile: Profile, limit: int = 50, reason: str = "") -> list[ReviewItem]:
    """Unanswered turns with text worth a look, newest first, one row per message and route;
    with `reason` (a key of REASONS), only the turns that are here for that reason."""
    margin = profile.near_tie_margin
    recent = list(
        Event.objects.filter(profile=profile, message__isnull=False)
        .defer("event")
        .order_by("-received", "-pk")[:REVIEW_WINDOW]
    )
    nxt = {(e.conversation, e.turn): e for e in recent if e.conversation and e.turn is not None}
    rows: dict[tuple[str, str], list[tuple[Event, list[str]]]] = {}
    for e in recent:
        if e.reviewed_at is not None or e.dismissed_at is not None:
            continue
        reasons = _reasons(e, margin, nxt.get((e.conversation, (e.turn or 0) + 1)))
        if reason in REASONS and REASONS[reason] not in reasons:
            continue
        key = row_key(e)
        if reasons and (key in rows or len(rows) < limit):  # past the limit, only counted
            rows.setdefault(key, []).append((e, reasons))
    before = turns_before([turns[0][0] for turns in rows.values()])
    return [
        ReviewItem(
            turns[0][0],
            list(dict.fromkeys(r for _, reasons in turns for r in reasons)),
            len(turns),
            before.get(turns[0][0].pk, []),
        )
        for turns in rows.values()
    ]


def _reasons(e: Event, margin: float, following: Event | None) -> list[str]:
    reasons = []
    if e.verdict == "unmatched":
        reasons.append(REASONS["unmatched"])
    if e.verdict == "menu":
        reasons.append(REASONS["menu"])
    elif e.gap is not None and not e.decisive and e.gap < margin:
        reasons.append(REASONS["near_tie"])
    if (
        e.conversation
        and e.route
        and following is not None
        and following.from_route == e.route
        and following.verdict == "move"
        and following.route != e.route
    ):
        reasons.append(REASONS["left"])
    if e.reasked:
        reasons.append(REASONS["reasked"])
    return reasons


def turns_before(events: Iterable[Event]) -> dict[int, list[Event]]:
    """For each turn, the turns right before it in its conversation, as stored, oldest first.

    Only an unbroken run with text counts (at most `CONTEXT_TURNS`): a missing turn or one
    whose text was not kept ends it, since a multi-turn case chains each turn from where the
    previous one landed (docs/test-suites.md) and a gap would chain it from the wrong place.
    """
    events = [e for e in events if e.conversation and e.turn is not None]
    stored: dict[str, dict[int, Event]] = {}
    if events:
        rows = Event.objects.filter(
            profile_id=events[0].profile_id,
            conversation__in={e.conversation for e in events},
            turn__isnull=False,
        ).defer("event")
        for row in rows.order_by("received", "pk"):  # a turn sent twice: the later one
            stored.setdefault(row.conversation, {})[row.turn or 0] = row
    found: dict[int, list[Event]] = {}
    for e in events:
        by_turn, run = stored.get(e.conversation, {}), list[Event]()
        turn = (e.turn or 0) - 1
        while len(run) < CONTEXT_TURNS and turn in by_turn and by_turn[turn].message is not None:
            run.append(by_turn[turn])
            turn -= 1
        found[e.pk] = run[::-1]
    return found


def _row(event: Event) -> Q:
    """The unanswered turns of the event's row (its message and route), itself included."""
    key = row_key(event)
    same = Event.objects.filter(
        profile_id=event.profile_id,
        route=event.route,
        reviewed_at=None,
        dismissed_at=None,
        message__isnull=False,
    ).order_by("-received", "-pk")[:REVIEW_WINDOW]
    return Q(pk=event.pk) | Q(
        pk__in=[e.pk for e in same.only("pk", "message", "route") if row_key(e) == key]
    )


def _answer(event: Event, *, user: Any, right_route: str) -> int:
    """Mark the event's row reviewed with the right route; how many turns that was."""
    return Event.objects.filter(_row(event)).update(
        reviewed_at=timezone.now(), reviewed_by=user, right_route=right_route
    )


def confirm_turn(event: Event, *, user: Any) -> int:
    """ "Looks right": the route the turn took was right (none, for an unmatched turn)."""
    return _answer(event, user=user, right_route=event.route)


def dismiss_turn(event: Event) -> int:
    """Take the event's row off the inbox without an answer; how many turns that was."""
    return Event.objects.filter(_row(event)).update(dismissed_at=timezone.now())


def label_turn(event: Event, right_route: str, *, save_as: SaveAs, user: Any) -> TestCase | Route:
    """Record a person's answer for a turn: a test case (of the turn alone, or of its
    conversation up to it), or an example of the route; its row then counts as reviewed.

    Written through `studio.suites` and `studio.shared.edits`, so it lands in the audit trail.

    Raises:
        Refused: no message text, an unknown route, an example for "no route", or a
            conversation whose turns before this one were not kept.
    """
    profile = event.profile
    if event.message is None:
        raise Refused([("message", "this turn has no message text to learn from")])
    with transaction.atomic():
        if save_as == "example":
            made: TestCase | Route = _add_example(profile, right_route, event.message, user)
        elif save_as == "conversation":
            made = _save_conversation(event, right_route, user)
        else:
            decision = _draft_router(profile).route(event.message, event.from_route or None)
            made = add_test_case(profile, decision, event.message, right_route, user=user)
        _answer(event, user=user, right_route=right_route)
    return made


def _save_conversation(event: Event, right_route: str, user: Any) -> TestCase:
    """The turns before the event (as stored, each expecting where it went) and the event,
    expecting the right route, as one multi-turn case."""
    before = turns_before([event]).get(event.pk, [])
    if not before:
        raise Refused([("as", "the turns before this one were not kept: save it as a test case")])
    if right_route and not event.profile.routes.filter(name=right_route).exists():
        raise Refused([("route", f"'{right_route}' is not a route of this profile")])
    turns = [
        Turn(e.message or "", e.from_route or None, e.route or None, e.verdict) for e in before
    ]
    # The verdict is expected only when the person agrees with the route the turn took.
    verdict = event.verdict if right_route == event.route and event.verdict != "menu" else ""
    turns.append(Turn(event.message or "", event.from_route or None, right_route or None, verdict))
    return save_conversation(event.profile, turns, user=user)[-1]


def _draft_router(profile: Profile) -> Router:
    """The draft's router as the playground has it: its own model, else the last one trained.

    The test case keeps the verdict kind, triage and tools the draft gives the turn; a model a
    revision old only matters to the verdict kind, and the suite's next run re-judges it anyway.
    """
    router = playground_router(profile).router
    if router is None:
        raise Refused([("route", "the draft's first model is still training: try again shortly")])
    return router


def _current_route(profile: Profile, name: str) -> Route:
    route = profile.routes.filter(name=name).first()
    if route is None:
        raise Refused([("route", "choose the route this message is an example of")])
    return route


ADD_TRIES = 3  # each try loses only to an edit that was saved meanwhile


def _add_example(profile: Profile, name: str, message: str, user: Any) -> Route:
    """Append the message to the route's examples, on the route as it is now.

    People labelling turns of one route at once each add an example: an edit saved in
    between is merged (read again and the example appended to it), not lost or refused.

    Raises:
        Conflict: the route kept changing under every try.
    """
    for attempt in range(ADD_TRIES):
        route = _current_route(profile, name)
        if message in route.examples:
            return route
        route.examples = [*route.examples, message]
        try:
            with transaction.atomic():
                save_item(route, user=user, expected_revision=route.revision)
        except Conflict:
            if attempt == ADD_TRIES - 1:
                raise
            continue
        return route
    raise AssertionError("unreachable")


def reviewed_count(profile: Profile) -> int:
    """Turns a person answered (a label or "looks right"; dismissed ones are not counted)."""
    return Event.objects.filter(profile=profile).filter(~Q(reviewed_at=None)).count()
