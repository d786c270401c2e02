"""The docstring examples of the functions a run starts as stubs, kept as the run found them: doctest's
`>>>` form, calls written in prose (`f(1, 4) => true`, `f([1, 2]) == 3`, `f('hi') returns 'lm'`: more than
half of HumanEval's problems give their examples so; also under another name, with bare words or after a
worked sum), and arguments given by name (`For lst = [1, 2] the output should be 3`, `Input: arr = [1], k =
1` then `Output: [1]`, `arr = [1]` then `return [1]`).

Without tests, the examples are what `finish` is checked against. A small model whose code fails an example
edits the example instead (seen in HumanEval runs: `(2.0, 2.2)` rewritten to what the code returned), so the
check runs the examples the stubs had when the run started, against the code as it is now."""

from __future__ import annotations

import ast
import builtins
import doctest
import inspect
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import TypeGuard

from pydantic import BaseModel

from agent.loop import RunResult
from agent.strategies.base import Run, Strategy, Then, named
from tools.workspace import iter_files, relative

MOST_FILES = 20
MOST_SCANNED = 2_000  # files looked at, at every run's start: a big repository must not slow it down
MOST_BYTES = 200_000
MOST_ARGUMENT = 100_000  # the examples travel as one command-line argument (Linux caps one at 128 KiB)
# Runs the examples given as its one argument, as doctest would from the module's docstrings.
# Exit 2 when an example raised (the module does not import, a NameError...), 1 when values differ: wrong
# examples give wrong values, never a crash, so only a difference may be let through (agent/checks.py)
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


# A call and what it returns, written in prose: maybe a bullet, `for` or `assert` first, then `name(literal
# arguments)`, an arrow, `==`, `=`, `returns` (maybe after a `#`), then a value
PROSE_EXAMPLE = re.compile(
    r"^[ \t]*(?:(?:[*-]|for|assert)[ \t]+)?(?P<call>[A-Za-z_]\w*\(.*\))[ \t]*(?:\#[ \t]*)?"
    r"(?P<arrow>==>|==|=>|->|➞|=|returns|should return)[ \t]*>?[ \t]*(?P<want>.+?)[ \t]*$",
    re.M,
)
# The arguments by name and the value, without the call: `For lst = [1, 2] the output should be 3`, ...
NAMED_EXAMPLE = re.compile(
    r"^[ \t]*for[ \t]+(?P<arguments>.+?),?[ \t]+the (?:output|result) should be[ \t]+(?P<want>.+?)[ \t]*$",
    re.M | re.I,
)
# ... `Input: arr = [1, 2], k = 1` (or only the value, for one parameter; or one argument a line below it)
# with `Output: [2]` on a later line
INPUT_OUTPUT_EXAMPLE = re.compile(
    r"^[ \t]*Input:[ \t]*\n?(?P<arguments>(?:[ \t]*\S.*\n)+?)(?:[ \t]*\n)*[ \t]*Output:[ \t]*(?P<want>\S.*?)[ \t]*$",
    re.M,
)
# ... and `arr = [2, 1]`, maybe `-> sort arr -> [1, 2]` lines, then `return [1, 2]` (HumanEval/105)
ASSIGN_RETURN_EXAMPLE = re.compile(
    r"^[ \t]*(?P<arguments>[A-Za-z_]\w*[ \t]*=[ \t]*\S.*?)[ \t]*\n(?:[ \t]*->.*\n)*"
    r"[ \t]*return[ \t]*=?[ \t]*(?P<want>\S.*?)[ \t]*$",
    re.M,
)

NAMED_FORMS = (NAMED_EXAMPLE, INPUT_OUTPUT_EXAMPLE, ASSIGN_RETURN_EXAMPLE)
EXAMPLE_FORMS = (PROSE_EXAMPLE, *NAMED_FORMS)


class ExampleChecks(Strategy):
    """Before the loop: where the project has no tests of its own, `finish` is checked against the docstring
    examples of the stubs the task names, as the run found them (the finish gate runs them)."""

    name = "docstring-example checks"

    def __init__(self) -> None:
        self.found: list[ModuleExamples] = []

    def applies(self, run: Run) -> bool:
        if run.gate is None or run.gate.no_tests is not None:
            return False
        self.found = for_task(collect(run.workspace), run.task)
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

    def examples(self) -> list[tuple[str, str]]:
        """Each example's source and expected output: what must not change (the prose around them may)."""
        given = [(e.source, e.want) for d in self.docstrings for e in doctest_examples(d)]
        return given + self.prose()

    def prose(self) -> list[tuple[str, str]]:
        """The examples written in prose: calls with their values, and arguments by name with theirs."""
        found, names, placeholders = [], set(self.names), parameter_names(self.parameters)
        for docstring, owner in zip(self.docstrings, self.owners):
            found += prose_examples(docstring, names, owner, placeholders)
            found += named_examples(docstring, owner, self.parameters.get(owner, []))
        return found


def doctest_examples(docstring: str) -> list[doctest.Example]:
    """The `>>>` examples, none where doctest cannot read them (inconsistent indentation, as in HumanEval/51)."""
    try:
        return doctest.DocTestParser().get_examples(docstring)
    except ValueError:
        return []


def prose_examples(
    docstring: str, names: set[str], owner: str | None = None, placeholders: frozenset[str] = frozenset()
) -> list[tuple[str, str]]:
    """The prose examples in `docstring`: (call, expected value) as Python source, where the call is to one of
    `names` with literal arguments and the value reads as a literal (`true` is True, a final `.` dropped,
    `("Venus")` a one-tuple); lines that do not read so are prose. A docstring that also writes a formula with
    `=` (`tri(n) = 1 + n / 2`, HumanEval/130) uses `=` for mathematics: none of its `=` lines is an example.
    A call of a name the module does not define (nor Python) calls the docstring's `owner`: the docstring
    was written for another name (`list_sort` for `sorted_list_sum`, HumanEval/149); a bare word in a call is
    a string (`is_happy(abcd) => True`, HumanEval/80) unless it is one of the `placeholders` (the parameters'
    names: `f(x, 2) => false` is prose)."""
    found: list[tuple[str, str, bool]] = []
    formulas = False
    for match in PROSE_EXAMPLE.finditer(docstring):
        call, want, equals = (
            _call(match.group("call"), names, owner, placeholders),
            _literal(match.group("want")),
            match.group("arrow") == "=",
        )
        if want is not None and call is not None:
            found.append((call, want, equals))
        else:
            formulas |= equals
    return [(call, want) for call, want, equals in found if not (equals and formulas)]


def parameter_names(parameters: dict[str, list[str]]) -> frozenset[str]:
    """The parameters' names: in a prose call they stand for a value (`f(x, 2)`), not for a string."""
    return frozenset(name for names in parameters.values() for name in names)


def named_examples(docstring: str, function: str, parameters: list[str]) -> list[tuple[str, str]]:
    """The examples that give the arguments by parameter name (`For s = "ab", c = "b" the result should be
    'a'`, `Input: arr = [1], k = 1` ... `Output: [1]`), as calls of `function` with their expected values;
    where not every parameter has a literal value, it is prose."""
    found = []
    for pattern in NAMED_FORMS:
        for match in pattern.finditer(docstring):
            values, want = _named_arguments(match.group("arguments"), parameters), _literal(match.group("want"))
            if values is not None and want is not None:
                found.append((f"{function}({', '.join(values)})", want))
    return found


def _named_arguments(text: str, parameters: list[str]) -> list[str] | None:
    """Each parameter's literal in `text` (`x = 1, y = [2, 3]`; a lone literal for a lone parameter), in order."""
    if len(parameters) == 1 and _shortest_literal(text.strip()) == text.strip():
        return [text.strip()]
    values = []
    for name in parameters:
        # the name as written, or with a word before it (HumanEval/115's `bucket_capacity` for `capacity`)
        assigned = re.search(rf"(?<![\w.])(?:[A-Za-z]\w*_)?{re.escape(name)}[ \t]*[=:][ \t]*(?P<rest>.*)", text)
        value = _shortest_literal(assigned.group("rest")) if assigned else None
        if value is None:
            return None
        values.append(value)
    return values or None


def _shortest_literal(text: str) -> str | None:
    """The shortest beginning of `text` that ends at a comma (or at the end) and is a Python literal."""
    cuts = [i for i, c in enumerate(text) if c == ","] + [len(text)]
    for cut in cuts:
        candidate = text[:cut].strip()
        try:
            ast.literal_eval(candidate)
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            continue
        return candidate
    return None


def _arithmetic(text: str) -> float | None:
    """The value of a sum of numbers (`19 - 5 - 6`), None for anything else."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Add, ast.Sub, ast.Mult, ast.USub, ast.Constant)
    if not all(isinstance(n, allowed) for n in ast.walk(tree)):
        return None
    if not all(isinstance(n.value, int | float) for n in ast.walk(tree) if isinstance(n, ast.Constant)):
        return None
    return eval(compile(tree, "<sum>", "eval"), {"__builtins__": {}})  # numbers, + - * only: checked above


def _call(source: str, names: set[str], owner: str | None, placeholders: frozenset[str]) -> str | None:
    """`source` as a call of one of `names` (or of `owner`, for a name nobody defines) with literal arguments,
    a bare word (not a placeholder) taken as a string; None when it is not one."""
    try:
        call = ast.parse(source, mode="eval").body
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            return None
        renamed = call.func.id not in names
        if renamed and (owner is None or hasattr(builtins, call.func.id)):
            return None
        words = [a for a in call.args if isinstance(a, ast.Name) and a.id.isalpha() and a.id not in placeholders]
        call.args = [ast.Constant(a.id) if a in words else a for a in call.args]
        for argument in [*call.args, *(k.value for k in call.keywords)]:
            ast.literal_eval(argument)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None
    if not renamed and not words:
        return source  # as written
    if renamed and owner:
        call.func.id = owner
    return ast.unparse(call)


def _literal(text: str) -> str | None:
    """The expected value as Python source, or None when the text is not a literal (`n - 1`); a sum worked out
    before it (`19 - 5 - 6 = 8`, HumanEval/67) leaves the literal at its end, where the sum is right."""
    text = re.sub(r"\s+#.*$", "", text).strip().rstrip(".").strip()
    worked, _, result = text.rpartition("=")
    value = _arithmetic(worked) if worked else None
    if value is not None and value == _arithmetic(result):
        text = result.strip()
    for candidate in (text, re.sub(r"\b(true|false)\b", lambda m: m.group(1).capitalize(), text)):
        try:
            value, text = ast.literal_eval(candidate), candidate
            break
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            continue
    else:
        return None
    if text.startswith("(") and text.endswith(")") and not isinstance(value, tuple):
        return f"({text[1:-1]},)"  # prose's `("Venus")` is a tuple of one
    return text


def python_sources(workspace: Path) -> Iterator[tuple[str, str]]:
    """(path, text) of the project's Python files among the first MOST_SCANNED files, each at most MOST_BYTES:
    what a run looks at when it starts (here and in agent/strategies/given_code.py)."""
    for number, path in enumerate(iter_files(workspace, workspace)):
        if number >= MOST_SCANNED:
            return
        if path.suffix == ".py" and not path.is_symlink() and path.is_file() and path.stat().st_size <= MOST_BYTES:
            yield relative(workspace, path), path.read_text(errors="replace")


def collect(workspace: Path) -> list[ModuleExamples]:
    """The stubs' docstrings with examples in the project's Python files (the first MOST_FILES with some)."""
    found: list[ModuleExamples] = []
    for path, text in python_sources(workspace):
        if len(found) >= MOST_FILES:
            break
        if ">>>" in text or any(p.search(text) for p in EXAMPLE_FORMS):  # parse only what may have some
            module = _module_examples(path, text)
            if module.docstrings:
                found.append(module)
    return found


def _module_examples(path: str, source: str, stubs_only: bool = True) -> ModuleExamples:
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
        or prose_examples(d, known, owner, placeholders)
        or named_examples(d, owner, parameters.get(owner, []))
    ]
    return ModuleExamples(
        path=path,
        docstrings=[d for d, _ in with_examples],
        names=names,
        owners=[owner for _, owner in with_examples],
        parameters=parameters,
    )


def _docstring(function: ast.FunctionDef | ast.AsyncFunctionDef, source: str) -> str | None:
    """The function's docstring; as written (escapes such as `\\n` left as they are) where doctest cannot read
    the docstring Python makes of it: HumanEval/51's `remove_vowels("abcdef\\nghijklm")`, in a docstring that
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
    """The function's docstring statement: its first, or the first after imports (HumanEval/115 starts with
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
        now = _module_examples(module.path, source, stubs_only=False)
        if not set(module.examples()) <= set(now.examples()):
            edited.append(module.path)
    return edited
