"""routing_core: decide, before an LLM agent runs, where each user turn goes — and say why.

The public surface is the names this package exports (`routing_core.__all__`) and, in the
modules below, the names without a leading underscore (a module's `__all__` when it has
one). Every other module is internal, underscored or not, and may change in any release;
`tests/routing_core/test_public_surface.py` holds the studio, the benchmarks and the scripts
to this surface.

Public modules, each for one job whose names read best beside the module's:

- `routing_core.canary`: a candidate pack for a share of conversations, by a stable hash.
- `routing_core.importers`: other tools' exports (Rasa, Dialogflow, Lex, ...) as packs.
- `routing_core.remote`: a router whose pack is pulled from the studio and kept fresh.
- `routing_core.reporting`: the decision events an agent reports back to the studio.
- `routing_core.rollout`: an environment's rollout as the pull names it (shadow or canary).
- `routing_core.reasks`: a user's next turn that repeats or corrects the last one.
- `routing_core.fleet_status`: what an agent reports of itself on each pull.
- `routing_core.signing`: packs signed with Ed25519, and the public keys that verify them
  (the `signing` extra).
- `routing_core.telemetry`: OpenTelemetry spans and metrics for routed turns and pulls
  (the `otel` extra).
- `routing_core.replay`: stored turns replayed on a pack, and which verdicts would flip.
- `routing_core.replay_engines`: that replay in this process or on a Dask cluster.
- `routing_core.repair`: the smallest edit that makes a failing test case pass.
- `routing_core.tuning`: threshold sweeps over a test suite.
- `routing_core.suggest`: examples and never-phrases proposed by a language model.
- `routing_core.languages`: which language a message is written in (the `languages` extra).
- `routing_core.lexicons`: the built-in triage lexicons per language, and their mixes.
- `routing_core.limits`: every limit on a pack, one place the schema, the studio and the
  fetcher read (docs/pack-format.md, Limits), and the bound they put on a pack's size.
- `routing_core.server`: `routing-core serve`, the route server for agents in any language
  (its configuration; the `server` extra).
- `routing_core.conformance`: the suite every runtime must pass (generate and check).
- `routing_core.scorers`: the scorer tiers behind one protocol; its tier modules
  `routing_core.scorers.lexical`, `routing_core.scorers.embedding`,
  `routing_core.scorers.llm` and `routing_core.scorers.calibration` (for tuning and
  benchmarks), and `routing_core.scorers.stored` (a pack's lexical model learned when it is
  built, or carried over to a draft).

Constants exported here: `FORMAT_VERSION` and `FORMAT_MINOR` (the pack format this reader
writes, docs/pack-format.md), `ROUTE_NAME_PATTERN` (what a route identifier and a profile
slug may be, docs/pack-format.md, Names), `MAX_ROUTES` and `MAX_ITEMS` (a pack's size limits),
`MAX_MESSAGE_CHARS` (what a router reads of a message; every limit is in
`routing_core.limits`), `MENU` and `UNMATCHED` (a test
case's expected route for a menu or for no route), and `DEFAULT_ACTION_VERBS`,
`DEFAULT_KNOWLEDGE_VERBS` and `DEFAULT_QUESTION_PATTERN` (triage's built-in English), and
`OUT_OF_SCOPE_WANTED` (the out-of-scope examples a profile needs before the lexical scorer
stops learning its built-in background; `BACKGROUND_MIN_EXAMPLES`, the examples a route
needs on average before it learns it; `starter_out_of_scope` suggests some;
`background_left_out` says why a profile learns no background).

`import routing_core` loads what routing a message needs (pydantic and numpy, no scipy):
the names that need more (building a pack trains a model, the remote router and reporter
open connections) are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from routing_core.cases import Case, case_from_mapping, load_cases
from routing_core.codec import dump_pack, format_location, load_pack
from routing_core.decision import Decision
from routing_core.errors import PackError
from routing_core.evaluate import (
    MENU,
    UNMATCHED,
    CaseResult,
    ConversationReport,
    EvalReport,
    WrongTurn,
    evaluate,
)
from routing_core.limits import MAX_ITEMS, MAX_MESSAGE_CHARS, MAX_ROUTES
from routing_core.pack import (
    FORMAT_MINOR,
    FORMAT_VERSION,
    ROUTE_NAME_PATTERN,
    LexicalScorerSettings,
    LlmScorerSettings,
    Pack,
    Rule,
    new_scorer_settings,
)
from routing_core.policy import Policy, Ranked
from routing_core.router import Router
from routing_core.rules import RuleSet
from routing_core.storable import unstorable_reason
from routing_core.triage import (
    DEFAULT_ACTION_VERBS,
    DEFAULT_KNOWLEDGE_VERBS,
    DEFAULT_QUESTION_PATTERN,
)

if TYPE_CHECKING:
    from routing_core.build import build_pack, build_pack_file
    from routing_core.lint import (
        BACKGROUND_MIN_EXAMPLES,
        OUT_OF_SCOPE_WANTED,
        Finding,
        background_left_out,
        lint_pack,
        message_language_gap,
        starter_out_of_scope,
    )
    from routing_core.overlap import overlap_checkup
    from routing_core.redaction import redact, scrub_evidence
    from routing_core.remote import PackFetcher, RemoteRouter
    from routing_core.reporting import EventReporter
    from routing_core.schema import decision_schema, pack_schema
    from routing_core.version import engine_version

# Exported, but imported on first use (PEP 562): name -> the module that defines it. A name
# here must not be a submodule's name too: importing that module would shadow it (`evaluate`
# is imported above for that reason).
_LAZY = {
    "build_pack": "routing_core.build",
    "build_pack_file": "routing_core.build",
    "Finding": "routing_core.lint",
    "lint_pack": "routing_core.lint",
    "starter_out_of_scope": "routing_core.lint",
    "background_left_out": "routing_core.lint",
    "message_language_gap": "routing_core.lint",
    "OUT_OF_SCOPE_WANTED": "routing_core.lint",
    "BACKGROUND_MIN_EXAMPLES": "routing_core.lint",
    "overlap_checkup": "routing_core.overlap",
    "redact": "routing_core.redaction",
    "scrub_evidence": "routing_core.redaction",
    "PackFetcher": "routing_core.remote",
    "RemoteRouter": "routing_core.remote",
    "EventReporter": "routing_core.reporting",
    "engine_version": "routing_core.version",
    "pack_schema": "routing_core.schema",
    "decision_schema": "routing_core.schema",
}

__all__ = [
    "BACKGROUND_MIN_EXAMPLES",
    "Case",
    "CaseResult",
    "ConversationReport",
    "DEFAULT_ACTION_VERBS",
    "DEFAULT_KNOWLEDGE_VERBS",
    "DEFAULT_QUESTION_PATTERN",
    "Decision",
    "EvalReport",
    "EventReporter",
    "FORMAT_MINOR",
    "FORMAT_VERSION",
    "Finding",
    "LexicalScorerSettings",
    "LlmScorerSettings",
    "MAX_ITEMS",
    "MAX_MESSAGE_CHARS",
    "MAX_ROUTES",
    "MENU",
    "OUT_OF_SCOPE_WANTED",
    "Pack",
    "PackError",
    "PackFetcher",
    "Policy",
    "ROUTE_NAME_PATTERN",
    "Ranked",
    "RemoteRouter",
    "Router",
    "Rule",
    "RuleSet",
    "UNMATCHED",
    "WrongTurn",
    "background_left_out",
    "build_pack",
    "build_pack_file",
    "case_from_mapping",
    "decision_schema",
    "dump_pack",
    "engine_version",
    "evaluate",
    "format_location",
    "lint_pack",
    "load_cases",
    "load_pack",
    "message_language_gap",
    "new_scorer_settings",
    "overlap_checkup",
    "pack_schema",
    "redact",
    "scrub_evidence",
    "starter_out_of_scope",
    "unstorable_reason",
]


def __getattr__(name: str) -> Any:
    """Import a lazily exported name on first use and keep it (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'routing_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The exported names too, before their first use."""
    return sorted({*globals(), *__all__})
