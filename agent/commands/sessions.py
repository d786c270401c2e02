"""`agent sessions list`: every chat, run and new-project, newest first, with the id to resume it by."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(help="List the sessions (chat, run, new-project) to resume or continue.", no_args_is_help=True)


@app.command("list")
def sessions_list(
    repo: Path | None = typer.Option(None, "--repo", "-r", help="Only the sessions that worked in this folder."),
    limit: int = typer.Option(20, "--limit", "-n", min=1, help="Show at most this many."),
) -> None:
    """Show sessions: when, kind, how it ended, where, the task and the id. Resume one with `agent run --resume ID`
    (run) or `agent chat --resume ID` (chat)."""
    import time

    from rich.console import Console
    from rich.table import Table

    from agent.core.session import list_sessions, runs_dir
    from agent.ui.plain import plain

    found = list_sessions(repo.expanduser() if repo else None)
    if not found:
        typer.echo(f"no sessions yet{' in ' + str(repo) if repo else ''} (transcripts are kept in {runs_dir()})")
        return
    shown = found[:limit]
    table = Table("started", "kind", "status", "workspace", "task")
    table.add_column("id", no_wrap=True, min_width=max(len(s.id) for s in shown))  # the one to copy: never cut
    for s in shown:
        task = (s.task.strip().splitlines() or [""])[0]
        table.add_row(  # every field from the transcript as plain text: `[/x]` in one is not markup
            time.strftime("%Y-%m-%d %H:%M", time.localtime(s.started)),
            plain(s.kind),
            plain(s.status or "unfinished"),
            plain(s.workspace),
            plain(task[:60] + ("…" if len(task) > 60 else "")),
            plain(s.id),
        )
    Console().print(table)
