"""Test conversations for a route, drafted by a language model on the job queue, behind review.

`routing_core.suggest.draft_conversations` asks the configured model for realistic
conversations that open on the route (an opening, slot answers, a confirmation, a change of
topic) and routes them turn by turn on the draft. The request waits for a model for seconds,
so it runs as a job (studio/jobs); nothing is saved until a person accepts some conversations,
each of which becomes one multi-turn test case (`save_conversation`). The choice is audited
once, naming what was accepted and what was rejected, like suggestions.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.db import transaction
from django.utils import timezone

from routing_core import Router
from routing_core.scorers import ScorerFailure
from routing_core.suggest import ConversationBatch, draft_conversations
from studio.jobs import JobFailed, Reporter, job_pack, start_job
from studio.models import ConversationDraft, Route
from studio.shared.audit import audit, signed_in
from studio.shared.errors import Conflict
from studio.shared.llm import llm_client, setup_help
from studio.suites import Turn, save_conversation

SETUP_HELP = setup_help("Drafted conversations")


def start_draft(route: Route, *, user: Any) -> ConversationDraft:
    """Queue a drafting job for the route (the caller has checked that a model is configured)."""
    job = ConversationDraft.objects.create(
        profile=route.profile,
        route=route,
        started_by=signed_in(user),
        draft_revision=route.profile.draft_revision,
        total=1,
    )
    return start_job(job)


def latest_draft(route: Route) -> ConversationDraft | None:
    """The route's most recent drafting job, reviewed or not."""
    return route.conversation_drafts.order_by("-started_at", "-pk").first()


def execute_draft(job: ConversationDraft, progress: Reporter) -> dict[str, Any]:
    """The job's work (on a worker): ask the model, route what it wrote on the draft."""
    client = llm_client()
    if client is None:
        raise JobFailed(SETUP_HELP)
    route = Route.objects.select_related("profile").get(pk=job.route_id)
    router = Router(job_pack(route.profile))
    try:
        batch = draft_conversations(client, router, route.name)
    except ScorerFailure as exc:
        raise JobFailed(f"The language model did not answer usefully: {exc}. Try again.") from exc
    except KeyError as exc:
        raise JobFailed(f"{route.name} is not a route of the draft any more.") from exc
    progress(1, 1)
    return {
        "done": 1,
        "draft_revision": route.profile.draft_revision,
        "conversations": [asdict(c) for c in batch.conversations],
        "dropped": batch.dropped,
        "note": _note(batch),
    }


def _note(batch: ConversationBatch) -> str:
    """Why there is nothing to review, in words; empty when there is something."""
    if batch.conversations:
        return ""
    if batch.answer_was_unreadable:
        return "The language model answered without a list of conversations. Try again."
    return (
        f"None of the {batch.dropped} conversations the model wrote opened on this route "
        "and named only routes of the profile. Try again."
    )


def review_draft(job: ConversationDraft, accepted: list[int], *, user: Any) -> int:
    """Save the accepted conversations (1-based numbers) as multi-turn test cases; audit the
    choice with the rejected ones. Returns how many test cases were added.

    Raises:
        Conflict: the draft was reviewed already (by someone else, or in another tab).
    """
    with transaction.atomic():
        locked = ConversationDraft.objects.select_for_update().get(pk=job.pk)
        if locked.reviewed_at is not None:
            raise Conflict("These conversations were reviewed already: draft new ones.")
        drafted = list(enumerate(locked.conversations, 1))
        kept = [c for n, c in drafted if n in accepted]
        added = sum(len(_save(locked, c, user)) for c in kept)
        locked.reviewed_at = timezone.now()
        locked.save(update_fields=["reviewed_at"])
        after = {
            "accepted": [_texts(c) for c in kept],
            "rejected": [_texts(c) for n, c in drafted if n not in accepted],
        }
        audit(user, locked.profile, "route.review-conversations", locked.route, None, after)
    return added


def _save(job: ConversationDraft, conversation: dict[str, Any], user: Any) -> list[Any]:
    # Each turn expects the route the model gave it and the person accepted; no verdict kind,
    # so that the case checks where the conversation goes, not how sure the engine was.
    turns = [Turn(t["text"], None, t["expected"], "") for t in conversation["turns"]]
    return save_conversation(job.profile, turns, user=user)


def _texts(conversation: dict[str, Any]) -> list[str]:
    return [str(t["text"]) for t in conversation["turns"]]
