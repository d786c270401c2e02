"""`agent trust [DIR]`: show what a project's `.agent/config.toml` changes, and allow exactly that.

Also the question `agent run` / `new-project` ask on a terminal when a project file widens the settings."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING

import typer

from agent.commands.common import err, fail

if TYPE_CHECKING:
    from rich.console import Console

    from agent.config import ProjectReview


def describe_review(review: ProjectReview) -> list[str]:
    from agent.config import printable

    lines = [f"{review.file} widens what the agent may do (your setting -> the project's):"]
    lines += [f"    {change.describe()}" for change in review.changes]
    lines += [f"    {name}: never read from a project file (ignored)" for name in review.refused]
    return [printable(line) for line in lines]


def ask_trust_on_terminal(review: ProjectReview, stdin: IO[str] | None = None, console: Console | None = None) -> bool | None:
    """The question on a terminal; None without one (the caller then ignores the changes and says so)."""
    from rich.markup import escape

    stdin, console = stdin or sys.stdin, console or err
    if not stdin.isatty():
        return None
    for line in describe_review(review):
        console.print(escape(line), highlight=False, soft_wrap=True)
    console.print("Apply these for this project (now and next time, until they change)? [y/N] ", end="")
    return stdin.readline().strip().lower() in ("y", "yes")


def trust(
    directory: Path = typer.Argument(Path("."), help="The project whose .agent/config.toml to approve."),
    revoke: bool = typer.Option(False, "--revoke", help="Forget this project's approval instead."),
) -> None:
    """Show the settings a project's .agent/config.toml widens (sandbox, network, approval rules...) and
    approve exactly those values; a later change to them asks again."""
    from agent.config import ConfigError, review_project
    from agent.trust import trust_store

    project = directory.expanduser().resolve()
    if revoke:
        found = trust_store().revoke(project)
        typer.echo(f"{'revoked' if found else 'nothing was approved for'} {project}")
        return
    try:
        review = review_project(project)
    except ConfigError as exc:
        fail(str(exc))
    if review is None:
        fail(f"{project} has no .agent/config.toml: nothing to approve")
    if not review.changes:
        typer.echo(f"{review.file} widens nothing: its settings apply without approval")
        for name in review.refused:
            typer.echo(f"    {name}: never read from a project file (ignored)")
        return
    for line in describe_review(review):
        typer.echo(line)
    trust_store().approve(review.project, review.widening())
    typer.echo(f"approved for {review.project}; a change to these values asks again")
