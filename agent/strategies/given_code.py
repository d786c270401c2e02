"""What the task's stub files gave, as the run found them: the functions and classes each defines at its
top level, and which functions were stubs; then what a finished run dropped or left a stub. Why: a task that
gives `encode_cyclic` working and `decode_cyclic` as a stub without examples: the loop "finished" with a file
that no longer defined `encode_cyclic`, and, told so, with the file put back as given, stub and all. Both
refuse `finish` (agent/checks/finish.py), for the stubs the task names."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from pydantic import BaseModel

from agent.core.loop import RunResult
from agent.strategies.base import Run, Strategy, Then
from agent.strategies.examples import MOST_FILES, is_stub, python_sources

# a stub's body, as agent/strategies/examples.py's is_stub reads it: only files with such a line are parsed
PLACEHOLDER = re.compile(r"raise NotImplementedError|^\s*(pass|\.\.\.)\s*$|:\s*(pass|\.\.\.)\s*$", re.MULTILINE)


class GivenCodeChecks(Strategy):
    """Before the loop: `finish` is refused while a stub the task names is still a stub, or while a name its
    file defined is gone (the finish gate checks it)."""

    name = "given-code checks"

    def __init__(self) -> None:
        self.found: dict[str, GivenFile] = {}

    def applies(self, run: Run) -> bool:
        if run.gate is None or run.gate.no_tests is not None:
            return False
        self.found = stub_files(run.workspace, run.task)
        return bool(self.found)

    def run(self, run: Run, then: Then) -> RunResult:
        if run.gate is not None:
            run.gate.stub_files = self.found
        return then(run)


class GivenFile(BaseModel):
    defined: set[str]  # top-level functions and classes
    stubs: set[str]  # functions (at any depth) the task names whose body was only a placeholder


class Unfinished(BaseModel):
    dropped: list[str] = []  # `file: name`, given and gone
    stubs: list[str] = []  # `file: name`, a stub then and now


def top_level_names(source: str) -> set[str]:
    """The functions and classes a module defines at its top level (none when it does not parse)."""
    tree = _parse(source)
    return set() if tree is None else _defined(tree)


def stub_files(workspace: Path, task: str) -> dict[str, GivenFile]:
    """The Python files with a stub that `task` names (the first MOST_FILES), as they are now: a repository's
    other stubs (abstract methods, say) are not the task's to fill in."""
    named = set(re.findall(r"\w+", task))
    found: dict[str, GivenFile] = {}
    for path, text in python_sources(workspace):
        if len(found) >= MOST_FILES:
            break
        tree = _parse(text) if PLACEHOLDER.search(text) else None
        stubs = _stubs(tree) & named if tree else set()
        if tree and stubs:
            found[path] = GivenFile(defined=_defined(tree), stubs=stubs)
    return found


def unfinished(given: dict[str, GivenFile], workspace: Path) -> Unfinished:
    """What the given files' names and stubs are now: dropped, or still stubs."""
    result = Unfinished()
    for name, was in given.items():
        path = workspace / name
        tree = _parse(path.read_text(errors="replace")) if path.is_file() and not path.is_symlink() else None
        defined, stubs = (_defined(tree), _stubs(tree)) if tree else (set(), set())
        result.dropped += [f"{name}: {n}" for n in sorted(was.defined - defined)]
        result.stubs += [f"{name}: {n}" for n in sorted(was.stubs & stubs)]
    return result


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _defined(tree: ast.Module) -> set[str]:
    kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    return {node.name for node in tree.body if isinstance(node, kinds)}


def _stubs(tree: ast.Module) -> set[str]:
    functions = (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    return {f.name for f in functions if is_stub(f)}
