"""What one simple command is, as the danger checks see it: the program after wrappers, its words (static or
`Unknown`), where it runs and what feeds its input; and the families of programs the checks talk about."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from tools.approval.bash_syntax import Arg

Kind = Literal["destructive", "unchecked"]


class Danger(BaseModel):
    command: str  # the simple command that is dangerous, as written
    reason: str  # what it would do, or why it cannot be checked
    kind: Kind = "destructive"  # "unchecked": built at run time or not modelled here, so a person must look


SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "csh", "tcsh", "fish", "busybox"}
SOURCE = {"source", "."}
PYTHONS = re.compile(r"python(\d+(\.\d+)?)?|pypy3?")
OTHER_INTERPRETERS = {"perl", "ruby", "node", "nodejs", "php", "deno", "bun", "lua", "Rscript", "tclsh", "osascript"}
DELETERS = {"rm", "shred", "unlink", "rmdir", "mv", "chmod", "chown", "chgrp", "truncate"}
WRITERS = {"cp", "ln", "install", "rsync", "tee"}


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


def is_interpreter(program: str) -> bool:
    return program in SHELLS or program in OTHER_INTERPRETERS or bool(PYTHONS.fullmatch(program))
