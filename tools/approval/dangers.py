"""Danger knowledge: what one simple command would do that needs a person, program by program.

`command_dangers` gets the command after wrappers, its words static or `Unknown`. The rule throughout: when
a program's name, a destructive option or a target is not known here, the answer is "unchecked" (ask), never
"harmless". Long options are matched the way GNU getopt and git match them, by any unique prefix
(`rm --recu`, `git push --mirro`), and an ambiguous prefix counts as every option it could be.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tools.approval.bash_syntax import Arg, Unknown
from tools.approval.calls import DELETERS, SHELLS, SOURCE, WRITERS, Call, Kind, Nested, is_interpreter
from tools.approval.file_dangers import (
    chmod_dangers,
    find_dangers,
    moves_and_copies_dangers,
    rm_dangers,
    rsync_dangers,
)
from tools.approval.git_config import HARMLESS_COMMANDS
from tools.approval.git_dangers import git_dangers
from tools.approval.interpreters import AWKS, interpreter_dangers, script_language_dangers, shell_dangers
from tools.approval.options import long_option, options_and_operands
from tools.approval.paths import git_internal, write_target_problem

DOWNLOADERS = {"curl", "wget", "fetch", "aria2c"}
DISK_TOOLS = {"mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "sgdisk", "gdisk", "blkdiscard"}
POWER = {"shutdown", "reboot", "halt", "poweroff"}
# programs whose every argument matters: any argument built at run time means nobody can say what they do
ARGUMENTS_MATTER = DELETERS | WRITERS | {"dd", "find", "eval", "trap", "alias", "watch"}


# variables whose value a program runs as a command, and a few values that are plainly harmless
COMMAND_VARIABLES = {
    "PAGER",
    "GIT_PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "EDITOR",
    "VISUAL",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "GIT_PROXY_COMMAND",
    "BROWSER",
    "PROMPT_COMMAND",
}
# variables that make programs load code or configuration from elsewhere
CODE_VARIABLES = re.compile(
    r"PATH|LD_PRELOAD|LD_AUDIT|BASH_ENV|ENV|IFS|GIT_CONFIG\w*|GIT_EXEC_PATH|GIT_TEMPLATE_DIR|"
    r"PERL5OPT|RUBYOPT|NODE_OPTIONS|GIT_DIR|GIT_WORK_TREE|GIT_CEILING_DIRECTORIES"
)


def assignment_dangers(name: str, value: Arg, nested: Nested) -> Iterable[tuple[Kind, str]]:
    """`PAGER='rm -rf ~' git log`: a variable some program runs as a command is read as a script."""
    if name in COMMAND_VARIABLES:
        if isinstance(value, Unknown):
            yield "unchecked", f"sets `{name}`, a command other programs run, from an expansion (`{value.text}`)"
        elif value.strip() not in HARMLESS_COMMANDS:
            nested(value)
    elif CODE_VARIABLES.fullmatch(name):
        yield "unchecked", f"sets `{name}`, which makes programs load code or settings from elsewhere"


def command_dangers(call: Call, nested: Nested) -> Iterable[tuple[Kind, str]]:
    program, args = call.program, call.args
    unknown = next((a for a in args if isinstance(a, Unknown)), None)
    if "xargs" in call.wrappers and (program in ARGUMENTS_MATTER or is_interpreter(program) or program == "git"):
        yield "unchecked", f"runs `{program}` on arguments read from its input, which cannot be checked here"
        return
    if unknown is not None and program in ARGUMENTS_MATTER:
        yield (
            "unchecked",
            f"`{program}` gets an argument from an expansion (`{unknown.text}`) that cannot be checked here",
        )
        return
    static = [a for a in args if isinstance(a, str)]
    if program == "rm":
        yield from rm_dangers(call, static)
    elif program == "find":
        yield from find_dangers(call, static, nested)
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
        yield from chmod_dangers(call, static)
    elif program in POWER or (program == "init" and static[:1] in (["0"], ["6"])):
        yield "destructive", "shuts down or reboots the machine"
    elif program in ("kill", "pkill"):
        if static and static[-1] == "-1":
            yield "destructive", "kills every process you own"
        elif unknown is not None and unknown.text not in ("$!", "$$", '"$!"'):
            yield (
                "unchecked",
                f"`{program}` gets a process from an expansion (`{unknown.text}`) that could be -1 (every process)",
            )
    elif program in ("mv", "unlink", "shred", "truncate", "touch", "rmdir", "mkdir", "cp", "ln", "install", "tee"):
        yield from moves_and_copies_dangers(call, static)
    elif program == "rsync":
        yield from rsync_dangers(call, static)
    elif program in ("sed", "perl") and any(
        a.startswith(("-i", "--in-place")) or (program == "perl" and re.fullmatch(r"-\w*i\w*", a)) for a in static
    ):
        problem = next(
            filter(None, (git_internal(t, call.cwd, call.workspace) for t in static if not t.startswith("-"))), None
        )
        if problem:
            yield "destructive", problem
    if (names := RUNS_PROGRAMS.get(program)) and (
        option := next((o for o in static if _runs_program(o, *names)), None)
    ):
        yield "unchecked", f"runs a program given in `{option}`, which cannot be checked here"
    elif program in AWKS or program == "sed":
        yield from script_language_dangers(program, static)
    if program in SHELLS or program in SOURCE or program in ("su", "runuser", "script", "flock"):
        yield from shell_dangers(call, nested)
    elif is_interpreter(program):
        yield from interpreter_dangers(call)
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
        _, operands = options_and_operands(
            static, takes_value={"-n", "--interval", "-d", "--differences", "-q", "--equexit"}
        )
        nested(" ".join(operands))
    elif program == "env":
        split = next((i for i, a in enumerate(static) if a in ("-S", "--split-string")), None)
        if split is not None and split + 1 < len(static):
            nested(static[split + 1])
        elif attached := next((a for a in static if a.startswith("-S") and len(a) > 2), None):
            nested(attached[2:])


# options that make an ordinary tool run a program: (long option names, short options)
RUNS_PROGRAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "tar": (
        ("to-command", "checkpoint-action", "use-compress-program", "info-script", "new-volume-script", "rsh-command"),
        ("-I", "-F"),
    ),
    "rsync": (("rsh", "rsync-path"), ("-e",)),
    "zip": (("unzip-command",), ("-TT",)),
    "ssh": (("ProxyCommand", "LocalCommand"), ("-oProxyCommand", "-oLocalCommand")),
    "scp": (("ProxyCommand",), ("-S", "-oProxyCommand")),
    "vim": (("cmd",), ("-c", "+")),
    "vi": (("cmd",), ("-c", "+")),
    "nvim": (("cmd",), ("-c", "+")),
    "emacs": (("eval", "execute"), ()),
}


def _runs_program(option: str, names: tuple[str, ...], shorts: tuple[str, ...]) -> bool:
    return long_option(option, names) or option.startswith(shorts) or any(n in option for n in names if n[0].isupper())
