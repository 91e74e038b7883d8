"""API: profiles — list, create, read, edit (optimistic locking), delete."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Status

from studio.models import Profile
from studio.publishing import delete_profile
from studio.shared.api_access import USER_AUTH, profile_for, require
from studio.shared.edits import create_profile, save_profile
from studio.shared.errors import Conflict
from studio.shared.roles import EDIT, VIEW
from studio.shared.schemas import ERRORS, SLUG, ProfileIn, ProfileOut, ProfilePatch

router = Router(tags=["profiles"], auth=USER_AUTH)


@router.get("", response={200: list[ProfileOut], **ERRORS})
def list_profiles(request: HttpRequest) -> list[Profile]:
    require(request, VIEW)
    return list(Profile.objects.all())


@router.post("", response={201: ProfileOut, **ERRORS}, operation_id="create_profile")
def create(request: HttpRequest, payload: ProfileIn) -> Status[Profile]:
    user = require(request, EDIT)
    if Profile.objects.filter(slug=payload.slug).exists():
        raise Conflict(f"a profile '{payload.slug}' exists")
    return Status(201, create_profile(Profile(**payload.dict()), user=user))


@router.get("/{slug}", response={200: ProfileOut, **ERRORS}, operation_id="read_profile")
def read(request: HttpRequest, slug: str = SLUG) -> Profile:
    return profile_for(request, slug)


@router.patch("/{slug}", response={200: ProfileOut, **ERRORS}, operation_id="edit_profile")
def edit(request: HttpRequest, payload: ProfilePatch, slug: str = SLUG) -> Profile:
    profile = profile_for(request, slug, EDIT)
    changes = payload.dict(exclude_unset=True)
    revision = changes.pop("revision")
    for name, value in changes.items():
        if value is None and name not in _NULLABLE:  # null clears a text, leaves the rest
            value = "" if name in _BLANKABLE else getattr(profile, name)
        setattr(profile, name, value)
    save_profile(profile, user=request.auth, expected_revision=revision)  # type: ignore[attr-defined]
    return profile


_BLANKABLE = {"description", "default_route", "question_pattern", "name"}
_NULLABLE = {"floor", "action_verbs", "knowledge_verbs"}


@router.delete("/{slug}", response={204: None, **ERRORS}, operation_id="delete_profile")
def delete(request: HttpRequest, slug: str = SLUG) -> Status[None]:
    profile = profile_for(request, slug, EDIT)
    delete_profile(profile, user=request.auth)  # type: ignore[attr-defined]
    return Status(204, None)
