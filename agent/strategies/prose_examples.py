"""Docstring examples written in prose, for the `humaneval` preset (agent/settings/config.py `PRESETS`): calls with their
values (`f(1, 4) => true`, `f([1, 2]) == 3`, `f('hi') returns 'lm'`; also under another name, with bare words or
after a worked sum) and arguments given by name (`For lst = [1, 2] the output should be 3`, `Input: arr = [1], k =
1` then `Output: [1]`, `arr = [1]` then `return [1]`).

Why a preset and not the default: these are the wordings of one benchmark's problem statements (more than half
of HumanEval's problems give their examples so), each form added for the problems that use it. In an ordinary
repository a docstring line such as `x = 1` or `size(a) == 3` is as likely prose as an example, and a misread
example refuses right code; there, examples are doctest's `>>>` form (agent/strategies/examples.py)."""

from __future__ import annotations

import ast
import builtins
import re

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
# ... and `arr = [2, 1]`, maybe `-> sort arr -> [1, 2]` lines, then `return [1, 2]`
ASSIGN_RETURN_EXAMPLE = re.compile(
    r"^[ \t]*(?P<arguments>[A-Za-z_]\w*[ \t]*=[ \t]*\S.*?)[ \t]*\n(?:[ \t]*->.*\n)*"
    r"[ \t]*return[ \t]*=?[ \t]*(?P<want>\S.*?)[ \t]*$",
    re.M,
)

NAMED_FORMS = (NAMED_EXAMPLE, INPUT_OUTPUT_EXAMPLE, ASSIGN_RETURN_EXAMPLE)
PROSE_FORMS = (PROSE_EXAMPLE, *NAMED_FORMS)


def prose_examples(
    docstring: str, names: set[str], owner: str | None = None, placeholders: frozenset[str] = frozenset()
) -> list[tuple[str, str]]:
    """The prose examples in `docstring`: (call, expected value) as Python source, where the call is to one of
    `names` with literal arguments and the value reads as a literal (`true` is True, a final `.` dropped,
    `("Venus")` a one-tuple); lines that do not read so are prose. A docstring that also writes a formula with
    `=` (`tri(n) = 1 + n / 2`) uses `=` for mathematics: none of its `=` lines is an example.
    A call of a name the module does not define (nor Python) calls the docstring's `owner`: the docstring
    was written for another name (`list_sort` for `sorted_list_sum`); a bare word in a call is
    a string (`is_happy(abcd) => True`) unless it is one of the `placeholders` (the parameters'
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
        # the name as written, or with a word before it (`bucket_capacity` for `capacity`)
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
    before it (`19 - 5 - 6 = 8`) leaves the literal at its end, where the sum is right."""
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
