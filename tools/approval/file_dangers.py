"""What file operations would destroy: `rm`, `chmod`/`chown`, `mv`/`cp`/`ln` and the other writers, `rsync`
and `find`, judged by their targets (the home folder, the workspace root, `.git` internals...)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from tools.approval.calls import DELETERS, SOURCE, Call, Kind, Nested, is_interpreter
from tools.approval.options import long_option, option_value, options_and_operands, short_cluster
from tools.approval.paths import GLOB, delete_target_problem, git_internal, normal, write_target_problem
from tools.approval.wrappers import program_name, unwrap


def _recursive(options: list[str], letters: str) -> bool:
    return any(long_option(o, ("recursive",)) or short_cluster(o, letters) for o in options)


def rm_dangers(call: Call, args: list[str]) -> Iterable[tuple[Kind, str]]:
    options, operands = options_and_operands(args)
    # `rm *` before any `--`: a file named `-rf` makes the glob an option, so read it as recursive
    dash_glob = "--" not in args and any(GLOB.match(t) for t in operands)
    recursive = _recursive(options, "rR") or dash_glob
    for target in operands:
        problem = (
            delete_target_problem(target, call.cwd, call.workspace)
            if recursive
            else git_internal(target, call.cwd, call.workspace)
        )
        if problem:
            yield "destructive", f"deletes recursively: {problem}" if recursive else problem


def chmod_dangers(call: Call, args: list[str]) -> Iterable[tuple[Kind, str]]:
    options, operands = options_and_operands(args)
    no_mode = any(o.startswith("--ref") for o in options) or (
        call.program == "chmod" and any(re.fullmatch(r"-[rwxXst]+", o) for o in options)
    )
    recursive = _recursive(options, "R")
    for target in operands if no_mode else operands[1:]:
        problem = delete_target_problem(target, call.cwd, call.workspace) if recursive else None
        if problem:
            yield "destructive", f"changes owners or permissions recursively: {problem}"
        elif normal(target, call.cwd) == Path("/"):
            yield "destructive", "changes owners or permissions of the filesystem root"
        elif problem := git_internal(target, call.cwd, call.workspace):
            yield "destructive", problem


def moves_and_copies_dangers(call: Call, args: list[str]) -> Iterable[tuple[Kind, str]]:
    """Writes into .git internals, and `mv` moving away what may not be deleted."""
    options, operands = options_and_operands(
        args,
        takes_value={"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"},
    )
    moves = call.program in ("mv", "cp", "ln", "install")
    explicit = option_value(options, "-t", ("target-directory",)) if moves else []
    if moves:
        targets, sources = (explicit, operands) if explicit else (operands[-1:], operands[:-1])
    else:  # unlink, shred, truncate, touch, rmdir, mkdir, tee: every operand is written
        targets, sources = operands, []
    changed = targets + (sources if call.program == "mv" else [])
    problem = next(filter(None, (git_internal(t, call.cwd, call.workspace) for t in changed)), None)
    if problem:
        yield "destructive", problem
    elif call.program == "mv":
        for source in sources:
            if problem := delete_target_problem(source, call.cwd, call.workspace, allow_git=True):
                yield "destructive", f"moves away {problem}"
                return


def rsync_dangers(call: Call, args: list[str]) -> Iterable[tuple[Kind, str]]:
    options, operands = options_and_operands(args)
    if len(operands) < 2:
        return
    *sources, dest = operands
    if any(
        long_option(
            o, ("delete", "delete-before", "delete-during", "delete-after", "delete-delay", "delete-excluded", "del")
        )
        for o in options
    ):
        if re.match(r"[^/]*:", dest):
            yield "destructive", f"deletes files on another machine (`{dest}`)"
        elif problem := delete_target_problem(dest, call.cwd, call.workspace):
            yield "destructive", f"deletes what the source lacks in {problem}"
    if any(long_option(o, ("remove-source-files",)) for o in options):
        for source in sources:
            if problem := delete_target_problem(source, call.cwd, call.workspace, allow_git=True):
                yield "destructive", f"removes the sent files of {problem}"
    if problem := git_internal(dest, call.cwd, call.workspace):
        yield "destructive", problem


def find_dangers(call: Call, args: list[str], nested: Nested) -> Iterable[tuple[Kind, str]]:
    index = 0
    while (index < len(args) and args[index] in ("-H", "-L", "-P")) or (
        index < len(args) and args[index].startswith("-D")
    ):
        index += 1
    starts: list[str] = []
    while index < len(args) and not args[index].startswith(("-", "(", "!")):
        starts.append(args[index])
        index += 1
    expression = args[index:]
    deletes = "-delete" in expression
    for position, word in enumerate(expression):
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next(
                (i for i in range(position + 1, len(expression)) if expression[i] in (";", "+")), len(expression)
            )
            executed = expression[position + 1 : end]
            if executed:
                runs = unwrap(list(executed))
                program = program_name(runs.words[0]) if runs.words else ""
                deletes = (
                    deletes
                    or bool(runs.problem)
                    or program in DELETERS
                    or program == "git"
                    or is_interpreter(program)
                    or program in SOURCE
                    or program in ("eval", "xargs", "dd", "find")
                )
                nested(" ".join(_quote(w) for w in executed))
        elif (
            word in ("-fprint", "-fprint0", "-fprintf", "-fls")
            and position + 1 < len(expression)
            and (problem := write_target_problem(expression[position + 1], call.cwd, call.workspace))
        ):
            yield "destructive", problem
    if deletes:
        # the workspace itself may be the start only when a name test picks what goes (`find . -name '*.pyc'
        # -delete`); `find . -delete` or `-o -delete` takes everything
        filters = [expression[i + 1] for i, w in enumerate(expression[:-1]) if w in NAME_TESTS]
        picked = any(not _broad_pattern(f) for f in filters) and not any(w in ("-o", "-or", ",") for w in expression)
        for start in starts or ["."]:
            problem = delete_target_problem(start, call.cwd, call.workspace, allow_root=picked)
            if problem:
                yield "destructive", f"deletes or runs commands on files found under {problem}"


NAME_TESTS = {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname"}


def _broad_pattern(pattern: str) -> bool:
    return pattern.strip("*?./") == "" or pattern in (".*", "*.*")


def _quote(word: str) -> str:
    return word if re.fullmatch(r"[\w@%+=:,./{}-]+", word) else "'" + word.replace("'", "'\\''") + "'"
