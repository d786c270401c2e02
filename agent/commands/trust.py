"""`agent trust [DIR]`: show what a project's `.agent/config.toml` changes, and allow exactly that (the
question `run`, `new-project` and `chat` ask on a terminal is in agent/ui/trust_prompt.py)."""

from __future__ import annotations

from pathlib import Path

import typer

from agent.commands.common import fail
from agent.ui.trust_prompt import describe_review


def trust(
    directory: Path = typer.Argument(Path("."), help="The project whose .agent/config.toml to approve."),
    revoke: bool = typer.Option(False, "--revoke", help="Forget this project's approval instead."),
) -> None:
    """Show the settings a project's .agent/config.toml widens (sandbox, network, approval rules...) and
    approve exactly those values; a later change to them asks again."""
    from agent.settings.config import ConfigError, review_project
    from agent.settings.trust import trust_store

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
