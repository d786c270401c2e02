"""The layers import in one direction, and no package imports itself in a circle: a cycle makes import order
matter and hides which module owns what. Found from the source: every import, also those inside functions and
those under `if TYPE_CHECKING:` (a type-only import still ties two modules together; a Protocol in the lower
module names what it needs instead)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agent", "tools", "inference", "skills")
# What each layer may import besides itself (docs/DESIGN: agent on top, tools/inference/skills below it).
MAY_IMPORT = {"agent": {"tools", "inference", "skills"}, "skills": {"tools"}, "tools": set(), "inference": set()}
SHARED = {"inference.paths", "inference.errors"}  # the app's folders and version, the error root: every layer may ask


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The project modules `path` imports (a `from package import name` counts `package.name` when that is a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found |= {name for name in names if name in modules}
    return found


@cache
def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}
    modules = set(files)
    return {name: imports_of(path, modules) - {name} for name, path in files.items()}


def cycle_in(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules along it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        state[node] = 2
        path.pop()
        return None

    for start in sorted(edges):
        if start not in state and (found := visit(start)):
            return found
    return None


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle_inside_a_package(package):
    edges = {
        m: {t for t in targets if t.split(".")[0] == package}
        for m, targets in graph().items()
        if m.split(".")[0] == package
    }
    cycle = cycle_in(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_layers_import_downwards_only():
    wrong = sorted(
        f"{m} imports {t}"
        for m, targets in graph().items()
        for t in targets
        if t.split(".")[0] != m.split(".")[0] and t.split(".")[0] not in MAY_IMPORT[m.split(".")[0]] and t not in SHARED
    )
    assert wrong == []


def test_the_cycle_finder_finds_one():
    assert cycle_in({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle_in({"a": {"b"}, "b": set()}) is None
