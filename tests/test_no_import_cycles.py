"""No import cycles in a package, counting every import: at module level, inside functions and
under `if TYPE_CHECKING`.

An import inside a function hides a cycle from Python (it runs after both modules have loaded)
but not from a reader: two modules that need each other are one module in two files, and the
order they may be imported in becomes a rule nobody wrote down. So the graph here has an edge
for every `import` statement wherever it stands, and the test names the cycle it finds.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def module_name(path: Path) -> str:
    """The dotted name of a source file under ROOT (a package's __init__ is the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules(package: str) -> dict[str, Path]:
    """Every module of `package` (tests and migrations excluded: nothing imports them)."""
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if "tests" in parts or "migrations" in parts:
            continue
        found[module_name(path)] = path
    return found


def _base(node: ast.ImportFrom, path: Path, module: str) -> str:
    """The absolute module a `from ... import` reads from (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    anchor = module.split(".")
    drop = node.level - 1 if path.name == "__init__.py" else node.level
    anchor = anchor[: len(anchor) - drop]
    return ".".join([*anchor, node.module] if node.module else anchor)


def imported_modules(path: Path, module: str, modules: Collection[str]) -> set[str]:
    """The modules among `modules` that the file imports, wherever the import statement stands.

    `from a.b import c` imports the module `a.b.c` when there is one, else the name `c` of `a.b`.
    Importing `a.b.c` also runs the packages `a` and `a.b` first: those are edges too, except
    toward a package the importing module is itself inside (it is already being imported).
    """
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _base(node, path, module)
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    for name in list(found):
        parts = name.split(".")
        found.update(".".join(parts[:n]) for n in range(1, len(parts)))
    return {
        name
        for name in found
        if name in modules and name != module and not module.startswith(name + ".")
    }


def import_graph(package: str) -> dict[str, set[str]]:
    """module -> the modules of `package` it imports (anywhere in its body)."""
    modules = package_modules(package)
    return {name: imported_modules(path, name, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as [a, b, ..., a], or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for start in sorted(graph):
        if start in state:
            continue
        path: list[str] = [start]
        stack: list[Iterator[str]] = [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            step = next(stack[-1], None)
            if step is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(step) == 1:
                return [*path[path.index(step) :], step]
            elif step not in state:
                state[step] = 1
                path.append(step)
                stack.append(iter(sorted(graph[step])))
    return None


@pytest.mark.parametrize("package", ["studio", "routing_core"])
def test_no_import_cycles(package: str) -> None:
    cycle = find_cycle(import_graph(package))
    assert cycle is None, f"import cycle in {package}: {' -> '.join(cycle or [])}"


def test_the_check_sees_a_cycle_inside_a_function(tmp_path: Path) -> None:
    """An import inside a function, and a relative one, is an edge; a cycle of them is found."""
    package = tmp_path / "p"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from p import b\n")
    (package / "c.py").write_text("import p.a\n")
    (package / "b.py").write_text("def f() -> None:\n    from .a import thing\n")
    modules = {"p", "p.a", "p.b", "p.c", "q", "q.d"}
    assert imported_modules(package / "a.py", "p.a", modules) == {"p.b"}
    assert imported_modules(package / "b.py", "p.b", modules) == {"p.a"}
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "d.py").write_text("from p.a import thing\n")
    # Importing p.a from outside p runs p's __init__ first: an edge to p as well.
    assert imported_modules(tmp_path / "q" / "d.py", "q.d", modules) == {"p", "p.a"}
    graph = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": set()}
    assert find_cycle(graph) == ["p.a", "p.b", "p.c", "p.a"]
    assert find_cycle({"p.a": {"p.b"}, "p.b": set()}) is None
