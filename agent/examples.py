"""The docstring examples (`>>>`) of the functions a run starts as stubs, kept as the run found them.

Without tests, the examples are what `finish` is checked against. A small model whose code fails an example
edits the example instead (seen in HumanEval runs: `(2.0, 2.2)` rewritten to what the code returned), so the
check runs the examples the stubs had when the run started, against the code as it is now."""

from __future__ import annotations

import ast
import doctest
import shlex
from pathlib import Path

from pydantic import BaseModel

from tools.workspace import iter_files, relative

MOST_FILES = 20
MOST_SCANNED = 2_000  # files looked at, at every run's start: a big repository must not slow it down
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
    """The stubs' docstrings with examples in the project's Python files (the first MOST_FILES with some)."""
    found: list[ModuleExamples] = []
    for number, path in enumerate(iter_files(workspace, workspace)):
        if len(found) >= MOST_FILES or number >= MOST_SCANNED:
            break
        if path.suffix != ".py" or path.is_symlink() or not path.is_file() or path.stat().st_size > MOST_BYTES:
            continue
        text = path.read_text(errors="replace")
        docstrings = _docstrings_with_examples(text) if ">>>" in text else []  # parse only what may have some
        if docstrings:
            found.append(ModuleExamples(path=relative(workspace, path), docstrings=docstrings))
    return found


def _docstrings_with_examples(source: str, stubs_only: bool = True) -> list[str]:
    """The docstrings with examples of the stubs (functions whose body is only `raise NotImplementedError`,
    `pass` or `...`): a stub's docstring is what the task asks for; a working function's may change with it."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    functions = (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    chosen = [n for n in functions if not stubs_only or _is_stub(n)]
    docstrings = (ast.get_docstring(n, clean=True) for n in chosen)
    return [d for d in docstrings if d and ">>>" in d]


def _is_stub(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = function.body[1:] if ast.get_docstring(function) is not None else function.body
    return bool(body) and all(_is_placeholder(statement) for statement in body)


def _is_placeholder(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return statement.value.value is Ellipsis
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"
    return False


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
    """The files whose stubs' examples are no longer all there (edited or gone), in any function's docstring
    (the stub is a working function by now)."""
    edited = []
    for module in before:
        path = workspace / module.path
        source = path.read_text(errors="replace") if path.is_file() and not path.is_symlink() else ""
        now = ModuleExamples(path=module.path, docstrings=_docstrings_with_examples(source, stubs_only=False))
        if not set(module.examples()) <= set(now.examples()):
            edited.append(module.path)
    return edited
