"""The editable tables of routes, rules and tools: add, edit inline, reorder, delete.

One page template per kind holds the table and its partials (`item-row`, `edit-row`,
`delete-row`, `items`); htmx requests get the partial, plain requests the whole page with the same
row in the same state, so page and fragment cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from studio.authoring.conflicts import reshown, with_choices
from studio.authoring.forms import (
    PackForm,
    ProfileForm,
    RouteAddForm,
    RouteForm,
    RuleForm,
    ToolForm,
)
from studio.models import Profile, ProfileItem, Route, Rule, Tool
from studio.shared.edits import delete_item, move_item, route_references, save_item
from studio.shared.errors import Conflict, Refused
from studio.shared.labels import plain_problem
from studio.shared.pages import HtmxHttpRequest, fragment, get_profile, profile_context, studio_page


@dataclass(frozen=True)
class Kind:
    model: type[ProfileItem]
    form: type[PackForm]
    add_form: type[PackForm]
    template: str
    page: str  # url name of the page that lists them

    def make_form(self, profile: Profile, *args: Any, add: bool = False, **kwargs: Any) -> PackForm:
        form_class = self.add_form if add else self.form
        if form_class is RuleForm:
            kwargs["profile"] = profile
        # The add and edit forms share their page with the profile form (which has a name and
        # a description too): distinct ids keep each label on its own field.
        kwargs.setdefault("auto_id", "id_add_%s" if add else "id_edit_%s")
        return form_class(*args, **kwargs)


KINDS = {
    "routes": Kind(
        Route, RouteForm, RouteAddForm, "studio/authoring/profile_detail.html", "profile-detail"
    ),
    "rules": Kind(Rule, RuleForm, RuleForm, "studio/authoring/rules.html", "rules"),
    "tools": Kind(Tool, ToolForm, ToolForm, "studio/authoring/tools.html", "tools"),
}


def page_context(
    request: HtmxHttpRequest, kind: Kind, profile: Profile, **extra: Any
) -> dict[str, Any]:
    extra.setdefault("add_form", kind.make_form(profile, add=True))
    if kind.model is Route:
        extra.setdefault("profile_form", ProfileForm(instance=profile))
    items = kind.model._default_manager.filter(profile=profile).order_by("order", "pk")
    return profile_context(request, profile, kind=kind, items=list(items), **extra)


def render_page(
    request: HtmxHttpRequest, kind: Kind, profile: Profile, *, status: int = 200, **extra: Any
) -> HttpResponse:
    context = page_context(request, kind, profile, **extra)
    return render(request, kind.template, context, status=status)


def _item(kind: Kind, profile: Profile, pk: int) -> Any:
    return get_object_or_404(kind.model, profile=profile, pk=pk)


def _row(
    request: HtmxHttpRequest,
    kind: Kind,
    profile: Profile,
    partial: str,
    status: int = 200,
    **ctx: Any,
) -> HttpResponse:
    """One row (htmx) or the whole page with that row in the same state (no JS)."""
    if request.htmx:
        context = profile_context(request, profile, kind=kind, **ctx)
        return fragment(request, f"{kind.template}#{partial}", context, status=status)
    state = {"edit-row": "editing", "delete-row": "deleting"}.get(partial)
    extra = {state: ctx["item"].pk} if state else {}
    rest = {key: value for key, value in ctx.items() if key != "item"}
    return render_page(request, kind, profile, status=status, **rest, **extra)


@require_GET
@studio_page
def item_row(request: HtmxHttpRequest, slug: str, kind: str, pk: int) -> HttpResponse:
    k, profile = KINDS[kind], get_profile(slug)
    if not request.htmx:
        return redirect(k.page, slug=slug)
    return _row(request, k, profile, "item-row", item=_item(k, profile, pk))


@require_http_methods(["GET", "POST"])
@studio_page
def item_edit(request: HtmxHttpRequest, slug: str, kind: str, pk: int) -> HttpResponse:
    k, profile = KINDS[kind], get_profile(slug)
    item = _item(k, profile, pk)
    if request.method == "GET":
        return _row(
            request, k, profile, "edit-row", item=item, form=k.make_form(profile, instance=item)
        )
    form = k.make_form(profile, with_choices(request.POST), instance=item)
    if form.is_valid():
        try:
            save_item(
                form.instance, user=request.user, expected_revision=form.cleaned_data["revision"]
            )
        except Conflict as exc:
            return _conflict(request, k, profile, item, exc)
        except Refused as exc:
            form.add_pack_errors(exc.errors, exc.prefix)
        else:
            if request.htmx:
                return _row(request, k, profile, "item-row", item=form.instance)
            messages.success(request, f"Saved {form.instance}.")
            return redirect(k.page, slug=slug)
    return _row(request, k, profile, "edit-row", 422, item=item, form=form)


def _conflict(
    request: HtmxHttpRequest, kind: Kind, profile: Profile, item: ProfileItem, exc: Conflict
) -> HttpResponse:
    """Someone saved first: their version beside your text, which the form keeps; the revision
    moves to theirs, so saving again applies yours (with the fields you chose of theirs) on top."""
    current = exc.current
    if current is None:  # deleted meanwhile: nothing to merge with, the text stays
        form = kind.make_form(profile, request.POST, instance=item)
        form.add_error(None, str(exc))
        return _row(request, kind, profile, "edit-row", 409, item=item, form=form)
    yours = kind.make_form(profile, request.POST, instance=item)
    theirs = kind.make_form(profile, instance=current)
    conflict, data = reshown(request.POST, yours, theirs, exc, current.revision)
    form = kind.make_form(profile, data, instance=current)
    return _row(request, kind, profile, "edit-row", 409, item=current, form=form, conflict=conflict)


@require_POST
@studio_page
def item_add(request: HtmxHttpRequest, slug: str, kind: str) -> HttpResponse:
    k, profile = KINDS[kind], get_profile(slug)
    form = k.make_form(profile, request.POST, add=True, instance=k.model(profile=profile))
    status = 422
    if form.is_valid():
        try:
            save_item(form.instance, user=request.user)
        except Refused as exc:
            form.add_pack_errors(exc.errors, exc.prefix)
        else:
            if not request.htmx:
                messages.success(request, f"Added {form.instance}.")
                return redirect(k.page, slug=slug)
            form, status = k.make_form(profile, add=True), 200
    if request.htmx:
        context = page_context(request, k, profile, add_form=form)
        return fragment(request, f"{k.template}#items", context, status=status)
    return render_page(request, k, profile, status=status, add_form=form)


@require_http_methods(["GET", "POST"])
@studio_page
def item_delete(request: HtmxHttpRequest, slug: str, kind: str, pk: int) -> HttpResponse:
    k, profile = KINDS[kind], get_profile(slug)
    item = _item(k, profile, pk)
    references = route_references(item) if isinstance(item, Route) else None
    if request.method == "GET":
        return _row(request, k, profile, "delete-row", item=item, references=references)
    try:
        delete_item(item, user=request.user)
    except Refused as exc:
        reasons = [plain_problem(path, message) for path, message in exc.errors]
        context = {"item": item, "delete_errors": reasons, "references": references}
        return _row(request, k, profile, "delete-row", 422, **context)
    if request.htmx:
        return fragment(request, "studio/shared/_empty.html", profile_context(request, profile))
    messages.success(request, f"Deleted {item}.")
    return redirect(k.page, slug=slug)


@require_POST
@studio_page
def item_move(request: HtmxHttpRequest, slug: str, kind: str, pk: int) -> HttpResponse:
    k, profile = KINDS[kind], get_profile(slug)
    direction: Literal["up", "down"] = "up" if request.POST.get("direction") == "up" else "down"
    move_item(_item(k, profile, pk), direction, user=request.user)
    if request.htmx:
        return fragment(request, f"{k.template}#items", page_context(request, k, profile))
    return redirect(k.page, slug=slug)


@require_GET
@studio_page
def item_page(request: HtmxHttpRequest, slug: str, kind: str) -> HttpResponse:
    return render_page(request, KINDS[kind], get_profile(slug))
