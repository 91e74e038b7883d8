"""No import cycles in routing_core, counting the imports inside functions too.

An import inside a function still makes its module depend on the imported one; it only
moves the failure from import time to the first call, and hides the cycle from a reader.
So every `import` is an edge here, wherever it is, except those under `if TYPE_CHECKING:`:
a type checker runs them, Python never does (two modules whose types name each other are
not a cycle at run time). Importing `a.b.c` from outside the package `a.b` runs
`a/b/__init__.py` first, so that is an edge to the package as well.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

Graph = dict[str, dict[str, int]]  # module -> imported module -> line of the first import


def module_files(package: Path) -> dict[str, Path]:
    """Every module of the package under `package` by dotted name (`__init__` as the package)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def import_graph(package: Path) -> Graph:
    """Which module imports which, module-level and function-level imports alike."""
    files = module_files(package)
    graph: Graph = {}
    for name, path in files.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = graph.setdefault(name, {})
        for target, line in _imports(ast.parse(path.read_text("utf-8")), here, files):
            if target != name:
                edges.setdefault(target, line)
    return graph


def _imports(tree: ast.Module, here: str, files: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """(module, line) for every import the module runs, resolved against the known modules."""
    for node in _run_time_nodes(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, here)
            # `from pkg import sub` imports the submodule; `from mod import name` the module.
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names
            ]
        else:
            continue
        for target in targets:
            for module in (*_packages_run_first(target, here), target):
                if module in files:
                    yield module, node.lineno


def _run_time_nodes(tree: ast.Module) -> Iterator[ast.AST]:
    """Every node except the bodies of `if TYPE_CHECKING:` blocks."""
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            pending.extend(node.orelse)
            continue
        pending.extend(ast.iter_child_nodes(node))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _absolute(node: ast.ImportFrom, here: str) -> str:
    if not node.level:
        return node.module or ""
    parts = here.split(".")[: len(here.split(".")) - node.level + 1]
    return ".".join([*parts, node.module] if node.module else parts)


def _packages_run_first(target: str, here: str) -> list[str]:
    """The packages whose `__init__` importing `target` runs: those the importer is not in."""
    parts = target.split(".")
    packages = [".".join(parts[:i]) for i in range(1, len(parts))]
    return [p for p in packages if here != p and not here.startswith(p + ".")]


def cycles(graph: Graph) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module, as a path."""
    return [_cycle_in(graph, c) for c in _components(graph) if len(c) > 1]


def _components(graph: Graph) -> list[set[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, {}))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    components.append(component)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, {})))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return components


def _cycle_in(graph: Graph, component: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself (breadth first)."""
    start = min(component)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph.get(node, {})):
                if child not in component or child in came_from:
                    continue
                came_from[child] = node
                if child == start:
                    path = [start]
                    while path[-1] != start or len(path) == 1:
                        path.append(came_from[path[-1]])
                    return path[::-1]
                following.append(child)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # a component always has one


def describe(graph: Graph, cycle: list[str]) -> str:
    """`a -> b (a.py:12) -> a (b.py:30)`: each step with the line that imports."""
    steps = [cycle[0]]
    for before, after in zip(cycle, cycle[1:], strict=False):
        steps.append(f"{after} (line {graph[before][after]} of {before})")
    return " -> ".join(steps)


def test_routing_core_has_no_import_cycle() -> None:
    graph = import_graph(ROOT / "routing_core")
    found = [
        f"{describe(graph, _cycle_in(graph, c))}\n  (modules in this tangle: {', '.join(sorted(c))})"
        for c in _components(graph)
        if len(c) > 1
    ]
    assert not found, "import cycles in routing_core:\n" + "\n".join(found)


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


def test_an_import_inside_a_function_is_a_cycle_and_is_named(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg.b import thing\n",
            "pkg/b.py": "thing = 1\n\ndef late():\n    from pkg import a\n    return a\n",
        },
    )
    graph = import_graph(package)
    assert [describe(graph, c) for c in cycles(graph)] == [
        "pkg.a -> pkg.b (line 1 of pkg.a) -> pkg.a (line 4 of pkg.b)"
    ]


def test_a_package_init_run_by_an_outside_import_is_part_of_a_cycle(tmp_path: Path) -> None:
    # `pkg.low` imports `pkg.sub.leaf`, which runs `pkg/sub/__init__.py`, which imports low.
    package = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low.py": "def f():\n    from pkg.sub.leaf import x\n",
            "pkg/sub/__init__.py": "from pkg.low import f\n",
            "pkg/sub/leaf.py": "x = 1\n",
        },
    )
    assert cycles(import_graph(package)) == [["pkg.low", "pkg.sub", "pkg.low"]]


def test_type_checking_imports_and_a_package_importing_its_own_modules_are_not_cycles(
    tmp_path: Path,
) -> None:
    package = _package(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.a import A\n",
            "pkg/a.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n"
                "from pkg import c\nclass A: ...\n"
            ),
            "pkg/b.py": "from pkg.a import A\nclass B(A): ...\n",
            "pkg/c.py": "",
        },
    )
    assert cycles(import_graph(package)) == []
