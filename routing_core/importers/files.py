"""An export's files, from a folder, a zip or a single file, read within limits; JSON and YAML.

Exports arrive as uploads in the studio, so nothing here trusts them: a zip is read in
memory (never extracted), with bounded entry counts and sizes, and YAML is read without
aliases (a few lines of `*refs` can expand into gigabytes when walked).

What one JSON or YAML document may hold is bounded before it is built (`MAX_DOCUMENT_BYTES`,
`MAX_NODES`, `MAX_DEPTH`): a 16 KB zip can unpack to 16 MB of "- a" lines, four million list
items that took a worker 2.6 GB and two minutes to build, and a document nested 10,000 deep
overflows the parsers' recursion. YAML is first read as a stream of events (libyaml, in C,
when PyYAML has it), counting nodes and depth and refusing aliases, and built only if it
passes; JSON's nodes are bounded by a count of its commas and brackets before parsing, and
its depth while it is built. A caller can cancel a long import (`cancellable`): the reading
checks it as it goes.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import json
import re
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from routing_core.errors import PackError

MAX_FILES = 20_000
MAX_TOTAL_BYTES = 64 * 1024 * 1024
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024  # one JSON or YAML file
# Values (mappings, lists, scalars) in one document. A pack holds at most 2,000 routes of
# 5,000 examples, but no export anyone imports comes near: CLINC150, 150 intents, is 23,700
# examples. Building 250,000 takes libyaml about 5 s on one core.
MAX_NODES = 250_000
MAX_DEPTH = 64  # Exports nest a few levels (Lex V2 about eight); 64 leaves room.


class ImportCancelled(Exception):
    """The caller's `cancelled()` said so while the export was read."""


_CANCELLED: contextvars.ContextVar[Callable[[], bool] | None] = contextvars.ContextVar(
    "routing_core_import_cancelled", default=None
)


@contextlib.contextmanager
def cancellable(cancelled: Callable[[], bool] | None) -> Iterator[None]:
    """Within the block, reading an export calls `cancelled()` every few thousand values and
    raises ImportCancelled when it is true."""
    token = _CANCELLED.set(cancelled)
    try:
        yield
    finally:
        _CANCELLED.reset(token)


def check_cancelled() -> None:
    """Raise ImportCancelled when the caller of the import asked to stop.

    Raises:
        ImportCancelled: `cancelled()` is true.
    """
    cancelled = _CANCELLED.get()
    if cancelled is not None and cancelled():
        raise ImportCancelled("the import was cancelled")


class ExportFiles:
    """Relative POSIX path → bytes of every file in an export."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def __contains__(self, path: str) -> bool:
        return path in self.files

    def paths(self) -> list[str]:
        return sorted(self.files)

    def text(self, path: str) -> str:
        try:
            return self.files[path].decode("utf-8-sig")
        except UnicodeDecodeError:
            raise PackError([(path, "not UTF-8 text")]) from None

    def json(self, path: str) -> Any:
        return parse_json(self.text(path), path)

    def yaml(self, path: str) -> Any:
        return parse_yaml(self.text(path), path)

    def under(self, folder: str) -> ExportFiles:
        """The files below `folder` (a zip with one top folder, as people often make them)."""
        prefix = folder.rstrip("/") + "/"
        return ExportFiles(
            {p[len(prefix) :]: b for p, b in self.files.items() if p.startswith(prefix)}
        )

    def rooted_at(self, marker: str) -> ExportFiles:
        """The export re-rooted where `marker` (e.g. `agent.json`) is, if it is one folder down."""
        if marker in self.files:
            return self
        tops = {p.split("/", 1)[0] for p in self.files if p.endswith("/" + marker)}
        candidates = [t for t in tops if f"{t}/{marker}" in self.files]
        return self.under(candidates[0]) if len(candidates) == 1 else self


Source = str | Path | bytes | ExportFiles


def read_agent(source: Source, kind: str) -> tuple[ExportFiles, dict[str, Any]]:
    """A Dialogflow export (ES or CX: both keep `agent.json` at their root) and that object.

    Raises:
        PackError: no `agent.json` (this is not a `kind` export), or one that is no object.
    """
    files = read_export(source).rooted_at("agent.json")
    if "agent.json" not in files:
        raise PackError([("agent.json", f"not found: this is not a {kind}")])
    agent = files.json("agent.json")
    if not isinstance(agent, dict):
        raise PackError([("agent.json", "expected an object")])
    return files, agent


def chosen_language(lang: str, known: set[str], owner: str, what: str) -> str:
    """`lang`, when the export has it; the language every importer's refusal names.

    Raises:
        PackError: "the agent has no 'de' phrases; it has: en, fr" (`owner`, `what`).
    """
    if lang not in known:
        choices = ", ".join(sorted(known))
        raise PackError([("language", f"the {owner} has no {lang!r} {what}; it has: {choices}")])
    return lang


def read_export(source: Source) -> ExportFiles:
    """Every file of a folder, a zip (path or bytes) or one file (named by its file name).

    Raises:
        PackError: unreadable, not a zip when bytes are given, or beyond the limits.
    """
    if isinstance(source, ExportFiles):
        return source
    if isinstance(source, bytes):
        return _read_zip(source, "upload")
    path = Path(source)
    try:
        if path.is_dir():
            return ExportFiles(dict(_folder_files(path)))
        data = path.read_bytes()
    except OSError as exc:
        raise PackError([(str(path), f"cannot read it: {exc.strerror or exc}")]) from None
    if zipfile.is_zipfile(io.BytesIO(data)):
        return _read_zip(data, path.name)
    return ExportFiles({path.name: data})


def read_upload(data: bytes, filename: str) -> ExportFiles:
    """An uploaded file: a zip's files, or the one file under its own (base) name."""
    if zipfile.is_zipfile(io.BytesIO(data)) or filename.lower().endswith(".zip"):
        return _read_zip(data, filename)
    return ExportFiles({PurePosixPath(filename.replace("\\", "/")).name or "upload": data})


def _folder_files(root: Path) -> Iterator[tuple[str, bytes]]:
    total = 0
    for n, path in enumerate(sorted(p for p in root.rglob("*") if p.is_file())):
        if n >= MAX_FILES:
            raise PackError([(str(root), f"more than {MAX_FILES} files")])
        data = path.read_bytes()
        total += len(data)
        if total > MAX_TOTAL_BYTES:
            raise PackError([(str(root), f"more than {MAX_TOTAL_BYTES // 2**20} MB of files")])
        yield path.relative_to(root).as_posix(), data


def _read_zip(data: bytes, where: str) -> ExportFiles:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise PackError([(where, "not a zip file")]) from None
    entries = [i for i in archive.infolist() if not i.is_dir()]
    if len(entries) > MAX_FILES:
        raise PackError([(where, f"more than {MAX_FILES} files in the zip")])
    if sum(i.file_size for i in entries) > MAX_TOTAL_BYTES:
        raise PackError([(where, f"unpacks to more than {MAX_TOTAL_BYTES // 2**20} MB")])
    files = {}
    for info in entries:
        name = PurePosixPath(info.filename.replace("\\", "/")).as_posix().lstrip("/")
        if name.startswith("__MACOSX/"):
            continue  # the Finder's resource forks, not part of any export
        try:
            # the declared sizes can lie: read at most one byte beyond what was declared
            content = archive.open(info).read(info.file_size + 1)
        except (zipfile.BadZipFile, OSError, NotImplementedError, RuntimeError) as exc:
            raise PackError([(f"{where}/{name}", f"cannot unpack it: {exc}")]) from None
        if len(content) > info.file_size:
            raise PackError([(f"{where}/{name}", "larger than the zip declares")])
        files[name] = content
    return ExportFiles(files)


def parse_json(text: str, path: str) -> Any:
    """JSON within `MAX_NODES` values and `MAX_DEPTH` levels.

    Raises:
        PackError: `path: reason`, invalid JSON or beyond a limit.
    """
    _check_size(text, path)
    # Every value but the first follows a comma or opens a container: an upper bound, before
    # anything is built (commas inside strings only make it stricter).
    if sum(text.count(c) for c in ",[{") > MAX_NODES:
        raise PackError([(path, f"more than {MAX_NODES:,} values: too large to import")])
    check_cancelled()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PackError([(path, f"not valid JSON: {exc.msg} at line {exc.lineno}")]) from None
    except RecursionError:
        raise PackError([(path, f"nested more than {MAX_DEPTH} levels deep")]) from None
    _check_depth(value, path)
    return value


def _check_size(text: str, path: str) -> None:
    if len(text) > MAX_DOCUMENT_BYTES:
        raise PackError([(path, f"larger than {MAX_DOCUMENT_BYTES // 2**20} MB: not imported")])


def _check_depth(value: Any, path: str) -> None:
    """Refuse a parsed document nested deeper than MAX_DEPTH (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise PackError([(path, f"nested more than {MAX_DEPTH} levels deep")])
        children = node.values() if isinstance(node, dict) else node
        if isinstance(node, dict | list):
            stack += [(child, depth + 1) for child in children if isinstance(child, dict | list)]


def parse_yaml(text: str, path: str) -> Any:
    """YAML 1.1 safe types, refusing aliases and anchors' reuse, within MAX_NODES and MAX_DEPTH.

    Raises:
        PackError: `path: reason` with the line of the problem.
    """
    import yaml

    _check_size(text, path)
    # libyaml refuses the escaped UTF-16 halves that JSON writes for an emoji ("\ud83d"), which
    # PyYAML's own reader takes (and `join_surrogate_pairs` joins): such a file is read by it.
    loader = _no_alias_loader(pure=bool(_ESCAPED_HALF.search(text)))
    try:
        _check_events(yaml.parse(text, Loader=loader), path)
        return yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise PackError([(path, f"not valid YAML: {exc.problem}{where}")]) from None
    except yaml.YAMLError as exc:
        raise PackError([(path, f"not valid YAML: {exc}")]) from None


def _check_events(events: Iterator[Any], path: str) -> None:
    """Count nodes and depth in the event stream, refuse aliases, before any node is built."""
    import yaml

    nodes = depth = 0
    for event in events:
        if isinstance(event, yaml.AliasEvent):
            line = event.start_mark.line + 1 if event.start_mark else 0
            raise PackError(
                [(path, f"not valid YAML: aliases (*name) are not accepted at line {line}")]
            )
        if isinstance(event, yaml.NodeEvent):
            nodes += 1
            if nodes > MAX_NODES:
                raise PackError([(path, f"more than {MAX_NODES:,} values: too large to import")])
            if nodes % 4096 == 0:
                check_cancelled()
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise PackError([(path, f"nested more than {MAX_DEPTH} levels deep")])
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


_LOADERS: dict[bool, type[Any]] = {}
_ESCAPED_HALF = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATES = re.compile("[\ud800-\udfff]")


def join_surrogate_pairs(text: str) -> str:
    """Join "\\ud83d\\ude00" escapes into the character they spell (😀).

    JSON writes a character beyond the first 65,536 as two escaped UTF-16 halves, and YAML
    (a JSON export read as YAML, as Rasa files may be) keeps them as two lone halves, which
    cannot be stored. A lone half stays as it is, for the storable check to name.
    """
    if not _SURROGATES.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _no_alias_loader(*, pure: bool = False) -> type[Any]:
    """PyYAML's safe loader (libyaml's when PyYAML was built with it, unless `pure`), joining
    surrogate pairs.

    Aliases are refused by `_check_events` before this loader builds anything.
    """
    if pure not in _LOADERS:
        import yaml

        base = yaml.SafeLoader if pure else getattr(yaml, "CSafeLoader", yaml.SafeLoader)

        class SafeLoader(base):  # type: ignore[valid-type,misc]
            def construct_scalar(self, node: Any) -> Any:
                value = super().construct_scalar(node)
                return join_surrogate_pairs(value) if isinstance(value, str) else value

        _LOADERS[pure] = SafeLoader
    return _LOADERS[pure]


def items(value: Any) -> list[Any]:
    """A list read from an export, or `[]` when the export put anything else there."""
    return value if isinstance(value, list) else []


def fields(value: Any) -> dict[str, Any]:
    """An object read from an export, or `{}` when the export put anything else there."""
    return value if isinstance(value, dict) else {}
