"""Programs that run code: shells (`bash -c`, a script on stdin), interpreters (`python -c`, `perl -e`, code on
stdin) and the script languages of awk and sed. Code whose text is known is checked (nested scripts are walked
again, inline Python is read with `ast`); code built at run time is "unchecked"."""

from __future__ import annotations

import re
from collections.abc import Iterable

from tools.approval.bash_syntax import Unknown
from tools.approval.calls import PYTHONS, SHELLS, Call, Kind, Nested
from tools.approval.code_check import inline_code_problem
from tools.approval.options import option_value, options_and_operands

AWKS = {"awk", "gawk", "mawk", "nawk", "busybox awk"}
AWK_RUNS = re.compile(r"\bsystem\b|\|\s*&?\s*getline|\b(print|printf)\b[^;}]*\|")
SED_RUNS = re.compile(r"(^|[;\n{}0-9/$!,]\s*)e(\s|;|$)|s(.)(?:(?!\3).|\\\3)*\3(?:(?!\3).|\\\3)*\3[gpiImM0-9]*e")


def script_language_dangers(program: str, args: list[str]) -> Iterable[tuple[Kind, str]]:
    """awk's `system()` and pipes, sed's `e` command run shell commands; the program text is checked for them."""
    options, operands = options_and_operands(args, takes_value={"-e", "--expression", "-f", "--file", "-v", "-F"})
    scripts = option_value(options, "-e", ("expression",))
    if any(option_value(options, "-f", ("file",))):
        yield "unchecked", f"runs a {program} script from a file, which cannot be checked here"
        return
    if not scripts and operands:
        scripts = operands[:1]
    pattern = AWK_RUNS if program in AWKS else SED_RUNS
    for script in scripts:
        if match := pattern.search(script):
            yield "unchecked", f"{program} code that runs commands (`{match.group(0).strip()}`): not checked here"
            return


def shell_dangers(call: Call, nested: Nested) -> Iterable[tuple[Kind, str]]:
    """`bash -c SCRIPT` and `sh <<< SCRIPT` are read as scripts; code whose text is not known here is asked about."""
    args = call.args
    shell = call.program in SHELLS
    for index, arg in enumerate(args):
        if isinstance(arg, Unknown):
            yield (
                "unchecked",
                f"`{call.program}` gets an option or script from an expansion (`{arg.text}`) that cannot be checked here",
            )
            return
        if arg in ("-c", "--command") or (shell and re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", arg)):
            rest = args[index + 1 :]
            script = next((a for a in rest if not (shell and isinstance(a, str) and a.startswith("-"))), None)
            if isinstance(script, Unknown):
                yield "unchecked", f"runs a script built at run time (`{script.text}`), which cannot be checked here"
            elif script is not None:
                nested(script)
            return
        if not shell:
            continue  # su USER, flock FILE, script FILE: only -c runs code
        if arg == "-s" or arg == "-":
            break
        if arg == "--" or not arg.startswith(("-", "+")):
            if arg != "--":
                return  # a script file: the sandbox's business, like `python x.py`
            break
    if shell:
        yield from _stdin_code(call, nested)


def interpreter_dangers(call: Call) -> Iterable[tuple[Kind, str]]:
    """Python, Perl, Ruby, Node...: inline code (`-c`, `-e`) and code on stdin are checked, script files are not."""
    args = call.args
    index = 0
    while index < len(args):
        arg = args[index]
        if isinstance(arg, Unknown):
            yield (
                "unchecked",
                f"`{call.program}` gets an option, script or code from an expansion (`{arg.text}`) that cannot be checked here",
            )
            return
        if arg == "-" or arg == "--":
            break
        if not arg.startswith("-"):
            return  # a script file: the sandbox's business
        found = _code_option(call.program, arg)
        if found == "module":
            return
        if found is not None:
            code = found if found else (args[index + 1] if index + 1 < len(args) else "")
            if isinstance(code, Unknown):
                yield "unchecked", f"runs code built at run time (`{code.text}`), which cannot be checked here"
            elif problem := inline_code_problem(call.program, code):
                yield "unchecked", problem
            return
        index += 2 if _takes_value(call.program, arg) else 1
    yield from _stdin_code(call, None)


PYTHON_VALUED = "cmWX"  # python's short options that take a value (attached or next)
CODE_OPTIONS = {"-e", "-E", "-r", "--eval", "-p", "--print"}


def _code_option(program: str, arg: str) -> str | None:
    """For one option of an interpreter: the inline code it carries ("" when the code is the next word),
    "module" for `python -m`, or None when it carries no code."""
    if PYTHONS.fullmatch(program):
        if arg.startswith("--"):
            return None
        for position, letter in enumerate(arg[1:], 2):  # a cluster such as `-Ic CODE` or `-Wignore`
            if letter in PYTHON_VALUED:
                if letter == "c":
                    return arg[position:]
                return "module" if letter == "m" else None
        return None
    if arg in CODE_OPTIONS or (re.fullmatch(r"-[a-zA-Z0-9]*[eEr]", arg) and not arg.startswith("--")):
        return ""  # `perl -ne CODE`, `node -e CODE`, `php -r CODE`
    return None


def _takes_value(program: str, arg: str) -> bool:
    if PYTHONS.fullmatch(program):
        letters = arg[1:] if not arg.startswith("--") else ""
        valued = next((i for i, letter in enumerate(letters) if letter in PYTHON_VALUED), None)
        return (valued is not None and valued == len(letters) - 1) or arg == "--check-hash-based-pycs"
    return arg in ("-I", "-M", "-r", "-C", "--require", "-x")


def _stdin_code(call: Call, nested: Nested | None) -> Iterable[tuple[Kind, str]]:
    """A shell or interpreter that reads its program from standard input."""
    stdin = call.stdin
    if stdin == "download":
        yield "destructive", "runs a script downloaded from the network"
    elif stdin == "pipe":
        yield "unchecked", "runs code read from another command's output, which cannot be checked here"
    elif isinstance(stdin, Unknown):
        yield "unchecked", f"runs code built at run time (`{stdin.text}`), which cannot be checked here"
    elif stdin not in ("file", "inherited"):
        if nested is not None:
            nested(stdin)
        elif problem := inline_code_problem(call.program, stdin):
            yield "unchecked", problem
