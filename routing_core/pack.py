"""The pack: the one JSON document the studio exports and an agent runs (docs/pack-format.md)."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    StringConstraints,
    Tag,
    model_serializer,
    model_validator,
)

from routing_core._stored_arrays import check_model
from routing_core.limits import (
    MAX_ALL_MATCHES,
    MAX_DESCRIPTION,
    MAX_DISPLAY_NAME,
    MAX_ITEMS,
    MAX_LEXICON_WORD,
    MAX_MODEL_CELLS,
    MAX_MODEL_TERM_CHARS,
    MAX_MODEL_TERMS,
    MAX_NAME,
    MAX_ROUTES,
    MAX_TEXT,
    MAX_TOOL_NAME,
    total_errors,
)
from routing_core.policy import Policy
from routing_core.text import compile_user_regex

FORMAT = "route-pack"
# The format's major and minor version (docs/decisions.md, "Format compatibility"). A minor
# only adds optional fields an older reader of the same major may ignore; anything else is
# a major. Bump FORMAT_MINOR with each optional field added, and note it in MINOR_CHANGES.
FORMAT_VERSION = 1
FORMAT_MINOR = 12
# minor -> the optional fields it added (0: the format when minors were introduced; a pack of
# minor 0 does not write `format_minor`, so it reads as before in every reader).
MINOR_CHANGES: dict[int, str] = {
    0: "(the 1.0 format)",
    1: "out_of_scope; scorer.model.floor, .margin and .stale",
    2: "an embedding tier's floor and near_tie_margin are probabilities (before: cosines)",
    3: "scorer.model.bias",
    4: "a hybrid tier's fit_weight (at the top or in a cascade's tiers)",
    5: "an embedding or hybrid tier's head (at the top or in a cascade's tiers)",
    6: "scorer.model.semantic",
    7: "scorer.model.fitted_on",
    8: "policy.conversation",
    9: "a route's display_name",
    10: "no_background",
    11: "a hybrid tier's take_foreign (in a cascade's tiers)",
    12: "scorer.model.none_logit",
}
# The minor from which an embedding tier's declared thresholds are calibrated probabilities.
# Before it they were cosines, and such a pack is refused rather than misread (`codec.py`;
# docs/decisions.md, "A declared embedding floor's meaning").
PROBABILITY_THRESHOLDS_MINOR = 2
# Where each field a minor added sits, and that minor. `dump_pack` writes such a field only
# when it holds something, and stamps the pack with the highest minor among the fields it
# wrote: a pack that uses none of them is a 1.0 pack that every reader of major 1 reads.
MINOR_FIELDS: dict[tuple[str, ...], int] = {
    ("out_of_scope",): 1,
    ("scorer", "model", "floor"): 1,
    ("scorer", "model", "margin"): 1,
    ("scorer", "model", "stale"): 1,
    ("scorer", "model", "bias"): 3,
    ("scorer", "fit_weight"): 4,
    ("scorer", "tiers", "*", "fit_weight"): 4,  # "*": every tier of a cascade
    ("scorer", "head"): 5,
    ("scorer", "tiers", "*", "head"): 5,
    ("scorer", "model", "semantic"): 6,
    ("scorer", "model", "fitted_on"): 7,
    ("policy", "conversation"): 8,
    ("routes", "*", "display_name"): 9,
    ("no_background",): 10,
    ("scorer", "tiers", "*", "take_foreign"): 11,
    ("scorer", "model", "none_logit"): 12,
}


ROUTE_NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]*$"
AGENT_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@/-]*$"
TOOL_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_.-]*$"


def _compiles(pattern: str) -> str:
    compile_user_regex(pattern)  # the engine that will run it judges it
    return pattern


def _single_lowercase_token(word: str) -> str:
    if not re.fullmatch(r"[^\W_]+", word) or word != word.lower():
        raise ValueError("a lexicon entry is one lowercase word (letters and digits only)")
    return word


def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be blank")
    return text


def _matches(pattern: str, explanation: str) -> AfterValidator:
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if not compiled.match(value):
            raise ValueError(explanation)
        return value

    return AfterValidator(check)


RouteName = Annotated[
    str,
    StringConstraints(max_length=MAX_NAME),
    _matches(
        ROUTE_NAME_PATTERN,
        "an identifier uses only the letters a to z (no accents), digits, '-' and '_', no"
        " spaces, and starts with a letter or digit",
    ),
]
AgentId = Annotated[
    str,
    StringConstraints(max_length=MAX_TOOL_NAME),
    _matches(AGENT_ID_PATTERN, "an agent id is letters, digits and . _ : @ / - (no spaces)"),
]
ToolName = Annotated[
    str,
    StringConstraints(max_length=MAX_TOOL_NAME),
    _matches(TOOL_NAME_PATTERN, "a tool name is letters, digits, '_', '.' or '-', no spaces"),
]
Text = Annotated[str, StringConstraints(max_length=MAX_TEXT)]
# What people read for a route, in any language and script ("Réclamations"); never routes.
DisplayName = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_DISPLAY_NAME), AfterValidator(_not_blank)
]
Phrase = Annotated[str, StringConstraints(max_length=MAX_TEXT), AfterValidator(_not_blank)]
Description = Annotated[str, StringConstraints(max_length=MAX_DESCRIPTION)]
Regex = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_TEXT), AfterValidator(_compiles)
]
LexiconWord = Annotated[
    str, StringConstraints(max_length=MAX_LEXICON_WORD), AfterValidator(_single_lowercase_token)
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Profile(_Model):
    """Who the pack is for."""

    slug: RouteName
    name: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    description: Description = ""


class AnswerAction(_Model):
    """The agent answers the turn itself, in this route's context."""

    kind: Literal["answer"] = "answer"


class DelegateAction(_Model):
    """The turn is handed to another agent, named by id."""

    kind: Literal["delegate"]
    agent: AgentId


class StuckAction(_Model):
    """The turn ends with a consumer-facing message (the description when the message is empty)."""

    kind: Literal["stuck"]
    message: Description = ""


Action = Annotated[AnswerAction | DelegateAction | StuckAction, Field(discriminator="kind")]


class Route(_Model):
    """A place a turn can go."""

    name: RouteName
    # The name people read, in their language; `name` stays the identifier agents key on
    # (docs/pack-format.md, Names). No tier routes on it (minor 9).
    display_name: DisplayName | None = None
    description: Description = ""
    examples: tuple[Text, ...] = Field((), max_length=MAX_ITEMS)
    keywords: tuple[Phrase, ...] = Field((), max_length=MAX_ITEMS)
    never: tuple[Text, ...] = Field((), max_length=MAX_ITEMS)
    action: Action = AnswerAction()


class KeywordsMatch(_Model):
    """Any of the keywords, case-insensitive, word-bounded at word-character edges."""

    keywords: tuple[Phrase, ...] = Field(min_length=1, max_length=MAX_ITEMS)


class RegexMatch(_Model):
    """A regular expression searched in the message."""

    regex: Regex


class AllMatch(_Model):
    """Every one of the nested matches (nested `all` is flattened at compile time)."""

    all: tuple[Match, ...] = Field(min_length=1, max_length=MAX_ALL_MATCHES)


def _match_kind(value: Any) -> str | None:
    keys = ("keywords", "regex", "all")
    if isinstance(value, dict):
        return next((k for k in keys if k in value), None)
    return next((k for k in keys if isinstance(value, BaseModel) and hasattr(value, k)), None)


Match = Annotated[
    Annotated[KeywordsMatch, Tag("keywords")]
    | Annotated[RegexMatch, Tag("regex")]
    | Annotated[AllMatch, Tag("all")],
    Discriminator(
        _match_kind,
        custom_error_type="match_kind",
        custom_error_message="a match needs one of 'keywords', 'regex' or 'all'",
    ),
]
AllMatch.model_rebuild()


class Rule(_Model):
    """Tier 1: when `match` hits, the turn goes to `route`, before any scoring."""

    route: RouteName
    match: Match
    examples: tuple[Text, ...] = Field((), max_length=MAX_ITEMS)


class Tool(_Model):
    """A tool the agent may bind; triage narrows the list per turn."""

    name: ToolName
    description: Description = ""
    trigger_keywords: tuple[Phrase, ...] = Field((), max_length=MAX_ITEMS)
    always_include: bool = False


class TriageSettings(_Model):
    """The action / knowledge / ambiguous classifier's settings (None lexicons = built-in)."""

    mode: Literal["off", "shadow", "enforce"] = "enforce"
    ambiguity_confidence_floor: float = Field(0.55, ge=0.0, le=1.0)
    min_action_signals: int = Field(2, ge=1, le=3)
    action_verbs: tuple[LexiconWord, ...] | None = Field(None, max_length=MAX_ITEMS)
    knowledge_verbs: tuple[LexiconWord, ...] | None = Field(None, max_length=MAX_ITEMS)
    question_pattern: Regex | None = None


def _base64_chars(n_bytes: int) -> int:
    return 4 * ((n_bytes + 2) // 3)


ModelTerm = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT)]


class SemanticView(_Model):
    """What the lexical model learned of its texts' meaning (`scorers/_semantic.py`).

    A message's vector (the mean of its word pieces' rows in the static `table` shipped with
    routing_core, `scorers/_static.py`) times `matrix` plus `bias` is added to each route's
    logit. `matrix` is base64 of little-endian float16, dimensions x routes, row by row, and
    `bias` one float16 per route column; both already carry `weight`, the share fitted on
    held-out texts (kept apart so that a warm start can learn the view again at it).
    """

    table: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    weight: float = Field(gt=0.0, le=1000.0, allow_inf_nan=False)
    matrix: str
    bias: str


class LexicalModel(_Model):
    """What the lexical scorer learned at build/publish time, so that loading does not retrain.

    The arrays are base64 of little-endian numbers, in term order: `idf` (float16, one per
    term), `cells` (uint32, `term * routes + route`, strictly ascending) and `weights`
    (float16, one per cell). A route's weight for a term is the cell's value, 0 where no
    cell is stored (weights are stored relative to each term's median route, which changes
    no score). `fingerprint` is the `sha256` of the route texts the model was trained on
    (and of the scorer's feature version): a pack whose routes were edited since no longer
    matches it, and the scorer then retrains from the routes at load instead. `calibrated`
    says the temperature was fitted on held-out texts; only then does the scorer score a
    message made of stop words only (absent in packs built before it existed: such a pack
    keeps leaving those messages unscored, as it did when it was published). `stale` marks
    a model carried over from earlier route texts (`stored.with_stale_model`, for a
    playground that answers while the new model trains): its `fingerprint` is that of the
    texts it learned from, its columns follow this pack's routes, and the scorer uses it as
    it is and says so. Written only when true, so other packs keep their checksums. `floor`
    is the out-of-scope floor fitted on those held-out texts: the scorer's floor when the
    policy sets none (absent in older packs and in packs too small to calibrate: floor 0).
    `margin` is the near-tie margin fitted on them: `build_pack` makes it the built pack's
    policy margin, and the studio suggests it (the router never applies it on its own).
    `bias` (float16, one per route column) is added to each route's logit: the per-route
    intercepts of the second model folded into the weights (`scorers/_hinge.py`); absent in
    older packs and in packs that learn without it (0 for every route). `semantic` is the
    view of the texts' meaning (`SemanticView`); absent in older packs and in packs that
    learn without it (a pack that cannot calibrate, or of more than 200 routes).
    `fitted_on` is how many texts the model had that fitted the temperature, floor, margin
    and view weight on its held-out tenth: this one's when it was learned afresh, the
    earlier model's when it was warm-started (which keeps them); a warm start that would
    carry them to half as many texts again or more learns afresh instead
    (`lexical._warm_starts`). Absent in older packs and in models that did not calibrate.
    `none_logit` is where a first turn's "no route" column stands above the routes' mean
    calibrated logit (docs/pack-format.md, Lexical scorer, step 7): fitted on the held-out
    texts; absent in older packs, in models with an out-of-scope class, in packs without a
    fitted floor and in packs of more than 400 routes (no column: the softmax is over the
    columns alone, as before).
    """

    format: Literal["lexical-model/1"] = "lexical-model/1"
    fingerprint: Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]
    # The pack's routes, plus one column for the out-of-scope class when there is one (its own
    # out-of-scope examples or the built-in background): a pack of MAX_ROUTES routes has one.
    routes: int = Field(ge=1, le=MAX_ROUTES + 1)
    temperature: float = Field(gt=0.0, le=1000.0, allow_inf_nan=False)
    calibrated: bool = False
    stale: bool = False
    floor: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False)
    margin: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False)
    terms: tuple[ModelTerm, ...] = Field(max_length=MAX_MODEL_TERMS)
    idf: str
    cells: Annotated[str, StringConstraints(max_length=_base64_chars(4 * MAX_MODEL_CELLS))]
    weights: Annotated[str, StringConstraints(max_length=_base64_chars(2 * MAX_MODEL_CELLS))]
    bias: str | None = None
    semantic: SemanticView | None = None
    fitted_on: int | None = Field(None, ge=1, le=2**31)
    none_logit: float | None = Field(None, ge=-1000.0, le=1000.0, allow_inf_nan=False)

    @model_serializer(mode="wrap")
    def _omit_fresh(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.stale:
            data.pop("stale", None)
        return data

    @model_validator(mode="after")
    def _check_arrays(self) -> LexicalModel:
        if sum(map(len, self.terms)) > MAX_MODEL_TERM_CHARS:
            raise ValueError(
                f"model.terms hold more than {MAX_MODEL_TERM_CHARS:,} characters in all"
                " (docs/pack-format.md, Limits)"
            )
        check_model(self)
        return self


class LexicalScorerSettings(_Model):
    """The default scorer: words and character n-grams, no model download.

    `model` holds the weights learned when the pack was built (optional: without it, or
    when it no longer matches the routes, the scorer learns them when the pack is loaded).
    """

    kind: Literal["lexical"] = "lexical"
    model: LexicalModel | None = None


EncoderName = Literal[
    "all-minilm-l6-v2", "multilingual-e5-small", "universal-sentence-encoder-multilingual-3"
]
Aggregate = Literal["max", "centroid", "mean"]
ENV_VAR_PATTERN = r"^[A-Z_][A-Z0-9_]*$"


class _TierThresholds(_Model):
    """Thresholds for this tier alone. When set, these replace the policy's values for this
    scorer's verdicts (and the decision records the policy it used).

    The embedding and hybrid scores are calibrated probabilities, as the lexical scorer's
    are (`scorers/calibration.py`), so the policy's floor and margin mean the same to them;
    a tier sets its own to be stricter or looser than the tiers before it (in a cascade).
    An embedding tier's thresholds were cosines in packs of format minor 0 and 1, which
    are refused when they declare one (`embedding_threshold_paths`); the floor's range
    still admits those cosines.
    """

    floor: float | None = Field(None, ge=-1.0, le=1.0, allow_inf_nan=False)
    near_tie_margin: float | None = Field(None, ge=0.0, le=1.0)


HEAD_DESCRIPTION = (
    "Learn a linear head on the route texts' vectors when the pack is compiled and add its"
    " scores to the cosines' (weights fitted on held-out examples)."
)


class EmbeddingScorerSettings(_TierThresholds):
    """Optional tier (extra `embeddings`): cosine of the message against each route's text,
    as a probability at a temperature fitted when the pack is compiled."""

    kind: Literal["embedding"]
    model: EncoderName = "all-minilm-l6-v2"
    aggregate: Aggregate = Field(
        "mean", description="Per route: the best text's cosine, the centroid's, or their mean."
    )
    head: bool = Field(False, description=HEAD_DESCRIPTION)


class HybridScorerSettings(_TierThresholds):
    """Lexical and embedding scores mixed: `embedding_weight` of the embedding's share."""

    kind: Literal["hybrid"]
    model: EncoderName = "all-minilm-l6-v2"
    aggregate: Aggregate = "mean"
    embedding_weight: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="The embedding's share of the product (when it is not fitted).",
    )
    fit_weight: bool = Field(
        False,
        description=(
            "Fit the embedding's share on held-out examples when the pack is compiled;"
            " embedding_weight is then the share of a pack too small to hold any out."
        ),
    )
    head: bool = Field(False, description=HEAD_DESCRIPTION)


class HybridTierSettings(HybridScorerSettings):
    """A hybrid as a later tier of a cascade, which may also take the messages written in a
    language none of the routes' examples are in: there the tiers before it read accidents of
    spelling (docs/pack-format.md, Cascade). Only a tier has it: a scorer alone reads every
    message already."""

    take_foreign: bool = Field(
        False,
        description=(
            "Also run this tier, however sure the tiers before it were, when the message is"
            " written in a language none of the routes' examples are in (as a hybrid on an"
            " encoder that reads many languages tells it); its verdict then stands."
        ),
    )


class LlmScorerSettings(_Model):
    """Optional tier (extra `llm`): an OpenAI-compatible chat model picks one route or none.

    The key is never in the pack: `api_key_env` names the environment variable holding it.
    """

    kind: Literal["llm"]
    base_url: Annotated[
        str,
        StringConstraints(max_length=500),
        _matches(r"^https?://[^\s/]+", "base_url is an http(s) URL, e.g. https://api.example/v1"),
    ]
    model: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    api_key_env: (
        Annotated[
            str,
            StringConstraints(max_length=100),
            _matches(ENV_VAR_PATTERN, "the NAME of an environment variable, e.g. OPENAI_API_KEY"),
        ]
        | None
    ) = None
    timeout_s: float = Field(10.0, gt=0.0, le=120.0)
    max_examples: int = Field(5, ge=0, le=5, description="Examples per route in the prompt.")
    max_output_tokens: int = Field(16, ge=1, le=256)


def _scorer_kind(value: Any) -> str | None:
    kind = value.get("kind", "lexical") if isinstance(value, dict) else getattr(value, "kind", None)
    return kind if isinstance(kind, str) else None


TierSettings = Annotated[
    Annotated[LexicalScorerSettings, Tag("lexical")]
    | Annotated[EmbeddingScorerSettings, Tag("embedding")]
    | Annotated[HybridTierSettings, Tag("hybrid")]
    | Annotated[LlmScorerSettings, Tag("llm")],
    Discriminator(
        _scorer_kind,
        custom_error_type="scorer_kind",
        custom_error_message="a tier's kind is one of 'lexical', 'embedding', 'hybrid', 'llm'",
    ),
]


class CascadeScorerSettings(_Model):
    """Tiers tried in order, each only when the one before was not decisive.

    Specified in docs/pack-format.md, Cascade.

    An `llm` tier runs only on a near-tie and only over its contenders, so it comes last.
    The `decider` (an llm) resolves a menu that is still outstanding after the last tier.
    """

    kind: Literal["cascade"]
    tiers: tuple[TierSettings, ...] = Field(min_length=1, max_length=4)
    decider: LlmScorerSettings | None = None

    @model_validator(mode="after")
    def _check_tiers(self) -> CascadeScorerSettings:
        kinds = [t.kind for t in self.tiers]
        if len(set(kinds)) != len(kinds):
            raise ValueError("each kind of tier appears at most once in a cascade")
        if "llm" in kinds[:-1]:
            raise ValueError("an llm tier judges the remaining near-tie, so it must come last")
        if getattr(self.tiers[0], "take_foreign", False):
            raise ValueError("the first tier reads every message: take_foreign is for a later tier")
        return self


ScorerSettings = Annotated[
    Annotated[LexicalScorerSettings, Tag("lexical")]
    | Annotated[EmbeddingScorerSettings, Tag("embedding")]
    | Annotated[HybridScorerSettings, Tag("hybrid")]
    | Annotated[LlmScorerSettings, Tag("llm")]
    | Annotated[CascadeScorerSettings, Tag("cascade")],
    Discriminator(
        _scorer_kind,
        custom_error_type="scorer_kind",
        custom_error_message=(
            "a scorer's kind is one of 'lexical', 'embedding', 'hybrid', 'llm', 'cascade'"
        ),
    ),
]


class Pack(_Model):
    """A complete, validated route pack. Build one with `load_pack`; write it with `dump_pack`."""

    format: Literal["route-pack"] = "route-pack"
    format_version: Annotated[int, AfterValidator(lambda v: _known_format_version(v))] = (
        FORMAT_VERSION
    )
    # In a document, the minor of the format it was written in (absent: 0); a pack read by
    # `load_pack` from one of this minor or older has this minor (codec.py). Not part of
    # the checksum: it says which writer made the pack, not what the pack routes.
    format_minor: int = Field(FORMAT_MINOR, ge=0, le=2**31)
    profile: Profile
    version: int = Field(0, ge=0, le=2**53)
    created_at: datetime | None = None
    routes: tuple[Route, ...] = Field(min_length=1, max_length=MAX_ROUTES)
    # Messages that belong to no route (Dialogflow's negative intent): the lexical scorer
    # learns them as a class of their own that is never offered, and evaluation counts them.
    out_of_scope: tuple[Text, ...] = Field((), max_length=MAX_ITEMS)
    # True: the lexical scorer learns only `out_of_scope`, never the engine's built-in
    # background of off-topic text (docs/pack-format.md, "Lexical scorer"; minor 10).
    no_background: bool = Field(
        False,
        description="True: the lexical scorer learns only out_of_scope, never the built-in"
        " background of off-topic text (learned by default while a profile has fewer than 20"
        " out-of-scope examples and routes of 5 to 30 examples on average).",
    )
    rules: tuple[Rule, ...] = Field((), max_length=MAX_ITEMS)
    default_route: RouteName | None = None
    policy: Policy = Policy()
    scorer: ScorerSettings = LexicalScorerSettings()
    triage: TriageSettings = TriageSettings()
    tools: tuple[Tool, ...] = Field((), max_length=MAX_ITEMS)

    @model_validator(mode="before")
    @classmethod
    def _check_regex_total(cls, data: Any) -> Any:
        # Before any field: too many regex characters are refused before any is compiled.
        _refuse(total_errors(data, ("regex",)))
        return data

    @model_validator(mode="after")
    def _check_references(self) -> Pack:
        _refuse(total_errors(self, ("texts", "chars")) + reference_errors(self))
        return self

    @property
    def route_names(self) -> tuple[str, ...]:
        """Route names in declaration order (the candidate order of every turn)."""
        return tuple(r.name for r in self.routes)

    @property
    def checksum(self) -> str:
        """`sha256:<hex>` of the canonical JSON of the pack (everything but the checksum)."""
        return content_checksum(self)


def _refuse(problems: list[tuple[str, str]]) -> None:
    """Raise the pack's own problems as one error that the codec reports path by path."""
    if problems:
        from pydantic_core import PydanticCustomError

        raise PydanticCustomError(
            "pack_references",
            "; ".join(f"{p}: {m}" for p, m in problems),
            {"problems": problems},
        )


def _known_format_version(version: int) -> int:
    if version > FORMAT_VERSION:
        raise ValueError(
            f"format_version {version} is newer than this reader knows ({FORMAT_VERSION}); "
            "upgrade routing-core to read it"
        )
    if version < 1:
        raise ValueError("format_version starts at 1")
    return version


def reference_errors(pack: Pack) -> list[tuple[str, str]]:
    """Every cross-reference problem: duplicate names and names that point nowhere."""
    return check_references(
        route_names=list(pack.route_names),
        tool_names=[t.name for t in pack.tools],
        default_route=pack.default_route,
        rule_routes=[r.route for r in pack.rules],
    )


def check_references(
    route_names: list[Any],
    tool_names: list[Any],
    default_route: Any,
    rule_routes: list[Any],
) -> list[tuple[str, str]]:
    """Cross-reference checks on plain values, so a raw document that failed elsewhere gets them too."""
    problems: list[tuple[str, str]] = []
    problems += _duplicates(route_names, "routes", "route name")
    problems += _duplicates(tool_names, "tools", "tool name")
    known = {n for n in route_names if isinstance(n, str)}
    if isinstance(default_route, str) and default_route not in known:
        problems.append(("default_route", f"no route named {default_route!r}"))
    for i, route in enumerate(rule_routes):
        if isinstance(route, str) and route not in known:
            problems.append((f"rules[{i}].route", f"no route named {route!r}"))
    return problems


def _duplicates(names: list[Any], where: str, what: str) -> list[tuple[str, str]]:
    first: dict[str, int] = {}
    problems = []
    for i, name in enumerate(names):
        if not isinstance(name, str):
            continue
        if name in first:
            problems.append(
                (
                    f"{where}[{i}].name",
                    # People read it: the first holder counted from 1, as the studio does.
                    f"duplicate {what} {name!r} ({what.split()[0]} {first[name] + 1} has it too)",
                )
            )
        else:
            first[name] = i
    return problems


# What a writer puts in a scorer it creates from a kind alone (a studio profile that picks the
# kind, `bench_tiers`): the best settings for a new pack, where the pydantic defaults must
# keep meaning what an absent field meant before (docs/decisions.md, "Format compatibility").
# A new cascade asks the hybrid only when the lexical scorer is unsure, or the message is
# written in a language none of the examples are in: the lexical turn's cost on most messages,
# the encoder's reading on the rest (docs/decisions.md, "A new cascade: the lexical scorer,
# then the hybrid").
NEW_SCORER_SETTINGS: dict[str, dict[str, Any]] = {
    "embedding": {"head": True},
    "hybrid": {"fit_weight": True, "head": True},
    "cascade": {
        "tiers": [
            {"kind": "lexical"},
            {"kind": "hybrid", "fit_weight": True, "head": True, "take_foreign": True},
        ]
    },
}


def new_scorer_settings(kind: str) -> dict[str, Any]:
    """The `scorer` document of a new pack of this kind (a fresh dict, safe to edit, tiers
    and all)."""
    return {"kind": kind, **copy.deepcopy(NEW_SCORER_SETTINGS.get(kind, {}))}


def embedding_threshold_paths(document: Mapping[str, Any]) -> list[str]:
    """Where a pack document declares a threshold on an embedding tier's scores.

    Those scores were cosines before format minor PROBABILITY_THRESHOLDS_MINOR and are
    probabilities since, so such a threshold means what it says only in a pack of that
    minor or later: the writer stamps it, the reader refuses an older pack holding one.
    A standalone embedding scorer is judged by the policy's floor too; the policy's
    margin is always present (it has a default), so it cannot tell what its writer meant.
    The hybrid's scores were probabilities before too: its thresholds are not listed.
    """
    scorer = document.get("scorer")
    if not isinstance(scorer, Mapping):
        return []
    located: list[tuple[str, Any]] = [("scorer", scorer)]
    tiers = scorer.get("tiers")
    if scorer.get("kind") == "cascade" and isinstance(tiers, list | tuple):
        located = [(f"scorer.tiers[{i}]", tier) for i, tier in enumerate(tiers)]
    paths = [
        f"{where}.{key}"
        for where, tier in located
        if isinstance(tier, Mapping) and tier.get("kind") == "embedding"
        for key in ("floor", "near_tie_margin")
        if tier.get(key) is not None
    ]
    policy = document.get("policy")
    if scorer.get("kind") == "embedding" and isinstance(policy, Mapping):
        paths += ["policy.floor"] if policy.get("floor") is not None else []
    return paths


# The checksum belongs to the format: `Pack.checksum` and `dump_pack` compute it alike, and a
# reader checks it against either the normalised content or the document as written.
CHECKSUM_PREFIX = "sha256:"


def content_checksum(pack: Pack) -> str:
    """`sha256:<hex>` of the canonical JSON of the pack's content."""
    return digest(content_document(pack))


def content_document(pack: Pack) -> dict[str, Any]:
    """The pack as a document, at the lowest format minor its content needs (`MINOR_FIELDS`).

    A field a minor added is left out while it holds nothing (None, empty, False), so a pack
    that does not use it reads in older readers, and its checksum is what it was before.
    """
    document = pack.model_dump(mode="json")
    document.pop("format_minor", None)
    minor = 0
    for path, added in MINOR_FIELDS.items():
        for parent in _parents(document, path[:-1]):
            if path[-1] not in parent:
                continue
            if parent[path[-1]] in (None, [], False):
                del parent[path[-1]]
            else:
                minor = max(minor, added)
    if embedding_threshold_paths(document):  # they are probabilities: say so
        minor = max(minor, PROBABILITY_THRESHOLDS_MINOR)
    if minor:  # a 1.0 pack reads as before, in any reader
        document["format_minor"] = minor
    return document


def _parents(node: Any, path: tuple[str, ...]) -> list[dict[str, Any]]:
    """The dicts at `path` in a document; `*` stands for every item of a list (a cascade's tiers)."""
    if not path:
        return [node] if isinstance(node, dict) else []
    key, rest = path[0], path[1:]
    if key == "*":
        items = node if isinstance(node, list) else []
        return [found for item in items for found in _parents(item, rest)]
    return _parents(node.get(key), rest) if isinstance(node, dict) else []


def canonical_json(document: Any) -> str:
    """Sorted keys, no spaces, UTF-8 as is: one text per document, whoever wrote it."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(document: Mapping[str, Any]) -> str:
    """`sha256:<hex>` of a document's canonical JSON, without its checksum and format minor."""
    content = {k: v for k, v in document.items() if k not in ("checksum", "format_minor")}
    hexdigest = hashlib.sha256(canonical_json(content).encode("utf-8")).hexdigest()
    return CHECKSUM_PREFIX + hexdigest
