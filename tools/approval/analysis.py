"""Command analysis: every simple command in a bash command line, and what in it needs a person.

The command is parsed with tree-sitter-bash and walked: lists, pipelines, subshells, compound commands,
functions, redirections, heredocs and herestrings, `$(...)`/`<(...)` anywhere (assignments, redirect targets,
heredoc bodies), and the scripts commands run (`bash -c`, `eval`, `find -exec`, `trap`, `alias`, `git rebase
-x`). `cd` is followed, linearly: a `cd` that may fail (its folder does not exist yet) leaves the folder
unknown for what follows unless `&&` guards it.

Fail closed: a syntax error, a construct not modelled here, a command name or wrapped command from an
expansion, nesting past walker.MAX_DEPTH, more than walker.MAX_PARTS statements and words, input past MAX_COMMAND_CHARS or analysis
past TIME_BUDGET_S all give an "unchecked" danger, which needs a person like a destructive one.

Here: the bounds on the input and the result; the walk is walker.py's, redirections redirects.py's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tools.approval.calls import Danger
from tools.approval.folders import State
from tools.approval.walker import Stop, Walker

MAX_COMMAND_CHARS = 200_000
TIME_BUDGET_S = 5.0  # the check runs before the command's own timeout starts: it must end on its own

FORK_BOMB = re.compile(r"(?<![\w:.-])([\w:.-]{1,40})\s*\(\s*\)\s*\{[^}]{0,200}?\1\s*\|\s*\1")


@dataclass
class Analysis:
    commands: list[list[str]]  # every simple command's words (nested ones too), as written where not static
    dangers: list[Danger]
    writes: list[str] = field(default_factory=list)  # files output redirections name (`> out.txt`), as written


def analyse_command(command: str, workspace: Path) -> Analysis:
    """Every simple command in `command`, and whatever in it would be destructive or cannot be checked."""
    workspace = Path(workspace).resolve()
    analysis = Analysis(commands=[], dangers=[])
    if len(command) > MAX_COMMAND_CHARS:
        analysis.dangers.append(
            Danger(command=command[:200], kind="unchecked", reason=f"is too long to check ({len(command)} characters)")
        )
        return analysis
    try:
        command.encode("utf-8")
    except UnicodeError:
        analysis.dangers.append(
            Danger(command=command[:200], kind="unchecked", reason="holds characters that are not valid text")
        )
        return analysis
    walker = Walker(
        workspace, TIME_BUDGET_S, commands=analysis.commands, dangers=analysis.dangers, writes=analysis.writes
    )
    try:
        walker.script(command, State(workspace), depth=0)
    except (Stop, RecursionError) as stop:
        reason = str(stop) or "is nested too deeply to check"
        analysis.dangers.append(Danger(command=command[:200], kind="unchecked", reason=reason))
    if "(" in command and FORK_BOMB.search(command[:20_000]):
        analysis.dangers.append(Danger(command=command, reason="is a fork bomb"))
    return analysis
