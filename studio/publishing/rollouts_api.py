"""API: start a rollout on an environment, read its figures, set its conditions, end it."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Router, Schema, Status
from pydantic import Field

from studio.models import Rollout, Version
from studio.publishing.rollout_guards import figures
from studio.publishing.rollouts import (
    Conditions,
    promote_candidate,
    served_rollout,
    set_conditions,
    start_rollout,
    stop,
)
from studio.shared.api_access import USER_AUTH, profile_for, require
from studio.shared.roles import PUBLISH
from studio.shared.schemas import ERRORS, MAX_INT, SLUG

router = Router(tags=["rollouts"], auth=USER_AUTH)
Environment = Literal["staging", "production"]


class ConditionsIn(Schema):
    max_unmatched_rise: float | None = Field(
        None, ge=0, le=100, description="halt if the unmatched rate rises by more points"
    )
    max_reask_rise: float | None = Field(
        None, ge=0, le=100, description="halt if re-asks rise by more points (canary only)"
    )
    min_turns: int = Field(500, ge=1, le=10_000_000, description="judge after this many turns")
    on_hold: Literal["promote", "ask"] = Field(
        "ask", description="when every condition held: promote, or ask a publisher"
    )

    def conditions(self) -> Conditions:
        return Conditions(
            self.max_unmatched_rise, self.max_reask_rise, self.min_turns, self.on_hold
        )


class RolloutIn(ConditionsIn):
    version: int = Field(ge=1, le=MAX_INT, description="the candidate version's number")
    mode: Literal["shadow", "canary"]
    share: int = Field(0, ge=0, le=100, description="percent of conversations (canary)")


class RolloutOut(Schema):
    id: int
    environment: str
    live: int
    candidate: int
    mode: str
    share: int
    status: str = Field(description="running, waiting (for a publisher), halted, promoted, stopped")
    max_unmatched_rise: float | None
    max_reask_rise: float | None
    min_turns: int
    on_hold: str
    started_at: datetime
    ended_at: datetime | None
    reason: str
    figures: dict[str, Any] = Field(description="live against candidate on the turns so far")


def rollout_out(rollout: Rollout, *, fresh: bool = False) -> dict[str, Any]:
    """The rollout as the API shows it; `fresh`: figures counted now, not the last check's."""
    return {
        **{
            f: getattr(rollout, f)
            for f in (
                "id",
                "mode",
                "share",
                "status",
                "max_unmatched_rise",
                "max_reask_rise",
                "min_turns",
                "on_hold",
                "started_at",
                "ended_at",
                "reason",
            )
        },  # fmt: skip
        "environment": rollout.environment.name,
        "live": rollout.live.number,
        "candidate": rollout.candidate.number,
        "figures": figures(rollout) if fresh and rollout.is_served else rollout.figures,
    }


def _rollout(request: HttpRequest, slug: str, pk: int, perm: str | None = None) -> Rollout:
    profile = profile_for(request, slug) if perm is None else profile_for(request, slug, perm)
    return get_object_or_404(
        Rollout.objects.select_related("environment", "candidate", "live", "profile"),
        profile=profile,
        pk=pk,
    )


@router.post(
    "/{slug}/environments/{environment}/rollout",
    response={201: RolloutOut, **ERRORS},
    summary="Start a shadow or canary rollout of a version",
)
def create_rollout(
    request: HttpRequest, environment: Environment, payload: RolloutIn, slug: str = SLUG
) -> Status[dict[str, Any]]:
    """Agents are told of the candidate at their next pull (docs/pack-format.md, "Rollouts over HTTP")."""
    profile = profile_for(request, slug, PUBLISH)
    version = get_object_or_404(Version, profile=profile, number=payload.version)
    rollout = start_rollout(
        profile,
        environment,
        version,
        mode=payload.mode,
        share=payload.share,
        conditions=payload.conditions(),
        user=request.auth,  # type: ignore[attr-defined]
    )
    return Status(201, rollout_out(rollout))


@router.get(
    "/{slug}/environments/{environment}/rollout",
    response={200: RolloutOut, **ERRORS},
    summary="The rollout agents are told of, with its figures",
)
def get_served_rollout(
    request: HttpRequest, environment: Environment, slug: str = SLUG
) -> dict[str, Any]:
    profile = profile_for(request, slug)
    env = profile.environments.filter(name=environment).first()
    rollout = served_rollout(env) if env is not None else None
    if rollout is None:
        raise Http404
    return rollout_out(rollout, fresh=True)


@router.get("/{slug}/rollouts/{rollout_id}", response={200: RolloutOut, **ERRORS})
def get_rollout(request: HttpRequest, rollout_id: int, slug: str = SLUG) -> dict[str, Any]:
    return rollout_out(_rollout(request, slug, rollout_id), fresh=True)


@router.put("/{slug}/rollouts/{rollout_id}/conditions", response={200: RolloutOut, **ERRORS})
def put_conditions(
    request: HttpRequest, rollout_id: int, payload: ConditionsIn, slug: str = SLUG
) -> dict[str, Any]:
    rollout = _rollout(request, slug, rollout_id, PUBLISH)
    user = require(request, PUBLISH)
    return rollout_out(set_conditions(rollout, payload.conditions(), user=user))


@router.post("/{slug}/rollouts/{rollout_id}/stop", response={200: RolloutOut, **ERRORS})
def stop_rollout(request: HttpRequest, rollout_id: int, slug: str = SLUG) -> dict[str, Any]:
    """End it without promoting: agents are back on live at their next pull."""
    rollout = _rollout(request, slug, rollout_id, PUBLISH)
    return rollout_out(stop(rollout, user=request.auth))  # type: ignore[attr-defined]


@router.post("/{slug}/rollouts/{rollout_id}/promote", response={200: RolloutOut, **ERRORS})
def promote_rollout(request: HttpRequest, rollout_id: int, slug: str = SLUG) -> dict[str, Any]:
    """A publisher promotes the candidate (the audit keeps the figures as they stood)."""
    rollout = _rollout(request, slug, rollout_id, PUBLISH)
    found = figures(rollout) if rollout.is_served else rollout.figures
    promoted = promote_candidate(
        rollout,
        "promoted by a publisher",
        found,
        user=request.auth,  # type: ignore[attr-defined]
    )
    return rollout_out(promoted)
