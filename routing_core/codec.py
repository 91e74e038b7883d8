"""Reading and writing packs: JSON in, validated `Pack` out, canonical JSON with a checksum back."""

from __future__ import annotations

import copy
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from routing_core.errors import PackError
from routing_core.pack import (
    CHECKSUM_PREFIX,
    FORMAT_MINOR,
    FORMAT_VERSION,
    PROBABILITY_THRESHOLDS_MINOR,
    Pack,
    canonical_json,
    check_references,
    content_checksum,
    content_document,
    digest,
    embedding_threshold_paths,
)
from routing_core.storable import unstorable_paths

log = logging.getLogger("routing_core")

# Discriminated-union tags pydantic puts in error locations; a person never typed them.
_SCORER_TAGS = {"lexical", "embedding", "hybrid", "llm", "cascade"}
_TAG_AFTER = {"action": {"answer", "delegate", "stuck"}, "scorer": _SCORER_TAGS}
_MATCH_TAGS = {"keywords", "regex", "all"}

PackSource = Pack | Mapping[str, Any] | str | bytes | os.PathLike[str]


def load_pack(source: PackSource, *, ignored: list[str] | None = None) -> Pack:
    """Load and validate a pack.

    A pack of a newer format minor (same major) may hold fields this reader does not know:
    they are left out, logged as a warning and, when `ignored` is given, appended to it as
    paths. Any other unknown field (a typo) is a problem like any other.

    Args:
        source: a path, a JSON text (str or bytes), a dict, or a `Pack` (returned as is).
        ignored: a list that receives the paths of the fields left out.

    Returns:
        The validated, frozen pack.

    Raises:
        PackError: with every `(json_path, message)` problem found.
    """
    if isinstance(source, Pack):
        return source
    document = _document(source)
    unstorable = unstorable_paths(document)
    if unstorable:
        raise PackError(unstorable)
    claimed = document.pop("checksum", None)
    _refuse_cosine_thresholds(document)
    original, left_out = document, list[str]()
    if _is_newer_minor(document):
        document, left_out = _without_unknown_fields(document)
    elif _minor(document) in range(FORMAT_MINOR):
        # Read, an older minor's pack is one of this minor: what a later minor changed the
        # meaning of was refused above, so `load_pack(dump_pack(p)) == p` for every pack.
        document = {**document, "format_minor": FORMAT_MINOR}
    pack = _validate(document)
    _verify_checksum(claimed, original, pack)
    if left_out:
        log.warning("pack of a newer format minor: ignored %s", ", ".join(left_out))
        if ignored is not None:
            ignored.extend(left_out)
    return pack


def dump_pack(pack: Pack, *, indent: int | None = None) -> str:
    """The pack as canonical JSON (sorted keys, UTF-8), checksum filled in.

    Args:
        pack: the pack to write.
        indent: pretty-print for people; the checksum is the same either way.
    """
    document = content_document(pack)
    document["checksum"] = digest(document)
    if indent is None:
        return canonical_json(document)
    return json.dumps(document, sort_keys=True, ensure_ascii=False, indent=indent)


def _refuse_cosine_thresholds(document: dict[str, Any]) -> None:
    """Refuse a pack written when an embedding tier's thresholds were cosines.

    Read as the probabilities the tier scores now, such a floor would refuse or let
    through quite other messages than its writer meant, and the old cosine scores are not
    kept beside the calibrated ones to honour it (docs/decisions.md). A pack that declares
    none reads as it always did; a hand-written one states its minor to be read.

    Raises:
        PackError: naming each such threshold, why, and what to do.
    """
    minor = _minor(document)
    if minor is not None and not 0 <= minor < PROBABILITY_THRESHOLDS_MINOR:
        return  # this minor or later; a negative one is refused by the model
    paths = embedding_threshold_paths(document)
    if not paths:
        return
    reason = (
        f"a pack of format 1.{minor if minor is not None else '?'} declares this embedding threshold as a cosine; since "
        f"format 1.{PROBABILITY_THRESHOLDS_MINOR} the embedding tier scores calibrated "
        "probabilities, so it would not mean what it says. Export the pack again from the "
        "studio, or remove it (the tier fits its own floor), or give it as a probability "
        f'and state "format_minor": {PROBABILITY_THRESHOLDS_MINOR}'
    )
    raise PackError([(path, reason) for path in paths])


def _minor(document: dict[str, Any]) -> int | None:
    """The document's format minor (absent: 0); None when it is not an integer."""
    minor = document.get("format_minor", 0)
    return minor if type(minor) is int else None


def _is_newer_minor(document: dict[str, Any]) -> bool:
    """Same major as this reader, a newer minor: unknown fields are expected, not typos."""
    minor, major = document.get("format_minor", 0), document.get("format_version", FORMAT_VERSION)
    return (
        type(minor) is int
        and minor > FORMAT_MINOR
        and type(major) is int
        and major == FORMAT_VERSION
    )


def _without_unknown_fields(document: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A copy of `document` without the fields this reader's models do not know, and their paths.

    The models themselves say which fields are unknown (pydantic's `extra_forbidden`), at any
    depth, so a field added to any part of the pack needs no change here.
    """
    document = copy.deepcopy(document)
    ignored: list[str] = []
    for _ in range(8):  # a removed field can hide another error, never an endless chain
        try:
            Pack.model_validate(document)
        except ValidationError as exc:
            extras = [e["loc"] for e in exc.errors() if e["type"] == "extra_forbidden"]
            if not extras:
                break
            for loc in extras:
                _remove(document, loc)
                ignored.append(format_location(loc))
        except RecursionError:
            break
        else:
            break
    return document, ignored


def _remove(document: Any, loc: tuple[int | str, ...]) -> None:
    node, parts = document, list(loc)
    for i, part in enumerate(parts[:-1]):
        if not _is_union_tag(parts, i) and _has(node, part):
            node = node[part]
    if isinstance(node, dict):
        node.pop(loc[-1], None)


def _has(node: Any, part: int | str) -> bool:
    if isinstance(node, dict):
        return part in node
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)


def format_location(loc: tuple[int | str, ...]) -> str:
    """Turn a pydantic error location into a JSON path a person can follow: `routes[2].name`."""
    path = ""
    parts = list(loc)
    for i, part in enumerate(parts):
        if isinstance(part, int):
            path += f"[{part}]"
        elif not _is_union_tag(parts, i):
            path += f".{part}" if path else str(part)
    return path or "$"


def _is_union_tag(parts: list[int | str], i: int) -> bool:
    part, previous = parts[i], parts[i - 1] if i else None
    if isinstance(previous, str) and part in _TAG_AFTER.get(previous, ()):
        return True
    # A cascade tier's tag follows its index: ("tiers", 0, "llm", "model") -> tiers[0].model
    if isinstance(previous, int) and i > 1 and parts[i - 2] == "tiers":
        return part in _SCORER_TAGS
    # A match's tag comes right after `match` or after an index in `all`:
    # ("match", "regex", "regex") -> match.regex, ("match", "keywords", "note") -> match.note
    if previous == "match" or (isinstance(previous, int) and i > 1 and parts[i - 2] == "all"):
        return part in _MATCH_TAGS
    return part in _MATCH_TAGS and i + 1 < len(parts) and parts[i + 1] == part


def _document(source: Mapping[str, Any] | str | bytes | os.PathLike[str]) -> dict[str, Any]:
    if isinstance(source, Mapping):
        return dict(source)
    if isinstance(source, str) and source.lstrip()[:1] in ("{", "["):
        return _parse(source)
    if isinstance(source, bytes):
        return _parse(source.decode("utf-8", errors="replace"))
    return _parse(_read(Path(source)))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PackError([("$", f"cannot read {str(path)[:200]!r}: {exc}")]) from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a pack may hold")


def _parse(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise PackError(
            [("$", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")]
        ) from None
    except RecursionError:
        raise PackError([("$", "invalid JSON: nested too deeply")]) from None
    except ValueError as exc:
        raise PackError([("$", f"invalid JSON: {exc}")]) from None
    if not isinstance(data, dict):
        raise PackError([("$", f"a pack is a JSON object, not {type(data).__name__}")])
    return data


def _validate(document: dict[str, Any]) -> Pack:
    try:
        return Pack.model_validate(document)
    except ValidationError as exc:
        problems = _problems(exc)
        # Structure errors stop pydantic before the cross-reference pass: run it on the raw
        # document too, so an editor sees every problem in one go.
        problems += [p for p in _raw_reference_errors(document) if p not in problems]
        raise PackError(problems) from None
    except RecursionError:
        raise PackError([("$", "nested too deeply")]) from None


def _problems(exc: ValidationError) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    too_short: list[tuple[str, str]] = []
    for error in exc.errors(include_url=False, include_input=False):
        ctx = error.get("ctx") or {}
        if error["type"] == "pack_references":
            problems.extend(ctx["problems"])
            continue
        loc = error["loc"]
        if error["type"] == "scorer_kind":  # the union could not pick a model: `kind` is wrong
            loc = (*loc, "kind")
        problem = (format_location(loc), _message(error["msg"]))
        (too_short if error["type"] == "too_short" else problems).append(problem)
    # A list whose only item failed also reports "at least 1 item after validation": noise
    # when the item's own error is already there.
    problems += [p for p in too_short if not any(q[0].startswith(p[0] + "[") for q in problems)]
    return problems


def _raw_reference_errors(document: dict[str, Any]) -> list[tuple[str, str]]:
    def field_of(items: Any, key: str) -> list[Any]:
        if not isinstance(items, list):
            return []
        return [item.get(key) if isinstance(item, dict) else None for item in items]

    return check_references(
        route_names=field_of(document.get("routes"), "name"),
        tool_names=field_of(document.get("tools"), "name"),
        default_route=document.get("default_route"),
        rule_routes=field_of(document.get("rules"), "route"),
    )


def _message(msg: str) -> str:
    # pydantic prefixes messages of our own validators; the path already says where. Packs
    # are JSON, where our immutable tuples are plain lists.
    msg = msg.removeprefix("Value error, ")
    return msg.replace("a valid tuple", "a list").replace("Tuple should", "List should")


def _verify_checksum(claimed: Any, document: dict[str, Any], pack: Pack) -> None:
    if claimed is None:
        return
    if not isinstance(claimed, str) or not claimed.startswith(CHECKSUM_PREFIX):
        raise PackError([("checksum", "must be a string 'sha256:<64 hex digits>'")])
    # A pack written by dump_pack hashes its normalised content; a hand-written one may hash
    # exactly the document it wrote (defaults omitted). Either proves the content is intact.
    if claimed == content_checksum(pack) or claimed == _raw_digest(document):
        return
    raise PackError(
        [("checksum", "does not match the pack's content: it was changed after export")]
    )


def _raw_digest(document: dict[str, Any]) -> str | None:
    try:
        return digest(document)
    except (TypeError, ValueError):
        return None
