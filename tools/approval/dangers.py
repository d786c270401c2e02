"""Danger knowledge: what one simple command would do that needs a person, program by program.

`command_dangers` gets the command after wrappers, its words static or `Unknown`. The rule throughout: when
a program's name, a destructive option or a target is not known here, the answer is "unchecked" (ask), never
"harmless". Long options are matched the way GNU getopt and git match them, by any unique prefix
(`rm --recu`, `git push --mirro`), and an ambiguous prefix counts as every option it could be.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from tools.approval.bash_syntax import Arg, Unknown
from tools.approval.code_check import inline_code_problem
from tools.approval.git_dangers import HARMLESS_COMMANDS, git_dangers
from tools.approval.options import (
    long_option,
    option_value,
    options_and_operands,
    short_cluster,
)
from tools.approval.paths import (
    GLOB,
    delete_target_problem,
    git_internal,
    normal,
    write_target_problem,
)
from tools.approval.wrappers import program_name, unwrap

Kind = Literal["destructive", "unchecked"]


class Danger(BaseModel):
    command: str  # the simple command that is dangerous, as written
    reason: str  # what it would do, or why it cannot be checked
    kind: Kind = "destructive"  # "unchecked": built at run time or not modelled here, so a person must look


DOWNLOADERS = {"curl", "wget", "fetch", "aria2c"}
SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "csh", "tcsh", "fish", "busybox"}
SOURCE = {"source", "."}
PYTHONS = re.compile(r"python(\d+(\.\d+)?)?|pypy3?")
OTHER_INTERPRETERS = {"perl", "ruby", "node", "nodejs", "php", "deno", "bun", "lua", "Rscript", "tclsh", "osascript"}
DISK_TOOLS = {"mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "sgdisk", "gdisk", "blkdiscard"}
POWER = {"shutdown", "reboot", "halt", "poweroff"}
DELETERS = {"rm", "shred", "unlink", "rmdir", "mv", "chmod", "chown", "chgrp", "truncate"}
WRITERS = {"cp", "ln", "install", "rsync", "tee"}
# programs whose every argument matters: any argument built at run time means nobody can say what they do
ARGUMENTS_MATTER = DELETERS | WRITERS | {"dd", "find", "eval", "trap", "alias", "watch"}


@dataclass
class Call:
    """One simple command, after wrappers (`sudo`, `env`, `xargs`...)."""

    program: str
    args: list[Arg]
    wrappers: list[str]
    cwd: Path | None  # None: not known here (after a `cd` that may fail or goes to a variable)
    workspace: Path
    stdin: Arg | Literal["pipe", "download", "file", "inherited"]  # a static string: a heredoc or herestring


Nested = Callable[[str], None]  # analyse a script that this command runs (bash -c SCRIPT, eval, find -exec...)


# variables whose value a program runs as a command, and a few values that are plainly harmless
COMMAND_VARIABLES = {"PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR",
                     "GIT_SEQUENCE_EDITOR", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS",
                     "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_PROXY_COMMAND", "BROWSER", "PROMPT_COMMAND"}
# variables that make programs load code or configuration from elsewhere
CODE_VARIABLES = re.compile(r"PATH|LD_PRELOAD|LD_AUDIT|BASH_ENV|ENV|IFS|GIT_CONFIG\w*|GIT_EXEC_PATH|GIT_TEMPLATE_DIR|"
                            r"PERL5OPT|RUBYOPT|NODE_OPTIONS|GIT_DIR|GIT_WORK_TREE|GIT_CEILING_DIRECTORIES")


def assignment_dangers(name: str, value: Arg, nested: Nested) -> Iterable[tuple[Kind, str]]:
    """`PAGER='rm -rf ~' git log`: a variable some program runs as a command is read as a script."""
    if name in COMMAND_VARIABLES:
        if isinstance(value, Unknown):
            yield "unchecked", f"sets `{name}`, a command other programs run, from an expansion (`{value.text}`)"
        elif value.strip() not in HARMLESS_COMMANDS:
            nested(value)
    elif CODE_VARIABLES.fullmatch(name):
        yield "unchecked", f"sets `{name}`, which makes programs load code or settings from elsewhere"


def is_interpreter(program: str) -> bool:
    return program in SHELLS or program in OTHER_INTERPRETERS or bool(PYTHONS.fullmatch(program))


def command_dangers(call: Call, nested: Nested) -> Iterable[tuple[Kind, str]]:
    program, args = call.program, call.args
    unknown = next((a for a in args if isinstance(a, Unknown)), None)
    if "xargs" in call.wrappers and (program in ARGUMENTS_MATTER or is_interpreter(program) or program == "git"):
        yield "unchecked", f"runs `{program}` on arguments read from its input, which cannot be checked here"
        return
    if unknown is not None and program in ARGUMENTS_MATTER:
        yield "unchecked", f"`{program}` gets an argument from an expansion (`{unknown.text}`) that cannot be checked here"
        return
    static = [a for a in args if isinstance(a, str)]
    if program == "rm":
        yield from _rm(call, static)
    elif program == "find":
        yield from _find(call, static, nested)
    elif program == "git":
        yield from git_dangers(args, call.cwd, call.workspace, nested)
    elif program.startswith("mkfs") or program in DISK_TOOLS:
        yield "destructive", "formats or repartitions a disk"
    elif program == "dd":
        for arg in static:
            problem = write_target_problem(arg[3:], call.cwd, call.workspace) if arg.startswith("of=") else None
            if problem:
                yield "destructive", problem
    elif program in ("chmod", "chown", "chgrp"):
        yield from _chmod(call, static)
    elif program in POWER or (program == "init" and static[:1] in (["0"], ["6"])):
        yield "destructive", "shuts down or reboots the machine"
    elif program in ("kill", "pkill"):
        if static and static[-1] == "-1":
            yield "destructive", "kills every process you own"
        elif unknown is not None and unknown.text not in ("$!", "$$", '"$!"'):
            yield "unchecked", f"`{program}` gets a process from an expansion (`{unknown.text}`) that could be -1 (every process)"
    elif program in ("mv", "unlink", "shred", "truncate", "touch", "rmdir", "mkdir", "cp", "ln", "install", "tee"):
        yield from _moves_and_copies(call, static)
    elif program == "rsync":
        yield from _rsync(call, static)
    elif program in ("sed", "perl") and any(a.startswith(("-i", "--in-place")) or (program == "perl" and re.fullmatch(r"-\w*i\w*", a)) for a in static):
        problem = next(filter(None, (git_internal(t, call.cwd, call.workspace) for t in static if not t.startswith("-"))), None)
        if problem:
            yield "destructive", problem
    if (names := RUNS_PROGRAMS.get(program)) and (option := next((o for o in static if _runs_program(o, *names)), None)):
        yield "unchecked", f"runs a program given in `{option}`, which cannot be checked here"
    elif program in AWKS or program == "sed":
        yield from _script_language(program, static)
    if program in SHELLS or program in SOURCE or program in ("su", "runuser", "script", "flock"):
        yield from _shell(call, nested)
    elif is_interpreter(program):
        yield from _interpreter(call)
    elif (program == "hash" and any(a.startswith("-") and "p" in a for a in static)) or program == "enable":
        yield "unchecked", f"`{program}` changes which program a command name runs"
    elif program == "eval":
        nested(" ".join(static))
    elif program == "trap" and len(args) >= 2 and static[:1] and not static[0].startswith("-"):
        nested(static[0])
    elif program == "alias":
        for definition in static:
            if "=" in definition:
                nested(definition.split("=", 1)[1])
    elif program == "watch":
        _, operands = options_and_operands(static, takes_value={"-n", "--interval", "-d", "--differences", "-q", "--equexit"})
        nested(" ".join(operands))
    elif program == "env":
        split = next((i for i, a in enumerate(static) if a in ("-S", "--split-string")), None)
        if split is not None and split + 1 < len(static):
            nested(static[split + 1])
        elif attached := next((a for a in static if a.startswith("-S") and len(a) > 2), None):
            nested(attached[2:])


# options that make an ordinary tool run a program: (long option names, short options)
RUNS_PROGRAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "tar": (("to-command", "checkpoint-action", "use-compress-program", "info-script", "new-volume-script",
             "rsh-command"), ("-I", "-F")),
    "rsync": (("rsh", "rsync-path"), ("-e",)),
    "zip": (("unzip-command",), ("-TT",)),
    "ssh": (("ProxyCommand", "LocalCommand"), ("-oProxyCommand", "-oLocalCommand")),
    "scp": (("ProxyCommand",), ("-S", "-oProxyCommand")),
    "vim": (("cmd",), ("-c", "+")), "vi": (("cmd",), ("-c", "+")), "nvim": (("cmd",), ("-c", "+")),
    "emacs": (("eval", "execute"), ()),
}
AWKS = {"awk", "gawk", "mawk", "nawk", "busybox awk"}
AWK_RUNS = re.compile(r"\bsystem\b|\|\s*&?\s*getline|\b(print|printf)\b[^;}]*\|")
SED_RUNS = re.compile(r"(^|[;\n{}0-9/$!,]\s*)e(\s|;|$)|s(.)(?:(?!\3).|\\\3)*\3(?:(?!\3).|\\\3)*\3[gpiImM0-9]*e")


def _runs_program(option: str, names: tuple[str, ...], shorts: tuple[str, ...]) -> bool:
    return long_option(option, names) or option.startswith(shorts) or any(n in option for n in names if n[0].isupper())


def _script_language(program: str, args: list[str]) -> Iterable[tuple[Kind, str]]:
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


def _recursive(options: list[str], letters: str) -> bool:
    return any(long_option(o, ("recursive",)) or short_cluster(o, letters) for o in options)


def _rm(call: Call, args: list[str]) -> Iterable[tuple[Kind, str]]:
    options, operands = options_and_operands(args)
    # `rm *` before any `--`: a file named `-rf` makes the glob an option, so read it as recursive
    dash_glob = "--" not in args and any(GLOB.match(t) for t in operands)
    recursive = _recursive(options, "rR") or dash_glob
    for target in operands:
        problem = delete_target_problem(target, call.cwd, call.workspace) if recursive else git_internal(target, call.cwd, call.workspace)
        if problem:
            yield "destructive", f"deletes recursively: {problem}" if recursive else problem


def _chmod(call: Call, args: list[str]) -> Iterable[tuple[Kind, str]]:
    options, operands = options_and_operands(args)
    no_mode = any(o.startswith("--ref") for o in options) or (call.program == "chmod" and any(re.fullmatch(r"-[rwxXst]+", o) for o in options))
    recursive = _recursive(options, "R")
    for target in operands if no_mode else operands[1:]:
        problem = delete_target_problem(target, call.cwd, call.workspace) if recursive else None
        if problem:
            yield "destructive", f"changes owners or permissions recursively: {problem}"
        elif normal(target, call.cwd) == Path("/"):
            yield "destructive", "changes owners or permissions of the filesystem root"
        elif problem := git_internal(target, call.cwd, call.workspace):
            yield "destructive", problem


def _moves_and_copies(call: Call, args: list[str]) -> Iterable[tuple[Kind, str]]:
    """Writes into .git internals, and `mv` moving away what may not be deleted."""
    options, operands = options_and_operands(args, takes_value={"-t", "--target-directory", "-S", "--suffix",
                                                                "-m", "--mode", "-o", "--owner", "-g", "--group"})
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


def _rsync(call: Call, args: list[str]) -> Iterable[tuple[Kind, str]]:
    options, operands = options_and_operands(args)
    if len(operands) < 2:
        return
    *sources, dest = operands
    if any(long_option(o, ("delete", "delete-before", "delete-during", "delete-after", "delete-delay",
                              "delete-excluded", "del")) for o in options):
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


def _find(call: Call, args: list[str], nested: Nested) -> Iterable[tuple[Kind, str]]:
    index = 0
    while (index < len(args) and args[index] in ("-H", "-L", "-P")) or (index < len(args) and args[index].startswith("-D")):
        index += 1
    starts: list[str] = []
    while index < len(args) and not args[index].startswith(("-", "(", "!")):
        starts.append(args[index])
        index += 1
    expression = args[index:]
    deletes = "-delete" in expression
    for position, word in enumerate(expression):
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((i for i in range(position + 1, len(expression)) if expression[i] in (";", "+")), len(expression))
            executed = expression[position + 1 : end]
            if executed:
                runs = unwrap(list(executed))
                program = program_name(runs.words[0]) if runs.words else ""
                deletes = deletes or bool(runs.problem) or program in DELETERS or program == "git" or is_interpreter(program) \
                    or program in SOURCE or program in ("eval", "xargs", "dd", "find")
                nested(" ".join(_quote(w) for w in executed))
        elif word in ("-fprint", "-fprint0", "-fprintf", "-fls") and position + 1 < len(expression) and \
                (problem := write_target_problem(expression[position + 1], call.cwd, call.workspace)):
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


def _shell(call: Call, nested: Nested) -> Iterable[tuple[Kind, str]]:
    """`bash -c SCRIPT` and `sh <<< SCRIPT` are read as scripts; code whose text is not known here is asked about."""
    args = call.args
    shell = call.program in SHELLS
    for index, arg in enumerate(args):
        if isinstance(arg, Unknown):
            yield "unchecked", f"`{call.program}` gets an option or script from an expansion (`{arg.text}`) that cannot be checked here"
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


def _interpreter(call: Call) -> Iterable[tuple[Kind, str]]:
    """Python, Perl, Ruby, Node...: inline code (`-c`, `-e`) and code on stdin are checked, script files are not."""
    args = call.args
    index = 0
    while index < len(args):
        arg = args[index]
        if isinstance(arg, Unknown):
            yield "unchecked", f"`{call.program}` gets an option, script or code from an expansion (`{arg.text}`) that cannot be checked here"
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
