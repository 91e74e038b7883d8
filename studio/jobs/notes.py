"""How a job's state is put in words for people (the playground, lint, tuning, the API)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from studio.models import TrainedModel


def training_note(pending: TrainedModel | None, source: TrainedModel | None = None) -> str:
    """ "examples changed 3 s ago; scores from the model of revision 41; retraining, 60%"."""
    if pending is None:
        return "The draft's model is not ready."
    ago = _ago(pending.started_at)
    state = (
        "waiting for a worker to train it"
        if pending.is_queued
        else f"{'retraining' if source else 'training'}, {pending.percent}%"
        if pending.is_running
        else f"training stopped: {pending.error or pending.status}"
    )
    if source is not None:
        return (
            f"Examples changed {ago} ago; scores from the model of revision "
            f"{source.draft_revision}; {state}."
        )
    return f"No model yet for this draft (examples changed {ago} ago): {state}; scores appear when it is ready."


def _ago(when: Any) -> str:
    seconds = max(0, int((timezone.now() - when).total_seconds()))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"
