"""A Python project's docstring examples (`>>>`), kept as the run found them.

Without tests, the examples are what `finish` is checked against. A small model whose code fails an example
edits the example instead (seen in HumanEval runs: `(2.0, 2.2)` rewritten to what the code returned), so the
check runs the examples the files had when the run started, against the code as it is now."""

from __future__ import annotations

import ast
import doctest
import shlex
from pathlib import Path

from pydantic import BaseModel

from tools.workspace import iter_files, relative

MOST_FILES = 20
MOST_BYTES = 200_000
MOST_ARGUMENT = 100_000  # the examples travel as one command-line argument (Linux caps one at 128 KiB)
# Runs the examples given as its one argument, as doctest would from the module's docstrings.
RUNNER = (
    "import doctest, sys; sys.path.insert(0, '.'); "
    "test = doctest.DocTestParser().get_doctest(sys.argv[1], {}, 'examples', 'the examples', 0); "
    "runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS); "
    "runner.run(test); sys.exit(1 if runner.failures else 0)"
)


class ModuleExamples(BaseModel):
    path: str  # relative to the workspace
    docstrings: list[str]  # each docstring that has examples, as written

    def examples(self) -> list[tuple[str, str]]:
        """Each example's source and expected output: what must not change (the prose around them may)."""
        parser = doctest.DocTestParser()
        return [(e.source, e.want) for d in self.docstrings for e in parser.get_examples(d)]


def collect(workspace: Path) -> list[ModuleExamples]:
    """The docstrings with examples in the project's Python files (the first MOST_FILES that have some)."""
    found: list[ModuleExamples] = []
    for path in iter_files(workspace, workspace):
        if len(found) >= MOST_FILES:
            break
        if path.suffix != ".py" or path.is_symlink() or not path.is_file() or path.stat().st_size > MOST_BYTES:
            continue
        docstrings = _docstrings_with_examples(path.read_text(errors="replace"))
        if docstrings:
            found.append(ModuleExamples(path=relative(workspace, path), docstrings=docstrings))
    return found


def _docstrings_with_examples(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))]
    docstrings = (ast.get_docstring(n, clean=True) for n in nodes)
    return [d for d in docstrings if d and ">>>" in d]


def command(modules: list[ModuleExamples], python: str = "python") -> str | None:
    """One command that runs these examples against the modules as they are now, or None without examples
    (or with more than one argument can carry)."""
    text = "".join(_as_doctest(m) for m in modules)
    if not modules or len(text.encode()) > MOST_ARGUMENT:
        return None
    return f"{python} -c {shlex.quote(RUNNER)} {shlex.quote(text)}"


def _as_doctest(module: ModuleExamples) -> str:
    """The module's examples under an import of the module (its private names too, as in its own docstrings)."""
    name = module.path.removesuffix(".py").replace("/", ".")
    setup = f">>> import {name} as _module; globals().update(vars(_module))\n\n"
    return setup + "".join(f"{docstring}\n\n" for docstring in module.docstrings)


def changed(before: list[ModuleExamples], workspace: Path) -> list[str]:
    """The files whose docstring examples are no longer as they were (edited or gone)."""
    now = {m.path: m.examples() for m in collect(workspace)}
    return [m.path for m in before if now.get(m.path) != m.examples()]
