"""The playground: type a message, see the live verdict; hold a conversation; try thresholds.

Routing a message is not an edit, so a viewer may GET and POST here; applying the what-if
thresholds and saving a test case need the editor role. The conversation travels in the form
(hidden `turn` fields), so the page works without JavaScript, and is also kept in the person's
session for this profile, so a reload (or coming back later) finds it where it was. The session
belongs to one login: another user never sees it. With htmx, typing swaps only the verdict
(`#decision` partial); sending a turn, resetting or applying swaps the whole workspace
(`#workspace`); saving a test case swaps its details. Without htmx, every action that changes
something (send, reset, apply, save) answers with a redirect (post/redirect/get).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django_htmx.http import reswap, retarget, trigger_client_event

from routing_core import MAX_MESSAGE_CHARS, PackError
from studio.models import Profile, TestCase
from studio.playground.turns import MENU_CHOICE, Outcome, decided_by, route_turn, turn_words
from studio.playground.wording import lead_needed_words
from studio.shared.drafts import ScorerUnavailable, model_note, playground_router
from studio.shared.edits import save_profile
from studio.shared.errors import Conflict, Refused
from studio.shared.labels import plain_problem
from studio.shared.packs import pack_report
from studio.shared.pages import HtmxHttpRequest, View, get_profile
from studio.shared.roles import can_edit, can_view
from studio.suites import Turn, add_test_case, save_conversation

TEMPLATE = "studio/playground/playground.html"
MAX_TURNS = 50
EDITS = {"apply", "save", "save_conversation"}
ACTIONS = ["check", "send", "reset", "revert", "apply", "save", "save_conversation"]


class PlaygroundForm(forms.Form):
    """What the page posts; markup is written by hand in the template (sliders, transcript)."""

    message = forms.CharField(required=False, strip=False, max_length=MAX_MESSAGE_CHARS)
    incumbent = forms.CharField(required=False, max_length=64)
    floor = forms.FloatField(required=False, min_value=-1.0, max_value=1.0)
    near_tie_margin = forms.FloatField(required=False, min_value=0.0, max_value=1.0)
    expected_route = forms.CharField(required=False, max_length=80)  # a name, or "menu:" a name
    profile_revision = forms.IntegerField(required=False)
    action = forms.ChoiceField(required=False, choices=[(a, a) for a in ACTIONS])
    show_all = forms.BooleanField(required=False)


@dataclass(frozen=True)
class TranscriptTurn:
    message: str
    route: str | None
    verdict: str
    by: str
    incumbent: str | None = None  # where the conversation was when this turn was sent
    offered: tuple[str, ...] = ()  # a menu's routes: a saved conversation expects one of them
    why: str = ""  # why it stayed or moved, as the verdict said it (turns.explain)

    @property
    def encoded(self) -> str:
        fields = [self.message, self.route, self.verdict, self.by, self.incumbent]
        return json.dumps([*fields, list(self.offered), self.why])

    @property
    def words(self) -> str:
        """The turn as a person says it ("chose shipping · the scores decided"), not "move"."""
        return turn_words(self.verdict, self.route, self.incumbent, self.by)


@dataclass
class State:
    """The playground's inputs, as posted (or their defaults from the profile)."""

    message: str = ""
    incumbent: str = ""
    floor: float | None = None
    near_tie_margin: float | None = None
    expected_route: str = ""
    profile_revision: int | None = None
    action: str = "check"
    show_all: bool = False
    turns: list[TranscriptTurn] = field(default_factory=list)
    input_error: str = ""  # a message that cannot be routed (too long): shown, kept, not routed


def viewer_page(view: View) -> View:
    """Signed in with any studio role; the view itself guards the editing actions."""

    @wraps(view)
    def wrapper(request: HtmxHttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not can_view(request.user):
            raise PermissionDenied("You have no role in the studio.")
        return view(request, *args, **kwargs)

    return login_required(wrapper)


@require_http_methods(["GET", "POST"])
@viewer_page
def playground(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    profile = get_profile(slug)
    state = _read(request)
    if request.method == "GET":
        state = _restored(request, profile, state)
    if state.action in EDITS and not can_edit(request.user):
        raise PermissionDenied("Applying thresholds and saving test cases need the editor role.")
    return _HANDLERS[state.action](request, profile, state)


def _check(request: HtmxHttpRequest, profile: Profile, state: State) -> HttpResponse:
    context = _run(profile, state)
    if request.htmx:
        return _partial(request, "decision", context, oob=True)
    return _page(request, profile, context)


def _send(request: HtmxHttpRequest, profile: Profile, state: State) -> HttpResponse:
    context = _run(profile, state)
    outcome: Outcome | None = context.get("outcome")
    if outcome is not None and state.message.strip():
        d = outcome.decision
        turn = TranscriptTurn(
            state.message, d.route, d.verdict, decided_by(d), state.incumbent or None,
            tuple(d.offered), outcome.why,
        )  # fmt: skip
        state = replace(
            state,
            turns=[*state.turns, turn][-MAX_TURNS:],
            # A turn that lands nowhere (menu, unmatched) leaves the conversation where it was.
            incumbent=d.route or state.incumbent,
            message="",
        )
        context["state"] = state
        _remember(request, profile, state)
    if not request.htmx:
        return _redirect(profile, state)
    return _workspace(request, profile, context)


def _reset(request: HtmxHttpRequest, profile: Profile, state: State) -> HttpResponse:
    fresh = State(floor=state.floor, near_tie_margin=state.near_tie_margin, show_all=state.show_all)
    _remember(request, profile, fresh)
    if not request.htmx:
        return _redirect(profile, fresh)
    return _workspace(request, profile, _run(profile, fresh))


def _save_conversation(request: HtmxHttpRequest, profile: Profile, state: State) -> HttpResponse:
    turns = [Turn(t.message, t.incumbent, t.route, t.verdict, t.offered) for t in state.turns]
    cases = save_conversation(profile, turns, user=request.user) if turns else []
    if cases:
        skipped = len(turns) - len(cases)
        notice = (
            f"Saved the conversation as test case “{cases[0].conversation}”: "
            f"{len(cases)} turn{'s' if len(cases) != 1 else ''}"
            + (
                f" ({skipped} menu turn{'s' if skipped != 1 else ''} left out: "
                "it offered no route to expect)."
                if skipped
                else "."
            )
        )
    else:
        notice = "Nothing to save: send a turn that lands on a route (or on none) first."
    if not request.htmx:
        (messages.success if cases else messages.warning)(request, notice)
        return _redirect(profile, state)
    context = _run(profile, state)
    context["conversation_notice"] = notice
    return _workspace(request, profile, context, status=200 if cases else 422)


def _revert(request: HtmxHttpRequest, profile: Profile, state: State) -> HttpResponse:
    reverted = replace(state, floor=None, near_tie_margin=None)
    return _workspace(request, profile, _run(profile, reverted))


def _apply(request: HtmxHttpRequest, profile: Profile, state: State) -> HttpResponse:
    edited = copy.copy(profile)
    edited.floor = _floor_to_store(profile, state.floor)
    if state.near_tie_margin is not None:
        edited.near_tie_margin = state.near_tie_margin
    expected = state.profile_revision if state.profile_revision is not None else profile.revision
    status, errors = 200, []
    try:
        save_profile(edited, user=request.user, expected_revision=expected)
    except Conflict as exc:
        status, errors = 409, [str(exc)]
    except Refused as exc:
        status, errors = 422, [plain_problem(path, message) for path, message in exc.errors]
    if status == 200 and not request.htmx:
        messages.success(request, "Applied the thresholds to the profile.")
        return _redirect(profile, state)
    fresh = get_profile(profile.slug)
    after = replace(state, floor=None, near_tie_margin=None) if status == 200 else state
    context = _run(fresh, after)
    context.update(apply_errors=errors, applied="Applied to the profile." if status == 200 else "")
    response = _workspace(request, fresh, context, status=status)
    return trigger_client_event(response, "pack-changed") if status == 200 else response


def _save(request: HtmxHttpRequest, profile: Profile, state: State) -> HttpResponse:
    context = _run(profile, state)
    outcome: Outcome | None = context.get("outcome")
    if outcome is None or not state.message.strip():
        context["errors"] = ["Type a message first: a test case needs one."]
        return _details_or_page(request, profile, context, status=422)
    expect_menu = state.expected_route.startswith(MENU_CHOICE)
    route = state.expected_route.removeprefix(MENU_CHOICE)
    try:
        case = add_test_case(
            profile,
            outcome.decision,
            state.message,
            route,
            user=request.user,
            expect_menu=expect_menu,
        )
    except Refused as exc:
        context["errors"] = [message for _, message in exc.errors]
        return _details_or_page(request, profile, context, status=422)
    notice = f"Saved as test case #{case.pk}: expects {_expectation(case)}."
    if not request.htmx:
        messages.success(request, notice)
        return _redirect(profile, state)
    context["notice"] = notice
    return _details_or_page(request, profile, context)


def _expectation(case: TestCase) -> str:
    """What a saved case expects, in words ("a menu offering billing", "no route")."""
    if case.expected_verdict == "menu":
        return f"a menu offering {case.expected_route}"
    return case.expected_route or "no route"


_HANDLERS: dict[str, Callable[[HtmxHttpRequest, Profile, State], HttpResponse]] = {
    "check": _check,
    "send": _send,
    "reset": _reset,
    "revert": _revert,
    "apply": _apply,
    "save": _save,
    "save_conversation": _save_conversation,
}


# -- helpers ------------------------------------------------------------------------------------


def _read(request: HtmxHttpRequest) -> State:
    data = request.POST if request.method == "POST" else request.GET
    form = PlaygroundForm(data)
    form.is_valid()  # an invalid field falls back to its default below
    clean = form.cleaned_data
    error = " ".join(str(e) for e in form.errors.get("message", []))
    return State(
        message=data.get("message", "") if error else clean.get("message") or "",
        input_error=error,
        incumbent=clean.get("incumbent") or "",
        floor=clean.get("floor"),
        near_tie_margin=clean.get("near_tie_margin"),
        expected_route=clean.get("expected_route") or "",
        profile_revision=clean.get("profile_revision"),
        action=clean.get("action") or "check",
        show_all=bool(clean.get("show_all")),
        turns=_turns(data.getlist("turn")),
    )


def _turns(encoded: list[str]) -> list[TranscriptTurn]:
    turns = []
    for raw in encoded[-MAX_TURNS:]:
        try:
            message, route, verdict, by, *rest = json.loads(raw)
        except (ValueError, TypeError):
            continue  # a tampered turn is dropped, not an error
        incumbent = rest[0] if rest and isinstance(rest[0], str) else None
        offered = rest[1] if len(rest) > 1 and isinstance(rest[1], list) else []
        names = tuple(str(name) for name in offered[:MAX_TURNS])
        why = rest[2] if len(rest) > 2 and isinstance(rest[2], str) else ""
        turns.append(
            TranscriptTurn(
                str(message),
                route and str(route),
                str(verdict),
                str(by),
                incumbent,
                names,
                why[:500],
            )  # fmt: skip
        )
    return turns


def _session_key(profile: Profile) -> str:
    return f"playground:{profile.pk}"


def _remember(request: HtmxHttpRequest, profile: Profile, state: State) -> None:
    """Keep the conversation in this login's session, so that a reload finds it again."""
    request.session[_session_key(profile)] = {
        "turns": [t.encoded for t in state.turns],
        "incumbent": state.incumbent,
    }


def _restored(request: HtmxHttpRequest, profile: Profile, state: State) -> State:
    """A page load without a posted conversation continues the one kept in the session."""
    kept = request.session.get(_session_key(profile))
    if state.turns or not isinstance(kept, dict):
        return state
    turns = _turns([t for t in kept.get("turns", []) if isinstance(t, str)])
    incumbent = state.incumbent
    if "incumbent" not in request.GET and isinstance(kept.get("incumbent"), str):
        incumbent = kept["incumbent"]
    return replace(state, turns=turns, incumbent=incumbent)


def _run(profile: Profile, state: State) -> dict[str, Any]:
    """Route the state's message; the context every rendering of the page shares."""
    context: dict[str, Any] = {"profile": profile, "state": state}
    try:
        compiled = playground_router(profile)
    except PackError as exc:
        context["pack_errors"] = exc.errors
        context["is_scorer_unavailable"] = isinstance(exc, ScorerUnavailable)
        return context
    context["model"] = model_note(compiled)
    router = compiled.router
    if router is None:  # the first model is training: nothing to score with yet
        context["route_names"] = list(
            profile.routes.order_by("order").values_list("name", flat=True)
        )
        return context
    scorer_floor = router.scorer.info.floor
    effective_floor = profile.floor if profile.floor is not None else scorer_floor
    overrides = _overrides(profile, state, effective_floor)
    context.update(
        route_names=router.pack.route_names,
        slider_floor=state.floor if "floor" in overrides else (effective_floor or 0.0),
        slider_margin=overrides.get("near_tie_margin", profile.near_tie_margin),
        profile_floor=effective_floor,
        profile_lead=lead_needed_words(profile.near_tie_margin),
        overridden=sorted(overrides),
    )
    if state.message.strip() and not state.input_error:
        outcome = route_turn(profile, state.message, state.incumbent, overrides)
        context.update(outcome=outcome, rows=outcome.shown_rows(state.show_all))
    return context


def _overrides(profile: Profile, state: State, effective_floor: float | None) -> dict[str, Any]:
    """Only the sliders that moved away from the profile's values override its policy."""
    overrides: dict[str, Any] = {}
    if state.floor is not None and _is_moved(state.floor, effective_floor):
        overrides["floor"] = state.floor
    margin = state.near_tie_margin
    if margin is not None and _is_moved(margin, profile.near_tie_margin):
        overrides["near_tie_margin"] = margin
    return overrides


def _is_moved(value: float, profile_value: float | None) -> bool:
    """Whether a slider left the profile's value. A slider shows and posts the profile's value
    to its 0.01 step (0.10 for a floor of 0.1003; 0.00 when there is none), so only a value it
    could not have started on counts as moved."""
    return f"{value:.2f}" != f"{profile_value or 0.0:.2f}"


def _floor_to_store(profile: Profile, floor: float | None) -> float | None:
    """Keep "the scorer's own floor" (None) when the slider sits on it."""
    if floor is None:
        return profile.floor
    router = playground_router(profile).router
    scorer_floor = router.scorer.info.floor if router is not None else None
    return None if profile.floor is None and _same(floor, scorer_floor) else floor


def _same(a: float, b: float | None) -> bool:
    return b is not None and math.isclose(a, b, abs_tol=1e-9)


def _page(
    request: HtmxHttpRequest, profile: Profile, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    context.update(report=pack_report(profile), can_edit=can_edit(request.user), tab="playground")
    return render(request, TEMPLATE, context, status=status)


def _partial(
    request: HtmxHttpRequest, name: str, context: dict[str, Any], status: int = 200, **extra: Any
) -> HttpResponse:
    context.update(can_edit=can_edit(request.user), **extra)
    return render(request, f"{TEMPLATE}#{name}", context, status=status)


def _workspace(
    request: HtmxHttpRequest, profile: Profile, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    if not request.htmx:
        return _page(request, profile, context, status)
    response = _partial(request, "workspace", context, status)
    return reswap(retarget(response, "#workspace"), "outerHTML")


def _details_or_page(
    request: HtmxHttpRequest, profile: Profile, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    if not request.htmx:
        return _page(request, profile, context, status)
    return _partial(request, "details", context, status)


def _redirect(profile: Profile, state: State) -> HttpResponse:
    """Back to the page (post/redirect/get), with the message, route and sliders as they were."""
    fields = {"message": state.message, "incumbent": state.incumbent}
    sliders = {"floor": state.floor, "near_tie_margin": state.near_tie_margin}
    fields.update({k: f"{v:.6f}" for k, v in sliders.items() if v is not None})
    query = urlencode(fields)
    return redirect(f"{reverse('playground', args=[profile.slug])}?{query}")
