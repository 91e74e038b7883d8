"""Amazon Lex V2: a bot (or bot locale) export zip as routes, in one locale.

`BotLocales/<locale>/Intents/<name>/Intent.json` sample utterances become examples. Slot
references (`{Destination}`) are not words a person types: each is replaced by the first
value of the slot's type when the export has one (else the slot's name), and reported.
Slot type values and synonyms become lexicons. The built-in fallback intent has no
utterances in Lex (it is reported); any it does have become out-of-scope examples. Code hooks, prompts, contexts and the locale's confidence
threshold have no equivalent and are listed as left out.
"""

from __future__ import annotations

import re
from typing import Any

from routing_core.errors import PackError
from routing_core.importers.files import (
    ExportFiles,
    Source,
    chosen_language,
    fields,
    items,
    read_export,
)
from routing_core.importers.result import Collector, ImportResult

FORMAT = "lex-v2"
LOCALE_FILE = re.compile(r"^(?P<root>(?:[^/]+/)*)BotLocales/(?P<locale>[^/]+)/BotLocale\.json$")
SLOT_REF = re.compile(r"\{(?P<slot>[A-Za-z0-9_.-]+)\}")
_LEFT_OUT = {
    "dialogCodeHook": "code hooks have no equivalent in a pack",
    "fulfillmentCodeHook": "fulfillment has no equivalent in a pack",
    "intentConfirmationSetting": "confirmation prompts have no equivalent in a pack",
    "intentClosingSetting": "closing responses have no equivalent in a pack",
    "inputContexts": "contexts have no equivalent in a pack",
    "outputContexts": "contexts have no equivalent in a pack",
    "kendraConfiguration": "Kendra search has no equivalent in a pack",
}


def import_lex_v2(source: Source, *, language: str | None = None) -> ImportResult:
    """Routes from a Lex V2 export (zip or unpacked folder).

    Args:
        language: the locale id to import (`en_US`, `de_DE`, …); with several locales and
            none asked for, `en_US` if the bot has it, else the first.

    Raises:
        PackError: no bot locale in the export, an unknown locale, or nothing to import.
    """
    files = read_export(source)
    locales = {m["locale"]: m["root"] for p in files.paths() if (m := LOCALE_FILE.match(p))}
    if not locales:
        raise PackError([("$", "no BotLocales/<locale>/BotLocale.json: not a Lex V2 export")])
    locale = _locale(locales, language)
    root = locales[locale]
    collect = Collector(FORMAT)
    collect.language = locale
    _read_bot(files, root, collect)
    base = f"{root}BotLocales/{locale}/"
    _read_locale(files, f"{base}BotLocale.json", collect)
    values = _read_slot_types(files, base, collect)
    for path in files.paths():
        if re.fullmatch(re.escape(base) + r"Intents/[^/]+/Intent\.json", path):
            _read_intent(files, path, values, collect)
    for other in sorted(set(locales) - {locale}):
        collect.left_out(f"locale {other!r}", f"not imported (importing {locale!r})")
    return collect.finish()


def _locale(locales: dict[str, str], asked: str | None) -> str:
    if asked:
        return chosen_language(asked, set(locales), "bot", "locale")
    return "en_US" if "en_US" in locales else sorted(locales)[0]


def _read_bot(files: ExportFiles, root: str, collect: Collector) -> None:
    path = f"{root}Bot.json"
    bot = files.json(path) if path in files else {}
    if isinstance(bot, dict):
        collect.name = str(bot.get("name") or "")
        collect.description = str(bot.get("description") or "")


def _read_locale(files: ExportFiles, path: str, collect: Collector) -> None:
    locale = files.json(path)
    threshold = locale.get("nluConfidenceThreshold") if isinstance(locale, dict) else None
    if isinstance(threshold, int | float):
        collect.left_out(
            f"{path}: nluConfidenceThreshold",
            f"{threshold} is Lex's confidence, not carried over (the pack's policy sets the floor)",
        )


def _read_slot_types(files: ExportFiles, base: str, collect: Collector) -> dict[str, list[str]]:
    """Slot type name → its values and synonyms (also kept as lexicons)."""
    values: dict[str, list[str]] = {}
    for path in files.paths():
        if not re.fullmatch(re.escape(base) + r"SlotTypes/[^/]+/SlotType\.json", path):
            continue
        slot_type = files.json(path)
        if not isinstance(slot_type, dict) or not isinstance(slot_type.get("name"), str):
            collect.left_out(path, "not a slot type")
            continue
        words: list[str] = []
        for entry in items(slot_type.get("slotTypeValues")):
            sample = (
                fields(entry.get("sampleValue")).get("value") if isinstance(entry, dict) else None
            )
            synonyms = (
                [s.get("value") for s in items(entry.get("synonyms")) if isinstance(s, dict)]
                if isinstance(entry, dict)
                else []
            )
            words += [w for w in [sample, *synonyms] if isinstance(w, str)]
        values[slot_type["name"]] = words
        collect.add_lexicon(slot_type["name"], words)
    return values


def _read_fallback(intent: dict[str, Any], path: str, collect: Collector) -> None:
    """Lex's fallback takes what no intent matches; utterances on it are out of scope."""
    before = len(collect.out_of_scope)
    for i, sample in enumerate(items(intent.get("sampleUtterances"))):
        text = sample.get("utterance") if isinstance(sample, dict) else None
        if isinstance(text, str):
            collect.add_out_of_scope(text, f"{path}: sampleUtterances[{i}]")
        else:
            collect.left_out(f"{path}: sampleUtterances[{i}]", "not a text utterance")
    if len(collect.out_of_scope) > before:
        collect.came_over_as_out_of_scope(path, "the fallback intent", before)
    else:
        collect.left_out(path, "the fallback intent has no utterances: nothing to import")


def _read_intent(
    files: ExportFiles, path: str, values: dict[str, list[str]], collect: Collector
) -> None:
    intent = files.json(path)
    if not isinstance(intent, dict) or not isinstance(intent.get("name"), str):
        collect.left_out(path, "not an intent (no name)")
        return
    if intent.get("parentIntentSignature") == "AMAZON.FallbackIntent":
        _read_fallback(intent, path, collect)
        return
    route = collect.route(intent["name"], path)
    collect.describe(route, str(intent.get("description") or ""), f"{path}: description")
    slot_types = _slot_types(files, path.removesuffix("Intent.json"))
    filled: set[str] = set()
    for i, sample in enumerate(items(intent.get("sampleUtterances"))):
        text = sample.get("utterance") if isinstance(sample, dict) else None
        if not isinstance(text, str):
            collect.left_out(f"{path}: sampleUtterances[{i}]", "not a text utterance")
            continue
        text = _fill_slots(text, slot_types, values, filled)
        collect.add_example(route, text, f"{path}: sampleUtterances[{i}]")
    route.entities |= {slot_types.get(s, s) for s in filled}
    if filled:
        collect.changed(
            f"{path}: sampleUtterances",
            "slot references replaced by a sample value: " + ", ".join(sorted(filled)),
        )
    for key, reason in _LEFT_OUT.items():
        if intent.get(key):
            collect.left_out(f"{path}: {key}", reason)


def _slot_types(files: ExportFiles, intent_dir: str) -> dict[str, str]:
    """Slot name → slot type name, from the intent's `Slots/<name>/Slot.json` files."""
    found: dict[str, str] = {}
    for path in files.paths():
        if path.startswith(f"{intent_dir}Slots/") and path.endswith("/Slot.json"):
            slot = files.json(path)
            if isinstance(slot, dict) and isinstance(slot.get("name"), str):
                found[slot["name"]] = str(slot.get("slotTypeName") or slot["name"])
    return found


def _fill_slots(
    text: str, slot_types: dict[str, str], values: dict[str, list[str]], filled: set[str]
) -> str:
    def fill(match: re.Match[str]) -> str:
        slot = match["slot"]
        filled.add(slot)
        samples = values.get(slot_types.get(slot, slot)) or []
        return samples[0] if samples else re.sub(r"(?<=[a-z])(?=[A-Z])|_", " ", slot).lower()

    return SLOT_REF.sub(fill, text)
