"""The rule builder's live check: which of a rule's examples it matches, by routing_core's rules.

The studio does not reimplement matching: the rule is validated as a pack `Rule` and run by
`RuleSet`, exactly as an agent would run it, so a tick here is a match in production.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from routing_core import Rule as PackRule
from routing_core import RuleSet, format_location
from studio.shared.labels import place, plain_message


@dataclass(frozen=True)
class Check:
    text: str
    matched: str | None  # the text the rule matched, None when it does not match

    @property
    def is_match(self) -> bool:
        return self.matched is not None


@dataclass(frozen=True)
class Preview:
    examples: list[Check]
    tried: Check | None
    problems: list[str]  # why the rule cannot run yet, in words


def preview(route: str, match: dict[str, Any], examples: list[str], message: str) -> Preview:
    """Run the rule over its examples (and a message being tried) as routing_core would."""
    try:
        rule = PackRule.model_validate({"route": route or "preview", "match": match})
    except ValidationError as exc:
        return Preview([Check(e, None) for e in examples], None, _problems(exc))
    rules = RuleSet([rule])
    tried = _check(rules, message) if message.strip() else None
    return Preview([_check(rules, e) for e in examples], tried, [])


def _check(rules: RuleSet, text: str) -> Check:
    evidence = rules.first_match(text)
    if evidence is None:
        return Check(text, None)
    return Check(text, evidence.keyword or evidence.text or text)


def _problems(exc: ValidationError) -> list[str]:
    lines = []
    for error in exc.errors(include_url=False, include_input=False):
        path = format_location(error["loc"])
        lines.append(f"{place(path)}: {plain_message(str(error['msg']), path)}")
    return lines
