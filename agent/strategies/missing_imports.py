"""The standard-library imports a model's Python answer uses and forgot: `math.factorial(i)` with no `import
math`, `factorial(i)` with no `from math import factorial`, `List[int]` with no `from typing import List`.

Why: a benchmark problem's three one-shot answers were all right but for a missing import (`NameError: name
'math' is not defined`), and the loop after them did not recover in 8 steps; another answer used `List`
undefined. Adding the line is what any editor's quick fix does. Only names the module binds nowhere (in any
scope, as a variable, parameter, def, class or import) and that are not builtins are looked up, so a name the
code defines itself is never shadowed."""

from __future__ import annotations

import ast
import builtins
import importlib
import sys

from agent.core.loop import RunResult
from agent.strategies.base import Run, Strategy, Then

IMPORTED_FOR_EFFECT = {"this", "antigravity"}  # standard modules that print or open a browser when imported
# where a bare name is looked up, in this order (the first module that has it wins)
NAME_SOURCES = ("typing", "math", "collections", "itertools", "functools", "heapq", "bisect", "statistics")


class MissingImports(Strategy):
    """Around the whole-file answers of a run on stubs (agent/strategies/one_shot.py): each Python answer gets
    the standard-library imports it uses and forgot, before it is checked."""

    name = "missing imports"

    def applies(self, run: Run) -> bool:
        return run.gate is not None and bool(run.gate.given)

    def run(self, run: Run, then: Then) -> RunResult:
        run = run.but()
        run.equipment.answer_fixes.append(add_missing_imports)
        return then(run)


def add_missing_imports(code: str) -> str:
    """`code` with an import line for each standard-library module or name it uses without binding; `code`
    unchanged when nothing is missing or it does not parse."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    imports = [line for line in map(_import_line, sorted(_unbound_names(tree))) if line]
    if not imports:
        return code
    lines = code.splitlines(keepends=True)
    at = _insertion_line(tree)
    if at and not lines[at - 1].endswith("\n"):
        lines[at - 1] += "\n"
    lines[at:at] = [line + "\n" for line in imports]
    return "".join(lines)


def _unbound_names(tree: ast.Module) -> set[str]:
    """Names read somewhere that nothing in the module binds, builtins aside (none after a `*` import)."""
    loaded: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" for alias in node.names):
                return set()
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
    return loaded - bound - set(dir(builtins))


def _import_line(name: str) -> str | None:
    """`import NAME` for a standard-library module, `from MODULE import NAME` for a public function, class or
    typing alias of one of NAME_SOURCES; None for anything else."""
    if name.startswith("_") or name in IMPORTED_FOR_EFFECT:
        return None
    if name in sys.stdlib_module_names:
        return f"import {name}"
    for module_name in NAME_SOURCES:
        value = getattr(importlib.import_module(module_name), name, None)
        if value is not None and (callable(value) or module_name == "typing"):
            return f"from {module_name} import {name}"
    return None


def _insertion_line(tree: ast.Module) -> int:
    """How many lines come before the new imports: the module docstring and `from __future__` imports."""
    end = 0
    for index, node in enumerate(tree.body):
        docstring = index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (docstring or future):
            break
        end = node.end_lineno or end
    return end
