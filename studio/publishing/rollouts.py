"""Starting, guarding and ending rollouts: every step in one transaction and in the audit trail.

A rollout's life (docs/pack-format.md, "Rollouts over HTTP"): a publisher starts it (shadow, or canary at a
share), sets its conditions in plain words, and it ends halted (a condition broke: agents fall
back to live at their next pull), promoted (the candidate becomes the environment's live
version), or stopped by a person. While it waits for a person, agents keep being told of it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from studio.models import (
    SERVED,
    Environment,
    EnvironmentName,
    OnHold,
    Profile,
    Rollout,
    RolloutMode,
    RolloutStatus,
    Version,
)
from studio.publishing.versions import promote
from studio.shared.audit import audit
from studio.shared.errors import Conflict, Refused

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Conditions:
    """What a person set: halt when a rate rises by more than so many points; judge after M turns."""

    max_unmatched_rise: float | None = None
    max_reask_rise: float | None = None
    min_turns: int = 500
    on_hold: str = OnHold.ASK

    def problems(self) -> list[tuple[str, str]]:
        """What is wrong with them, as (field, message), for the form and the API."""
        found = []
        for name in ("max_unmatched_rise", "max_reask_rise"):
            value = getattr(self, name)
            if value is not None and not 0 <= value <= 100:
                found.append((name, "a rise is between 0 and 100 points"))
        if not 1 <= self.min_turns <= 10_000_000:
            found.append(("min_turns", "at least 1 turn, at most 10 million"))
        if self.on_hold not in OnHold.values:
            found.append(("on_hold", "promote, or ask a publisher"))
        return found


def served_rollout(environment: Environment) -> Rollout | None:
    """The environment's rollout that agents are told of, if any."""
    return environment.rollouts.filter(status__in=SERVED).select_related("candidate").first()


def start_rollout(
    profile: Profile,
    environment: str,
    candidate: Version,
    *,
    mode: str,
    share: int,
    conditions: Conditions,
    user: Any,
) -> Rollout:
    """Put `candidate` beside the environment's live version.

    Raises:
        Refused: an unknown environment or mode, a share outside 1–100 for a canary, a
            candidate that is the live version, or conditions out of range.
        Conflict: the environment has a rollout already.
    """
    problems = _start_problems(environment, mode, share, conditions)
    env = Environment.objects.filter(profile=profile, name=environment).first()
    if env is None or env.version is None:
        problems.append(("environment", f"{environment} serves no version yet: promote one first"))
    elif env.version_id == candidate.pk:
        problems.append(("version", f"version {candidate.number} is already live there"))
    if problems:
        raise Refused(problems)
    assert env is not None and env.version is not None
    try:
        with transaction.atomic():
            rollout = Rollout.objects.create(
                profile=profile,
                environment=env,
                candidate=candidate,
                live=env.version,
                mode=mode,
                share=share if mode == RolloutMode.CANARY else 0,
                started_by=user if user is not None and user.is_authenticated else None,
                **_condition_fields(conditions),
            )
            audit(user, profile, "rollout.start", rollout, None, _facts(rollout))
    except IntegrityError:
        raise Conflict(f"{environment} has a rollout already: end it first") from None
    return rollout


def _start_problems(
    environment: str, mode: str, share: int, conditions: Conditions
) -> list[tuple[str, str]]:
    problems = list(conditions.problems())
    if environment not in EnvironmentName.values:
        problems.append(("environment", f"unknown environment '{environment}'"))
    if mode not in RolloutMode.values:
        problems.append(("mode", "shadow or canary"))
    if mode == RolloutMode.CANARY and not 1 <= share <= 100:
        problems.append(("share", "a canary serves 1 to 100 percent of conversations"))
    return problems


def _condition_fields(conditions: Conditions) -> dict[str, Any]:
    return {
        "max_unmatched_rise": conditions.max_unmatched_rise,
        "max_reask_rise": conditions.max_reask_rise,
        "min_turns": conditions.min_turns,
        "on_hold": conditions.on_hold,
    }


def set_conditions(rollout: Rollout, conditions: Conditions, *, user: Any) -> Rollout:
    """Replace a served rollout's conditions (audited with the old and new ones).

    Raises:
        Refused: conditions out of range.
        Conflict: the rollout has ended.
    """
    if conditions.problems():
        raise Refused(conditions.problems())
    with transaction.atomic():
        row = _locked_served(rollout)
        before = _facts(row)
        for field, value in _condition_fields(conditions).items():
            setattr(row, field, value)
        row.save()
        audit(user, row.profile, "rollout.conditions", row, before, _facts(row))
    return row


def halt(rollout: Rollout, reason: str, figures: dict[str, Any], *, user: Any = None) -> Rollout:
    """End a served rollout on live: agents drop the candidate at their next pull.

    Raises:
        Conflict: it has ended already.
    """
    row = _end(rollout, RolloutStatus.HALTED, reason, figures, user)
    _tell_publishers(row, f"halted: {reason}")
    return row


def stop(rollout: Rollout, *, user: Any) -> Rollout:
    """A person ends the rollout without promoting (agents back on live at their next pull)."""
    return _end(rollout, RolloutStatus.STOPPED, "stopped by a person", rollout.figures, user)


def promote_candidate(
    rollout: Rollout, reason: str, figures: dict[str, Any], *, user: Any = None
) -> Rollout:
    """Make the candidate the environment's live version and end the rollout.

    Raises:
        Conflict: it has ended already, or the environment moved meanwhile.
    """
    with transaction.atomic():
        row = _end(rollout, RolloutStatus.PROMOTED, reason, figures, user)
        promote(row.candidate, row.environment.name, user=user)
    _tell_publishers(row, f"promoted: {reason}")
    return row


def ask_to_promote(rollout: Rollout, reason: str, figures: dict[str, Any]) -> Rollout:
    """The conditions held: wait for a publisher to promote (agents are still told of it)."""
    with transaction.atomic():
        row = _locked_served(rollout)
        row.status, row.figures = RolloutStatus.WAITING, figures
        row.save()
        audit(None, row.profile, "rollout.ask", row, None, {**_facts(row), "why": reason})
    _tell_publishers(row, f"ready to promote: {reason}")
    return row


def record_figures(rollout: Rollout, figures: dict[str, Any]) -> None:
    """Keep the last check's figures on the rollout (its page reads them)."""
    Rollout.objects.filter(pk=rollout.pk).update(figures=figures)


def _end(rollout: Rollout, status: str, reason: str, figures: dict[str, Any], user: Any) -> Rollout:
    with transaction.atomic():
        row = _locked_served(rollout)
        row.status, row.reason, row.figures = status, reason, figures
        row.ended_at = timezone.now()
        row.save()
        audit(user, row.profile, f"rollout.{status}", row, None, {**_facts(row), "why": reason})
    return row


def _locked_served(rollout: Rollout) -> Rollout:
    row = (
        Rollout.objects.select_for_update(of=("self",))
        .select_related("profile", "environment", "candidate", "live")
        .get(pk=rollout.pk)
    )
    if not row.is_served:
        raise Conflict(f"the rollout has ended already ({row.status})")
    return row


def _facts(rollout: Rollout) -> dict[str, Any]:
    """What the audit trail keeps of a rollout: its settings and the figures that decided."""
    return {
        "environment": rollout.environment.name,
        "live": rollout.live.number,
        "candidate": rollout.candidate.number,
        "mode": rollout.mode,
        "share": rollout.share,
        "status": rollout.status,
        **_condition_fields(_conditions_of(rollout)),
        "figures": rollout.figures,
    }


def _conditions_of(rollout: Rollout) -> Conditions:
    return Conditions(
        rollout.max_unmatched_rise, rollout.max_reask_rise, rollout.min_turns, rollout.on_hold
    )


def _tell_publishers(rollout: Rollout, what: str) -> None:
    """E-mail the studio's publishers; a mail server that is down never undoes the step."""
    people = get_user_model().objects.filter(
        Q(groups__name__in=["publisher", "admin"]) | Q(is_superuser=True), is_active=True
    )
    to = sorted({u.email for u in people if u.email})
    if not to:
        return
    subject = (
        f"{rollout.profile.slug}: rollout of version {rollout.candidate.number} "
        f"on {rollout.environment.name} {what}"
    )
    try:
        send_mail(subject, subject, None, to)
    except OSError as exc:
        log.warning("publishers not told of the rollout: %s", exc)
