"""The edits "find a fix" may propose, in words, and each applied to a copy of a pack.

Every kind is a change a person could make by hand in the studio: a route's examples and
keywords, the profile's out-of-scope examples, the triage lexicons, a tool's trigger
keywords, the near-tie margin. A never-phrase is not among them: it is test material
(docs/pack-format.md, Routes and their actions) and changes no decision, so adding one could
never make a case pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from routing_core.errors import PackError
from routing_core.pack import Pack
from routing_core.scorers.stored import with_model
from routing_core.triage import DEFAULT_ACTION_VERBS, DEFAULT_KNOWLEDGE_VERBS

EditKind = Literal[
    "add_keyword",
    "add_example",
    "move_example",
    "remove_keyword",
    "add_out_of_scope",
    "add_verb",
    "remove_verb",
    "add_trigger",
    "remove_trigger",
    "set_margin",
]
EDIT_KINDS: tuple[EditKind, ...] = EditKind.__args__  # type: ignore[attr-defined]

# Kinds that change what the scorer learns from: its stored model must be learned again.
ROUTE_KINDS = frozenset({"add_keyword", "add_example", "move_example", "remove_keyword"})
_LANE_DEFAULTS = {"action": DEFAULT_ACTION_VERBS, "knowledge": DEFAULT_KNOWLEDGE_VERBS}


@dataclass(frozen=True)
class Edit:
    """One change to one part of the pack.

    `route` names what the edit changes: a route (route kinds), a tool (trigger kinds), a
    lexicon lane, "action" or "knowledge" (verb kinds), or nothing ("") for the profile's
    own out-of-scope examples and near-tie margin. `source` is the route a moved example
    leaves, or the margin before the change.
    """

    kind: EditKind
    route: str
    text: str
    source: str | None = None

    def describe(self) -> str:
        """The edit as a sentence a product person reads (imperative: "add …")."""
        text, target = self.text, self.route
        sentences = {
            "add_keyword": f"add the keyword “{text}” to {target}",
            "add_example": f"add “{text}” as an example of {target}",
            "move_example": f"move the example “{text}” from {self.source} to {target}",
            "remove_keyword": f"remove the keyword “{text}” from {target}",
            "add_out_of_scope": f"add “{text}” to the out-of-scope examples",
            "add_verb": f"add “{text}” to the {target} verbs",
            "remove_verb": f"remove “{text}” from the {target} verbs",
            "add_trigger": f"add the trigger keyword “{text}” to the tool {target}",
            "remove_trigger": f"remove the trigger keyword “{text}” from the tool {target}",
            "set_margin": f"change the near-tie margin from {self.source} to {text}",
        }
        return sentences[self.kind]

    def doing(self) -> str:
        """The edit as a gerund, for "adding … fixed it but …"."""
        verb, _, rest = self.describe().partition(" ")
        return {"add": "adding", "move": "moving", "remove": "removing"}.get(verb, "changing") + (
            " " + rest
        )


def apply_edit(pack: Pack, edit: Edit) -> Pack:
    """A copy of the pack with the edit made (validated again: the result must be a pack).

    Raises:
        PackError: the edited document is not a valid pack (a margin out of range, say).
    """
    from routing_core.codec import load_pack

    document = pack.model_dump(mode="json")
    if edit.kind in ROUTE_KINDS:
        document["routes"] = [_edit_route(route, edit) for route in document["routes"]]
    elif edit.kind == "add_out_of_scope":
        document["out_of_scope"] = [*document.get("out_of_scope", []), edit.text]
    elif edit.kind in ("add_verb", "remove_verb"):
        key = f"{edit.route}_verbs"
        words = set(lexicon(pack, edit.route))
        words = words | {edit.text} if edit.kind == "add_verb" else words - {edit.text}
        document["triage"] = {**document["triage"], key: sorted(words)}
    elif edit.kind in ("add_trigger", "remove_trigger"):
        document["tools"] = [_edit_tool(tool, edit) for tool in document["tools"]]
    else:
        document["policy"] = {**document["policy"], "near_tie_margin": _number(edit.text)}
    relearn = edit.kind in ROUTE_KINDS or edit.kind == "add_out_of_scope"
    if relearn:
        # The stored weights were learned from the old texts: learn them again.
        document["scorer"] = {k: v for k, v in document["scorer"].items() if k != "model"}
    edited = load_pack(document)
    if relearn and getattr(pack.scorer, "model", None) is not None:
        # Warm-started from the pack's own model, as the studio's training job learns the
        # edited draft from the profile's last model: the suite is judged on the weights
        # the edit will really get, in a fraction of a cold start's time.
        edited = with_model(edited, previous=pack)
    return edited


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise PackError([("policy.near_tie_margin", "the near-tie margin is a number")])
    return value


def lexicon(pack: Pack, lane: str) -> frozenset[str]:
    """The pack's action or knowledge verbs: its own list, else the built-in English one."""
    own = pack.triage.action_verbs if lane == "action" else pack.triage.knowledge_verbs
    return _LANE_DEFAULTS[lane] if own is None else frozenset(own)


def _edit_route(route: dict[str, Any], edit: Edit) -> dict[str, Any]:
    if route["name"] == edit.route:
        if edit.kind == "add_keyword":
            return {**route, "keywords": [*route.get("keywords", []), edit.text]}
        if edit.kind == "remove_keyword":
            return {**route, "keywords": [k for k in route["keywords"] if k != edit.text]}
        return {**route, "examples": [*route["examples"], edit.text]}
    if edit.kind == "move_example" and route["name"] == edit.source:
        return {**route, "examples": [e for e in route["examples"] if e != edit.text]}
    return route


def _edit_tool(tool: dict[str, Any], edit: Edit) -> dict[str, Any]:
    if tool["name"] != edit.route:
        return tool
    triggers = list(tool.get("trigger_keywords", []))
    if edit.kind == "add_trigger":
        return {**tool, "trigger_keywords": [*triggers, edit.text]}
    return {**tool, "trigger_keywords": [k for k in triggers if k != edit.text]}
