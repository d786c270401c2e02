"""The names a task's stub files define at their top level, as the run found them, and which of them an
answer dropped. Why: HumanEval/38 gives `encode_cyclic` working and `decode_cyclic` as a stub without
examples; the loop "finished" with a file that no longer defined `encode_cyclic`, and the task's own check,
which calls it, failed. A finish that drops what the task gave is refused (agent/checks.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from agent.examples import MOST_BYTES, MOST_FILES, MOST_SCANNED, is_stub
from tools.workspace import iter_files, relative

# a stub's body, as agent/examples.py's is_stub reads it: only files with such a line are parsed
PLACEHOLDER = re.compile(r"raise NotImplementedError|^\s*(pass|\.\.\.)\s*$|:\s*(pass|\.\.\.)\s*$", re.MULTILINE)


def top_level_names(source: str) -> set[str]:
    """The functions and classes a module defines at its top level (none when it does not parse)."""
    try:
        return _defined(ast.parse(source))
    except (SyntaxError, ValueError):
        return set()


def _defined(tree: ast.Module) -> set[str]:
    kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    return {node.name for node in tree.body if isinstance(node, kinds)}


def stub_files(workspace: Path) -> dict[str, set[str]]:
    """For each Python file with a stub (the first MOST_FILES), the names it defines at its top level."""
    found: dict[str, set[str]] = {}
    for number, path in enumerate(iter_files(workspace, workspace)):
        if len(found) >= MOST_FILES or number >= MOST_SCANNED:
            break
        if path.suffix != ".py" or path.is_symlink() or not path.is_file() or path.stat().st_size > MOST_BYTES:
            continue
        text = path.read_text(errors="replace")
        if not PLACEHOLDER.search(text):
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        if any(is_stub(f) for f in functions):
            found[relative(workspace, path)] = _defined(tree)
    return found


def dropped(given: dict[str, set[str]], workspace: Path) -> list[str]:
    """`file: name` for each name the task's stub files defined that they no longer do."""
    gone = []
    for name, defined in given.items():
        path = workspace / name
        source = path.read_text(errors="replace") if path.is_file() and not path.is_symlink() else ""
        gone += [f"{name}: {n}" for n in sorted(defined - top_level_names(source))]
    return gone
