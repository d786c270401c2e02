"""`agent init`: a first AGENTS.md for the agent to follow in a repository."""

from __future__ import annotations

from pathlib import Path

import typer

from agent.commands.common import fail


def init(
    directory: Path | None = typer.Argument(None, help="Repository root (default: the current folder)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing AGENTS.md."),
) -> None:
    """Write a first AGENTS.md (layout, languages, test command, conventions) for the agent to follow."""
    from agent.checks.project import write_agents_md

    target = (directory or Path(".")).resolve()
    if not target.is_dir():
        fail(f"{target} is not a folder")
    try:
        path = write_agents_md(target, force=force)
    except FileExistsError as exc:
        fail(str(exc))
    typer.echo(f"wrote {path}; edit it to add what the agent should know")
