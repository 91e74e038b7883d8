"""The studio's layout holds: a short top level, and no area reaching into another's modules.

Each area (studio/<area>/) re-exports in its `__init__.py` (`__all__`) the names other areas
may use; everything else in it is its own business, free to move. The app's wiring (the API
root, the URL map, the WSGI entry point, management commands) mounts each area's routers,
URLs and commands, so it may name their modules.
"""

from __future__ import annotations

import ast

from tests.test_no_import_cycles import ROOT, package_modules

STUDIO = ROOT / "studio"
AREAS = {
    "agents",
    "authoring",
    "importing",
    "jobs",
    "people",
    "playground",
    "publishing",
    "suites",
    "traffic",
}
WIRING = {"studio.api", "studio.urls", "studio.shared.wsgi"}
# What Django needs at the app's top (besides __init__.py) and the studio's own packages.
TOP = {"settings.py", "urls.py", "apps.py", "api.py", "models", "shared", *AREAS}


def _owner(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in AREAS) else None


def _public(area: str) -> set[str]:
    """The names in an area's `__all__`."""
    tree = ast.parse((STUDIO / area / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    return set()


def crossings() -> list[str]:
    """Every import of one area's module or private name by another area or shared plumbing."""
    wrong = []
    for module, path in package_modules("studio").items():
        if module in WIRING or module.startswith("studio.management"):
            continue
        owner = _owner(module)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [(alias.name, None) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [(node.module, alias.name) for alias in node.names]
            else:
                continue
            for target, name in targets:
                parts = target.split(".")
                if parts[0] != "studio" or len(parts) < 2 or parts[1] not in AREAS:
                    continue
                if parts[1] == owner:
                    continue
                if len(parts) > 2 or name is None or name not in _public(parts[1]):
                    wrong.append(f"{module} imports {target}{f'.{name}' if name else ''}")
    return wrong


def test_no_area_imports_another_areas_internals():
    assert crossings() == []


def test_the_top_level_holds_settings_urls_the_app_the_api_and_the_packages():
    entries = {
        p.name
        for p in STUDIO.iterdir()
        if p.name not in {"__init__.py", "__pycache__", "migrations", "management"}
    }
    assert entries == TOP
    assert len(entries) <= 15


def test_every_area_has_a_public_face_that_names_only_what_it_defines_or_imports():
    for area in AREAS:
        names = _public(area)
        init = (STUDIO / area / "__init__.py").read_text(encoding="utf-8")
        assert all(f" {name}" in init or f"{name}," in init for name in names), area
        assert not any(name.startswith("_") for name in names), area
