"""API: a profile's routes, rules, tools and test cases — list, create, read, edit, delete.

The four resources behave alike, so one function registers each; edits carry the revision that
was read (409 when someone saved since) and go through the same services as the pages.
"""

# No `from __future__ import annotations`: ninja reads the handlers' annotations at runtime,
# and here they are the schema classes passed to `register`, not importable names.

from typing import Any

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Router, Schema, Status
from ninja.params import functions as params

from studio.models import ProfileItem, Route, Rule, TestCase, Tool
from studio.shared.api_access import USER_AUTH, profile_for
from studio.shared.edits import delete_item, save_item
from studio.shared.errors import Conflict
from studio.shared.roles import EDIT, VIEW
from studio.shared.schemas import (
    ERRORS,
    MAX_INT,
    SLUG,
    ConflictOut,
    RouteIn,
    RouteOut,
    RoutePatch,
    RuleIn,
    RuleOut,
    RulePatch,
    TestCaseIn,
    TestCaseOut,
    TestCasePatch,
    ToolIn,
    ToolOut,
    ToolPatch,
)
from studio.suites import delete_case, save_case

router = Router(auth=USER_AUTH)
ITEM_ID: Any = params.Path(..., ge=1, le=MAX_INT)


def _save(item: ProfileItem, user: Any, revision: int | None = None) -> None:
    if isinstance(item, TestCase):
        save_case(item, user=user, expected_revision=revision)
    else:
        save_item(item, user=user, expected_revision=revision)


def _delete(item: ProfileItem, user: Any) -> None:
    if isinstance(item, TestCase):
        delete_case(item, user=user)
    else:
        delete_item(item, user=user)


def register(
    kind: str,
    model: type[ProfileItem],
    schema_in: type[Schema],
    schema_out: type[Schema],
    schema_patch: type[Schema],
) -> None:
    """List, create, read, edit and delete handlers for one kind of profile item."""
    base, one, tags = f"/{{slug}}/{kind}", f"/{{slug}}/{kind}/{{item_id}}", [kind]

    def _get(request: HttpRequest, slug: str, item_id: int, perm: str) -> Any:
        profile = profile_for(request, slug, perm)
        return get_object_or_404(model, profile=profile, pk=item_id)

    many = list[schema_out]  # type: ignore[valid-type]

    @router.get(base, response={200: many, **ERRORS}, tags=tags, operation_id=f"list_{kind}")
    def list_items(request: HttpRequest, slug: str = SLUG) -> list[Any]:
        profile = profile_for(request, slug)
        return list(model._default_manager.filter(profile=profile).order_by("order", "pk"))

    @router.post(
        base, response={201: schema_out, **ERRORS}, tags=tags, operation_id=f"create_{kind}"
    )
    def create(request: HttpRequest, payload: schema_in, slug: str = SLUG) -> Status[Any]:  # type: ignore[valid-type]
        item = model(profile=profile_for(request, slug, EDIT), **payload.dict())  # type: ignore[attr-defined]
        _save(item, request.auth)  # type: ignore[attr-defined]
        return Status(201, item)

    @router.get(one, response={200: schema_out, **ERRORS}, tags=tags, operation_id=f"read_{kind}")
    def read(request: HttpRequest, slug: str = SLUG, item_id: int = ITEM_ID) -> Any:
        return _get(request, slug, item_id, VIEW)

    @router.patch(
        one,
        response={200: schema_out, **ERRORS, 409: ConflictOut},
        tags=tags,
        operation_id=f"edit_{kind}",
    )
    def edit(
        request: HttpRequest,
        payload: schema_patch,  # type: ignore[valid-type]
        slug: str = SLUG,
        item_id: int = ITEM_ID,
    ) -> Any:
        item = _get(request, slug, item_id, EDIT)
        changes = payload.dict(exclude_unset=True)  # type: ignore[attr-defined]
        revision = changes.pop("revision")
        for name, value in changes.items():
            if value is not None or name in ("expected_tools", "dropped_tools"):  # null: unchanged
                setattr(item, name, value)
        try:
            _save(item, request.auth, revision)  # type: ignore[attr-defined]
        except Conflict as exc:
            current = exc.current and schema_out.model_validate(exc.current).model_dump(mode="json")
            exc.versions = {"current": current, "yours": {**changes, "revision": revision}}
            raise
        return item

    @router.delete(one, response={204: None, **ERRORS}, tags=tags, operation_id=f"delete_{kind}")
    def delete(request: HttpRequest, slug: str = SLUG, item_id: int = ITEM_ID) -> Status[None]:
        _delete(_get(request, slug, item_id, EDIT), request.auth)  # type: ignore[attr-defined]
        return Status(204, None)


register("routes", Route, RouteIn, RouteOut, RoutePatch)
register("rules", Rule, RuleIn, RuleOut, RulePatch)
register("tools", Tool, ToolIn, ToolOut, ToolPatch)
register("test-cases", TestCase, TestCaseIn, TestCaseOut, TestCasePatch)
