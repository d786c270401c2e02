"""The question `agent run`, `new-project` and `chat` ask on a terminal when a project's `.agent/config.toml`
widens the settings (`agent trust` shows the same lines)."""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from agent.settings.config import ProjectReview


def describe_review(review: ProjectReview) -> list[str]:
    """Each change with both values whole; hidden characters written as visible escapes, as the `ask`
    prompt shows them (tools/preview.py)."""
    from tools.preview import visible

    lines = [f"{review.file} widens what the agent may do (your setting -> the project's):"]
    lines += [f"    {change.describe()}" for change in review.changes]
    lines += [f"    {name}: never read from a project file (ignored)" for name in review.refused]
    return [visible(line) for line in lines]


def ask_trust_on_terminal(
    review: ProjectReview, stdin: IO[str] | None = None, console: Console | None = None
) -> bool | None:
    """The question on a terminal; None without one (the caller then ignores the changes and says so)."""
    from rich.console import Console
    from rich.markup import escape

    stdin, console = stdin or sys.stdin, console or Console(stderr=True)
    if not stdin.isatty():
        return None
    for line in describe_review(review):
        console.print(escape(line), highlight=False, soft_wrap=True)
    console.print("Apply these for this project (now and next time, until they change)? [y/N] ", end="")
    return stdin.readline().strip().lower() in ("y", "yes")
