"""The API's request and response schemas: `XIn` creates, `XPatch` edits (with the revision read),
`XOut` answers. Every string refuses NUL and lone surrogates (no database stores them) and every
number is bounded, so that no input can reach the database in a shape it rejects."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from ninja import Schema
from ninja.params import functions as params
from pydantic import AfterValidator, Field

from routing_core.limits import MAX_DESCRIPTION
from routing_core.repair import EditKind

MAX_INT = 2**31 - 1
SLUG_PATTERN = r"^[-a-zA-Z0-9_]+$"


def clean_text(value: str) -> str:
    """The text, if a database can store it (no NUL, no lone surrogate); else ValueError."""
    if "\x00" in value:
        raise ValueError("NUL characters are not allowed")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("invalid Unicode (a lone surrogate)") from exc
    return value


def _clean_json(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [_clean_json(v) for v in value]
    if isinstance(value, dict):
        return {clean_text(k): _clean_json(v) for k, v in value.items()}
    return value


Name = Annotated[str, Field(max_length=64), AfterValidator(clean_text)]
Long = Annotated[str, Field(max_length=128), AfterValidator(clean_text)]
DisplayName = Annotated[str, Field(max_length=200), AfterValidator(clean_text)]
Text = Annotated[str, Field(max_length=MAX_DESCRIPTION), AfterValidator(clean_text)]
Slug = Annotated[str, Field(min_length=1, max_length=64, pattern=SLUG_PATTERN)]
Revision = Annotated[int, Field(ge=1, le=MAX_INT)]
Finite = Annotated[float, Field(allow_inf_nan=False, ge=-1e6, le=1e6)]
Small = Annotated[int, Field(ge=0, le=1000)]
Strictness = Literal["assist", "guard", "rails"]
ActionKind = Literal["answer", "delegate", "stuck"]
MatchKind = Literal["keywords", "regex", "all"]


class ErrorItem(Schema):
    path: str
    message: str


class ErrorOut(Schema):
    detail: str
    errors: list[ErrorItem]


class ConflictOut(ErrorOut):
    """An edit someone else saved first: the object as they saved it (null: they deleted it)
    and the changes you sent, so a program can merge and send again with `current.revision`."""

    current: dict[str, Any] | None = None
    yours: dict[str, Any] | None = None


# -- profiles ---------------------------------------------------------------------------------------


class ProfileIn(Schema):
    slug: Slug
    name: Annotated[str, Field(min_length=1, max_length=200), AfterValidator(clean_text)]
    description: Text = ""


class ProfileOut(Schema):
    slug: str
    name: str
    description: str
    default_route: str
    floor: float | None
    out_of_scope: list[str]
    no_background: bool
    near_tie_margin: float
    menu_size: int
    strictness: str
    scorer_kind: str
    triage_mode: str
    ambiguity_confidence_floor: float
    min_action_signals: int
    action_verbs: list[str] | None
    knowledge_verbs: list[str] | None
    question_pattern: str
    revision: int
    draft_revision: int
    updated_at: datetime


class ProfilePatch(Schema):
    revision: Revision
    name: Annotated[str, Field(min_length=1, max_length=200), AfterValidator(clean_text)] | None = (
        None
    )
    description: Text | None = None
    default_route: Name | None = None
    floor: Finite | None = None
    out_of_scope: list[Text] | None = None
    no_background: bool | None = None
    near_tie_margin: Finite | None = None
    menu_size: Small | None = None
    strictness: Strictness | None = None
    triage_mode: Literal["off", "shadow", "enforce"] | None = None
    ambiguity_confidence_floor: Finite | None = None
    min_action_signals: Small | None = None
    action_verbs: list[Name] | None = None
    knowledge_verbs: list[Name] | None = None
    question_pattern: Text | None = None


# -- routes, rules, tools, test cases ---------------------------------------------------------------


class RouteIn(Schema):
    name: Name = Field(description="the identifier agents receive (docs/pack-format.md, Names)")
    display_name: DisplayName = Field("", description="the name people read, in any language")
    description: Text = ""
    examples: list[Text] = []
    keywords: list[Text] = []
    never: list[Text] = []
    action_kind: ActionKind = "answer"
    delegate_agent: Long = ""
    stuck_message: Text = ""


class RouteOut(RouteIn):
    id: int
    order: int
    revision: int


class RoutePatch(Schema):
    revision: Revision
    name: Name | None = None
    display_name: DisplayName | None = None
    description: Text | None = None
    examples: list[Text] | None = None
    keywords: list[Text] | None = None
    never: list[Text] | None = None
    action_kind: ActionKind | None = None
    delegate_agent: Long | None = None
    stuck_message: Text | None = None


class RuleIn(Schema):
    route_name: Name
    match_kind: MatchKind = "keywords"
    keywords: list[Text] = []
    regex: Text = ""
    all_of: Annotated[list[dict[str, Any]], AfterValidator(_clean_json)] = []
    examples: list[Text] = []


class RuleOut(RuleIn):
    id: int
    order: int
    revision: int


class RulePatch(Schema):
    revision: Revision
    route_name: Name | None = None
    match_kind: MatchKind | None = None
    keywords: list[Text] | None = None
    regex: Text | None = None
    all_of: Annotated[list[dict[str, Any]], AfterValidator(_clean_json)] | None = None
    examples: list[Text] | None = None


class ToolIn(Schema):
    name: Long
    description: Text = ""
    trigger_keywords: list[Text] = []
    always_include: bool = False


class ToolOut(ToolIn):
    id: int
    order: int
    revision: int


class ToolPatch(Schema):
    revision: Revision
    name: Long | None = None
    description: Text | None = None
    trigger_keywords: list[Text] | None = None
    always_include: bool | None = None


class TestCaseIn(Schema):
    message: Annotated[str, Field(min_length=1, max_length=8000), AfterValidator(clean_text)]
    incumbent: Name = ""
    expected_route: Name = ""
    expected_verdict: Literal["", "move", "stay", "menu", "unmatched"] = ""
    expected_triage: Literal["", "action", "knowledge", "ambiguous"] = ""
    expected_tools: list[Long] | None = None
    exact_tools: bool = False
    dropped_tools: list[Long] | None = None


class TestCaseOut(TestCaseIn):
    id: int
    order: int
    revision: int


class TestCasePatch(Schema):
    revision: Revision
    message: (
        Annotated[str, Field(min_length=1, max_length=8000), AfterValidator(clean_text)] | None
    ) = None
    incumbent: Name | None = None
    expected_route: Name | None = None
    expected_verdict: Literal["", "move", "stay", "menu", "unmatched"] | None = None
    expected_triage: Literal["", "action", "knowledge", "ambiguous"] | None = None
    expected_tools: list[Long] | None = None
    exact_tools: bool | None = None
    dropped_tools: list[Long] | None = None


# -- publishing -------------------------------------------------------------------------------------


class PublishIn(Schema):
    note: Text = ""
    environment: Literal["staging", "production"] | None = "staging"
    draft_revision: Revision | None = Field(
        None, description="the draft you reviewed; publishing a newer one is a 409"
    )
    reason: Text = Field(
        "", description="why you publish although the checks are red (required then, else a 409)"
    )


class CaseResultOut(Schema):
    message: str
    incumbent: str
    expected: str
    actual: str
    verdict: str
    passed: bool
    failures: list[str] = []


class VersionOut(Schema):
    number: int
    checksum: str
    published_by: str
    published_at: datetime
    note: str
    tests_passed: int
    tests_total: int
    test_results: list[CaseResultOut]


class EnvironmentOut(Schema):
    name: str
    version: int | None
    checksum: str | None
    revision: int
    updated_at: datetime


class PromoteIn(Schema):
    version: Revision
    revision: Revision | None = Field(
        None, description="the environment's revision you read; a newer one is a 409"
    )


class ChangeOut(Schema):
    section: str
    name: str
    kind: str
    field: str
    old: str
    new: str
    added: list[str]
    removed: list[str]


class OutcomeOut(Schema):
    route: str | None
    verdict: str
    tools: list[str]


class FlipOut(Schema):
    message: str
    incumbent: str
    old: OutcomeOut
    new: OutcomeOut


class DiffOut(Schema):
    old: str
    new: str
    changes: list[ChangeOut]
    flips: list[FlipOut]
    cases: int


# -- "find a fix" for a failing test case -----------------------------------------------------------


class FixEditOut(Schema):
    kind: EditKind = Field(description="what sort of edit (routing_core.repair_edits.EditKind)")
    route: str = Field(
        description="what it changes: a route, a tool (trigger kinds), a lexicon lane "
        "(`action` / `knowledge`: verb kinds), or `` for the profile's out-of-scope examples "
        "and near-tie margin"
    )
    text: str = Field(description="the keyword, example, verb or trigger; the new margin")
    source: str | None = Field(description="the route a moved example leaves; the old margin")
    description: str = Field(description="the edit in plain words")


class FixSearchOut(Schema):
    id: int
    test_case: int
    status: Literal["queued", "running", "done", "failed", "cancelled", "interrupted"] = Field(
        description="`queued` or `running`: ask `url` again after `Retry-After` seconds"
    )
    done: int = Field(description="candidate edits tried (each runs the whole suite)")
    total: int = Field(description="candidate edits to try; 0 while the model is learned")
    percent: int
    detail: str = Field(description="where the search stands, in plain words")
    draft_revision: int = Field(description="the draft revision searched")
    fix: FixEditOut | None = Field(description="the edit found, once done (null: none found)")
    applicable: bool = Field(
        description="a fix was found and the draft and test cases are still the ones searched"
    )
    warning: str = Field(
        description="set when the fix makes the case's own message a training or out-of-scope"
        " example (the case then passes by memory and tests nothing); empty otherwise"
    )
    reason: str = Field(description="why no edit was found")
    misses: list[str] = Field(description="what the case missed before any edit")
    tried: list[str] = Field(description="each candidate tried and what it did, in words")
    note: str
    error: str
    url: str = Field(description="this search in the API")
    page: str = Field(description="this search in the studio")


class FixAppliedOut(Schema):
    detail: str
    edit: FixEditOut
    draft_revision: int = Field(description="the profile's draft revision after the edit")


# What every resource's operations may answer besides success, and a profile's slug in a path.
ERRORS = {401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut, 422: ErrorOut}
SLUG: Any = params.Path(..., max_length=64, pattern=SLUG_PATTERN)
