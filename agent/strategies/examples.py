"""The docstring examples of the functions a run starts as stubs, kept as the run found them: doctest's `>>>`
form, and with the `humaneval` preset also examples written in prose (agent/strategies/prose_examples.py).

Without tests, the examples are what `finish` is checked against. A small model whose code fails an example
edits the example instead (seen in benchmark runs: `(2.0, 2.2)` rewritten to what the code returned), so the
check runs the examples the stubs had when the run started, against the code as it is now."""

from __future__ import annotations

import ast
import doctest
import inspect
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import TypeGuard

from pydantic import BaseModel

from agent.core.loop import RunResult
from agent.strategies.base import Run, Strategy, Then, named
from agent.strategies.prose_examples import PROSE_FORMS, named_examples, parameter_names, prose_examples
from tools.workspace import iter_files, relative

MOST_FILES = 20
MOST_SCANNED = 2_000  # files looked at, at every run's start: a big repository must not slow it down
MOST_BYTES = 200_000
MOST_ARGUMENT = 100_000  # the examples travel as one command-line argument (Linux caps one at 128 KiB)
# Runs the examples given as its one argument, as doctest would from the module's docstrings.
# Exit 2 when an example raised (the module does not import, a NameError...), 1 when values differ: wrong
# examples give wrong values, never a crash, so only a difference may be let through (agent/checks/finish.py)
RUNNER = """import doctest, sys
sys.path.insert(0, '.')
class Runner(doctest.DocTestRunner):
    raised = False
    def report_unexpected_exception(self, *arguments):
        self.raised = True
        super().report_unexpected_exception(*arguments)
test = doctest.DocTestParser().get_doctest(sys.argv[1], {}, 'examples', 'the examples', 0)
runner = Runner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
runner.run(test)
sys.exit(2 if runner.raised else 1 if runner.failures else 0)
"""
RAISED = 2  # RUNNER's exit code when an example raised


class ExampleChecks(Strategy):
    """Before the loop: where the project has no tests of its own, `finish` is checked against the docstring
    examples of the stubs the task names, as the run found them (the finish gate runs them)."""

    name = "docstring-example checks"

    def __init__(self) -> None:
        self.found: list[ModuleExamples] = []

    def applies(self, run: Run) -> bool:
        if run.gate is None or run.gate.no_tests is not None:
            return False
        self.found = for_task(collect(run.workspace, prose=run.config.prose_examples), run.task)
        return bool(self.found)

    def run(self, run: Run, then: Then) -> RunResult:
        if run.gate is not None:
            run.gate.given = self.found
        return then(run)


def for_task(modules: list[ModuleExamples], task: str) -> list[ModuleExamples]:
    """The examples of the stubs `task` names (by file, or by function): a repository's other stubs are not
    the task's to fill in, and their examples fail before the run as after it."""
    kept = []
    for module in modules:
        chosen = [i for i, owner in enumerate(module.owners) if named(task, module.path, [owner])]
        if chosen:
            docstrings, owners = [module.docstrings[i] for i in chosen], [module.owners[i] for i in chosen]
            kept.append(module.model_copy(update={"docstrings": docstrings, "owners": owners}))
    return kept


class ModuleExamples(BaseModel):
    path: str  # relative to the workspace
    docstrings: list[str]  # each docstring that has examples, as written
    names: list[str] = []  # the module's top-level functions: prose examples call one of them
    owners: list[str] = []  # per docstring, the function it documents (examples by argument name call it)
    parameters: dict[str, list[str]] = {}  # each top-level function's positional parameters
    prose_forms: bool = False  # examples written in prose count too (agent/strategies/prose_examples.py)

    def examples(self) -> list[tuple[str, str]]:
        """Each example's source and expected output: what must not change (the prose around them may)."""
        given = [(e.source, e.want) for d in self.docstrings for e in doctest_examples(d)]
        return given + self.prose()

    def prose(self) -> list[tuple[str, str]]:
        """The examples written in prose (with `prose_forms`): calls with their values, and arguments by name."""
        if not self.prose_forms:
            return []
        found, names, placeholders = [], set(self.names), parameter_names(self.parameters)
        for docstring, owner in zip(self.docstrings, self.owners):
            found += prose_examples(docstring, names, owner, placeholders)
            found += named_examples(docstring, owner, self.parameters.get(owner, []))
        return found


def doctest_examples(docstring: str) -> list[doctest.Example]:
    """The `>>>` examples, none where doctest cannot read them (inconsistent indentation)."""
    try:
        return doctest.DocTestParser().get_examples(docstring)
    except ValueError:
        return []


def python_sources(workspace: Path) -> Iterator[tuple[str, str]]:
    """(path, text) of the project's Python files among the first MOST_SCANNED files, each at most MOST_BYTES:
    what a run looks at when it starts (here and in agent/strategies/given_code.py)."""
    for number, path in enumerate(iter_files(workspace, workspace)):
        if number >= MOST_SCANNED:
            return
        if path.suffix == ".py" and not path.is_symlink() and path.is_file() and path.stat().st_size <= MOST_BYTES:
            yield relative(workspace, path), path.read_text(errors="replace")


def collect(workspace: Path, prose: bool = False) -> list[ModuleExamples]:
    """The stubs' docstrings with examples in the project's Python files (the first MOST_FILES with some);
    `prose`: examples written in prose count too (the `humaneval` preset)."""
    found: list[ModuleExamples] = []
    for path, text in python_sources(workspace):
        if len(found) >= MOST_FILES:
            break
        if ">>>" in text or (prose and any(p.search(text) for p in PROSE_FORMS)):  # parse only what may have some
            module = _module_examples(path, text, prose=prose)
            if module.docstrings:
                found.append(module)
    return found


def _module_examples(path: str, source: str, stubs_only: bool = True, prose: bool = False) -> ModuleExamples:
    """The docstrings with examples of the module's stubs (functions whose body is only `raise
    NotImplementedError`, `pass` or `...`; `stubs_only=False`: of all functions): a stub's docstring is what
    the task asks for; a working function's may change with it."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ModuleExamples(path=path, docstrings=[])
    top = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    names = [n.name for n in top]
    parameters = {n.name: [a.arg for a in n.args.posonlyargs + n.args.args] for n in top}
    functions = (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    chosen = [n for n in functions if not stubs_only or is_stub(n)]
    documented = [(d, n.name) for n in chosen if (d := _docstring(n, source))]
    placeholders, known = parameter_names(parameters), set(names)
    with_examples = [
        (d, owner)
        for d, owner in documented
        if doctest_examples(d)
        or (
            prose
            and (prose_examples(d, known, owner, placeholders) or named_examples(d, owner, parameters.get(owner, [])))
        )
    ]
    return ModuleExamples(
        path=path,
        docstrings=[d for d, _ in with_examples],
        names=names,
        owners=[owner for _, owner in with_examples],
        parameters=parameters,
        prose_forms=prose,
    )


def _docstring(function: ast.FunctionDef | ast.AsyncFunctionDef, source: str) -> str | None:
    """The function's docstring; as written (escapes such as `\\n` left as they are) where doctest cannot read
    the docstring Python makes of it: `remove_vowels("abcdef\\nghijklm")`, in a docstring that
    is not raw, puts a line break inside the example, which doctest refuses (its module does too)."""
    statement = _docstring_statement(function)
    if statement is None:
        return None
    docstring = inspect.cleandoc(ast.literal_eval(statement.value))
    if doctest_examples(docstring) or ">>>" not in docstring:
        return docstring
    written = ast.get_source_segment(source, statement) or ""  # the docstring's statement: the literal
    quotes = re.match(r"[rRuU]?('\'\'|\"\"\"|'|\")", written)
    if quotes is None or not written.endswith(quotes.group(1)):
        return docstring
    return inspect.cleandoc(written[quotes.end() : len(written) - len(quotes.group(1))])


def _docstring_statement(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.Expr | None:
    """The function's docstring statement: its first, or the first after imports (a function may start with
    `import math`, then the docstring, which Python no longer counts as one)."""
    body = _after_imports(function.body)
    return body[0] if body and _is_string(body[0]) else None


def _after_imports(body: list[ast.stmt]) -> list[ast.stmt]:
    start = next((i for i, s in enumerate(body) if not isinstance(s, ast.Import | ast.ImportFrom)), len(body))
    return body[start:]


def _is_string(statement: ast.stmt) -> TypeGuard[ast.Expr]:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def is_stub(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = _after_imports(function.body)
    body = body[1:] if body and _is_string(body[0]) else body
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
    """The module's examples under an import of the module (its private names too, as in its own docstrings).
    An expected value is written as Python writes it (`"21"` as `'21'`, `6.00` as `6.0`, a list over two lines
    on one), as the code's output will be; `>>> f(x) == y` with nothing expected expects True, as meant."""
    name = module.path.removesuffix(".py").replace("/", ".")
    setup = f">>> import {name} as _module; globals().update(vars(_module))\n\n"
    return setup + "".join(_as_example(source, want) for source, want in module.examples())


def _as_example(source: str, want: str) -> str:
    source, want = source.rstrip("\n"), want.rstrip("\n")
    if not want.strip() and isinstance(_expression(source), ast.Compare):
        want = "True"
    if "..." not in want and want.strip():
        try:
            value = ast.literal_eval(want.strip())
            want = "" if value is None else repr(value)  # Python's prompt shows nothing for None
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            pass
    return ">>> " + "\n... ".join(source.split("\n")) + "\n" + (want + "\n" if want else "") + "\n"


def _expression(source: str) -> ast.expr | None:
    try:
        return ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def changed(before: list[ModuleExamples], workspace: Path) -> list[str]:
    """The files whose stubs' examples are no longer all there (edited or gone), in any function's docstring
    (the stub is a working function by now)."""
    edited = []
    for module in before:
        path = workspace / module.path
        source = path.read_text(errors="replace") if path.is_file() and not path.is_symlink() else ""
        now = _module_examples(module.path, source, stubs_only=False, prose=module.prose_forms)
        if not set(module.examples()) <= set(now.examples()):
            edited.append(module.path)
    return edited
