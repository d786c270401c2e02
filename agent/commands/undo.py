"""`agent undo`: take back the latest agent checkpoint."""

from __future__ import annotations

from pathlib import Path

import typer

from agent.commands.common import err


def undo(
    repo: Path = typer.Option(Path("."), "--repo", "-r", help="The git repository."),
    branch: str | None = typer.Option(None, "--branch", "-b", help="The agent branch (default: the checked-out one)."),
) -> None:
    """Take back the latest agent checkpoint: the branch returns to the exact contents before it."""
    from rich.text import Text

    from agent.git.checkpoints import undo as undo_checkpoint
    from agent.ui.plain import plain

    done = undo_checkpoint(repo.expanduser().resolve(), branch)
    where = (
        "working tree and branch" if done.checked_out else "branch (not checked out; your working tree is untouched)"
    )
    err.print(
        Text.assemble(f"undid {done.undone[:10]} ", plain(done.undone_subject, "bold"), f" on {done.branch}"),
        highlight=False,
    )
    err.print(
        plain(f"  {where} now at {done.now_at[:10]}; files changed back: {', '.join(done.files) or '(none)'}"),
        highlight=False,
    )
    if done.restored:
        err.print(
            plain(f"  uncommitted work from before the step put back: {', '.join(done.restored)}"), highlight=False
        )
    err.print(plain(f"  to redo: {done.redo}"), highlight=False)
