"""Programs that run another command (`sudo`, `env`, `timeout`, `xargs`...): which command actually runs.

When a wrapper's option or the command it runs comes from an expansion, nobody can tell here what runs: the
result says so, and the analysis asks (fail closed).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from tools.approval.bash_syntax import Arg, Unknown

# name -> (options that take a value, operands before the command)
WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (
        frozenset(
            {
                "-u",
                "-g",
                "-C",
                "-h",
                "-p",
                "-r",
                "-t",
                "-U",
                "-D",
                "--user",
                "--group",
                "--chdir",
                "--host",
                "--prompt",
                "--role",
                "--type",
                "--other-user",
                "--close-from",
            }
        ),
        0,
    ),
    "doas": (frozenset({"-u", "-C"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "-n", "-p", "--class", "--classdata"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "xargs": (
        frozenset(
            {
                "-I",
                "-i",
                "-n",
                "-P",
                "-d",
                "-E",
                "-e",
                "-L",
                "-l",
                "-s",
                "-a",
                "--delimiter",
                "--max-args",
                "--max-procs",
                "--arg-file",
                "--max-lines",
                "--max-chars",
                "--eof",
                "--replace",
                "--process-slot-var",
            }
        ),
        0,
    ),
    "env": (frozenset({"-u", "-C", "--unset", "--chdir"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "nohup": (frozenset(), 0),
    "time": (frozenset({"-f", "-o", "--format", "--output"}), 0),
    "chronic": (frozenset(), 0),
    "setsid": (frozenset(), 0),
    "busybox": (frozenset(), 0),
    "unbuffer": (frozenset(), 0),
    "coproc": (frozenset(), 0),
    "taskset": (frozenset(), 1),
    "chrt": (frozenset(), 1),
    "flock": (frozenset({"-w", "-E", "--timeout", "--wait", "--conflict-exit-code"}), 1),
    "strace": (frozenset({"-o", "-e", "-p", "-s", "-u", "-E", "-P", "-I", "-b", "-a", "-X", "-O", "-S"}), 0),
    "ltrace": (frozenset({"-o", "-e", "-p", "-s", "-u", "-a", "-n", "-l"}), 0),
    "xvfb-run": (
        frozenset({"-n", "-s", "-f", "-e", "-p", "--server-num", "--server-args", "--auth-file", "--error-file"}),
        0,
    ),
    "firejail": (frozenset(), 0),
}
# two-word wrappers: `uv run CMD`, `poetry run CMD`...
RUNNERS: dict[tuple[str, str], frozenset[str]] = {
    ("uv", "run"): frozenset(
        {
            "--with",
            "--with-editable",
            "--with-requirements",
            "--python",
            "-p",
            "--project",
            "--directory",
            "--package",
            "--extra",
            "--group",
            "--env-file",
            "--index",
            "--index-url",
            "--extra-index-url",
            "--find-links",
            "-f",
        }
    ),
    ("poetry", "run"): frozenset({"-C", "--directory", "-P", "--project"}),
    ("pipenv", "run"): frozenset(),
    ("pdm", "run"): frozenset({"-p", "--project"}),
    ("hatch", "run"): frozenset(),
    ("conda", "run"): frozenset({"-n", "--name", "-p", "--prefix"}),
}
NAME_GLOB = re.compile(
    r"[*?]|\[.*\]"
)  # `/bin/r?`, `/???/rm`, `r[m]`: expanded by bash (a lone `[` is the test command)
RESERVED = {
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "case",
    "esac",
    "for",
    "select",
    "while",
    "until",
    "do",
    "done",
    "in",
    "function",
    "{",
    "}",
    "!",
    "[[",
    "]]",
    "(",
    ")",
    "((",
    "))",
}
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


@dataclass
class Unwrapped:
    words: list[Arg]  # the command that actually runs, or [] when none does (`sudo -v`, `env`)
    wrappers: list[str] = field(default_factory=list)
    problem: str | None = None  # why the command that runs cannot be known here


def program_name(word: Arg) -> str:
    return os.path.basename(word) if isinstance(word, str) else ""


def unwrap(words: list[Arg]) -> Unwrapped:
    """The command that actually runs, without `VAR=value`, `sudo`, `env`, `nice`, `timeout`, `xargs`, `uv run`..."""
    wrappers: list[str] = []
    for _ in range(64):
        if not wrappers or wrappers[-1] == "env":  # `VAR=value cmd`, `env VAR=value cmd`
            while words and isinstance(words[0], str) and ASSIGNMENT.match(words[0]):
                words = words[1:]
        elif words and isinstance(words[0], str) and ASSIGNMENT.match(words[0]):
            return Unwrapped(
                words, wrappers, f"`{wrappers[-1]}` runs a program named like an assignment (`{words[0]}`)"
            )
        if not words:
            return Unwrapped(words, wrappers)
        if isinstance(words[0], Unknown):
            what = f"the command run by `{wrappers[-1]}`" if wrappers else "the command name"
            return Unwrapped(
                words, wrappers, f"{what} comes from an expansion (`{words[0].text}`) that cannot be checked here"
            )
        if words[0] in RESERVED:  # bash reads these as syntax here; a parse that made them a command is wrong
            return Unwrapped(
                words,
                wrappers,
                f"has the reserved word `{words[0]}` where a command should be, which this check does not model",
            )
        if NAME_GLOB.search(words[0]):
            return Unwrapped(
                words, wrappers, f"the command name is a pattern (`{words[0]}`) that bash expands at run time"
            )
        name = program_name(words[0])
        runner = RUNNERS.get((name, words[1])) if len(words) > 1 and isinstance(words[1], str) else None
        if name not in WRAPPERS and runner is None:
            return Unwrapped(words, wrappers)
        if name == "flock" and any(w in ("-c", "--command") for w in words):
            return Unwrapped(words, wrappers)  # `flock FILE -c SCRIPT`: read as a shell's -c
        takes_value, operands = (runner, 0) if runner is not None else WRAPPERS[name]
        wrappers.append(f"{name} run" if runner is not None else name)
        index = 2 if runner is not None else 1
        while index < len(words):
            word = words[index]
            if isinstance(word, Unknown):
                return Unwrapped(
                    words[index:],
                    wrappers,
                    f"an option of `{name}` comes from an expansion (`{word.text}`) that cannot be checked here",
                )
            if word == "--":
                index += 1
                break
            if name == "env" and (word in ("-S", "--split-string") or word.startswith(("-S", "--split-string="))):
                return Unwrapped(words, wrappers)  # env -S STRING: the caller reads STRING as a script
            if not (word.startswith("-") and word != "-") and not (name == "env" and ASSIGNMENT.match(word)):
                break
            index += 2 if word in takes_value else 1
        index += operands
        words = words[index:]
    return Unwrapped(words, wrappers, "wraps commands too deeply to check")
