"""An export's files, from a folder, a zip or a single file, read within limits; JSON and YAML.

Exports arrive as uploads in the studio, so nothing here trusts them: a zip is read in
memory (never extracted), with bounded entry counts and sizes, and YAML is read without
aliases (a few lines of `*refs` can expand into gigabytes when walked).
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from routing_core.errors import PackError

MAX_FILES = 20_000
MAX_TOTAL_BYTES = 64 * 1024 * 1024


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
        try:
            return json.loads(self.text(path))
        except json.JSONDecodeError as exc:
            raise PackError([(path, f"not valid JSON: {exc.msg} at line {exc.lineno}")]) from None

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


def parse_yaml(text: str, path: str) -> Any:
    """YAML 1.1 safe types, refusing aliases and anchors' reuse.

    Raises:
        PackError: `path: reason` with the line of the problem.
    """
    import yaml

    try:
        return yaml.load(text, Loader=_no_alias_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise PackError([(path, f"not valid YAML: {exc.problem}{where}")]) from None
    except yaml.YAMLError as exc:
        raise PackError([(path, f"not valid YAML: {exc}")]) from None


_LOADER: type[Any] | None = None
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


def _no_alias_loader() -> type[Any]:
    global _LOADER
    if _LOADER is None:
        import yaml

        class NoAliasLoader(yaml.SafeLoader):
            def compose_node(self, parent: Any, index: Any) -> Any:
                if self.check_event(yaml.AliasEvent):
                    event = self.peek_event()  # type: ignore[no-untyped-call]
                    raise yaml.composer.ComposerError(
                        None, None, "aliases (*name) are not accepted", event.start_mark
                    )
                return super().compose_node(parent, index)

            def construct_scalar(self, node: Any) -> Any:
                value = super().construct_scalar(node)
                return join_surrogate_pairs(value) if isinstance(value, str) else value

        _LOADER = NoAliasLoader
    return _LOADER


def items(value: Any) -> list[Any]:
    """A list read from an export, or `[]` when the export put anything else there."""
    return value if isinstance(value, list) else []


def fields(value: Any) -> dict[str, Any]:
    """An object read from an export, or `{}` when the export put anything else there."""
    return value if isinstance(value, dict) else {}
