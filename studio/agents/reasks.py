"""Re-asks in reported turns: mark a turn whose next turn in the conversation repeated or
corrected it (`routing_core.reasks.is_reask`), so they count per route and pack revision.

Turns of one conversation can arrive in different batches, and from different agents, in any
order: each batch looks at its turns' neighbours already stored, before and after. A profile
that keeps no message text has nothing to compare, so it has no re-asks.
"""

from __future__ import annotations

from collections.abc import Iterable

from routing_core.reasks import is_reask
from studio.models import Event, Profile


def mark_reasks(profile: Profile, rows: Iterable[Event]) -> int:
    """Mark the re-asked turns around the newly stored `rows`; returns how many were marked."""
    keys = {
        (r.conversation, r.turn)
        for r in rows
        if r.conversation and r.turn is not None and r.message is not None
    }
    if not keys:
        return 0
    stored = _stored_turns(profile, {c for c, _ in keys})
    marked: set[int] = set()
    for conversation, turn in keys:
        for before, after in ((turn - 1, turn), (turn, turn + 1)):
            earlier = stored.get((conversation, before))
            later = stored.get((conversation, after))
            if earlier and later and is_reask(earlier[1], later[1]):
                marked.add(earlier[0])
    if marked:
        Event.objects.filter(pk__in=marked, reasked=False).update(reasked=True)
    return len(marked)


def _stored_turns(
    profile: Profile, conversations: set[str]
) -> dict[tuple[str, int], tuple[int, str]]:
    """(conversation, turn) -> (event id, message) of the stored turns with text."""
    rows = Event.objects.filter(
        profile=profile, conversation__in=conversations, turn__isnull=False, message__isnull=False
    ).values_list("pk", "conversation", "turn", "message")
    return {(c, t): (pk, m) for pk, c, t, m in rows if t is not None and m is not None}
