"""`agent undo` and `agent refactor`: the git side of the agent (importing this module registers them)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.text import Text

from agent.cli import EndpointOpt, JsonOpt, ModelOpt, ProfileOpt, SandboxMode, SandboxOpt, StepsOpt, app, err
from agent.config import load_config
from agent.errors import UserError
from agent.loop import AgentEvents
from agent.plain import plain
from agent.toolcalls import ParsedCall
from inference.backend import Completion
from tools.base import ToolResult


@app.command("undo")
def undo_cmd(
    repo: Path = typer.Option(Path("."), "--repo", "-r", help="The git repository."),
    branch: Optional[str] = typer.Option(None, "--branch", "-b", help="The agent branch (default: the checked-out one)."),
) -> None:
    """Take back the latest agent checkpoint: the branch returns to the exact contents before it."""
    from agent.checkpoints import undo

    done = undo(repo.expanduser().resolve(), branch)
    where = "working tree and branch" if done.checked_out else "branch (not checked out; your working tree is untouched)"
    err.print(Text.assemble(f"undid {done.undone[:10]} ", plain(done.undone_subject, "bold"), f" on {done.branch}"),
              highlight=False)
    err.print(plain(f"  {where} now at {done.now_at[:10]}; files changed back: {', '.join(done.files) or '(none)'}"),
              highlight=False)
    err.print(plain(f"  to redo: {done.redo}"), highlight=False)


@app.command("refactor")
def refactor_cmd(
    instruction: str = typer.Argument(..., help="What to change in every repository."),
    repos: Optional[list[str]] = typer.Option(None, "--repos", help="Repository paths (repeat, or comma-separated)."),
    repos_file: Optional[Path] = typer.Option(None, "--repos-file", help="A file with one repository path per line."),
    verify: Optional[str] = typer.Option(None, "--verify", help="Check command (default: each repo's test command)."),
    parallel: int = typer.Option(1, "--parallel", "-j", min=1, help="Repos at once (endpoint or profile only)."),
    report: Optional[Path] = typer.Option(None, "--report", help="Folder for report.json and report.md."),
    model: Optional[str] = ModelOpt,
    endpoint: Optional[str] = EndpointOpt,
    profile: Optional[str] = ProfileOpt,
    max_steps: Optional[int] = StepsOpt,
    sandbox: Optional[SandboxMode] = SandboxOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Run one instruction on many repositories, verify each, commit on its own branch only when it passes.

    Writes report.json and report.md (per repo: status, files, diff stat, verification tail, steps, tokens, time).
    """
    from agent.refactor import read_repos_file, refactor, write_report

    paths = [Path(p.strip()) for item in repos or [] for p in item.split(",") if p.strip()]
    try:
        paths += read_repos_file(repos_file) if repos_file else []
    except OSError as exc:
        raise UserError(f"cannot read {repos_file}: {exc}") from None
    if not paths:
        raise UserError("no repositories: pass --repos PATH (repeatable) or --repos-file FILE")
    config = load_config(None, dict(model=model, endpoint=endpoint, profile=profile, max_steps=max_steps,
                                       sandbox=sandbox and sandbox.value))
    result = refactor(instruction, paths, config, verify, parallel, LineEvents(err))
    folder = report or Path(f"refactor-report-{time.strftime('%Y%m%d-%H%M%S')}")
    json_path, md_path = write_report(result, folder)
    if as_json:
        typer.echo(json.dumps(result.model_dump(), indent=2))
    counts = ", ".join(f"{n} {s}" for s, n in result.counts().items() if n)
    err.print(Text.assemble("\n", (counts, "bold"), plain(f" in {result.seconds:.0f}s · report: {md_path} and {json_path}")),
              highlight=False)
    if result.counts()["error"]:
        raise typer.Exit(2)


class LineEvents:
    """Refactor progress as one line per step, prefixed with the repo (repos may run side by side)."""

    def __init__(self, console: Console):
        self.console, self.lock = console, threading.Lock()

    def on_note(self, text: str) -> None:
        with self.lock:
            self.console.print(plain(text, "yellow"), highlight=False)

    def on_repo_start(self, repo: Path) -> AgentEvents:
        self.on_note(f"{repo.name}: started")
        return _RepoLines(self, repo.name)

    def on_repo_done(self, outcome) -> None:
        colour = {"passed": "green", "failed": "red", "error": "red"}.get(outcome.status, "yellow")
        with self.lock:
            self.console.print(Text.assemble(plain(f"{Path(outcome.repo).name}: {outcome.status}", colour),
                                             plain(f" · {outcome.reason} · {outcome.steps} steps · {outcome.seconds:.0f}s")),
                               highlight=False)


class _RepoLines:
    def __init__(self, parent: LineEvents, name: str):
        self.parent, self.name = parent, name

    def on_text(self, text: str) -> None:
        pass

    def on_note(self, text: str) -> None:
        with self.parent.lock:
            self.parent.console.print(plain(f"  {self.name}: {text}", "dim"), highlight=False)

    def on_step(self, step: int, completion: Completion, results: list[tuple[ParsedCall, ToolResult]]) -> None:
        calls = ", ".join(f"{c.name}{' (failed)' if r.is_error else ''}" for c, r in results) or "no tool call"
        t = completion.timings
        with self.parent.lock:
            self.parent.console.print(plain(f"  {self.name}: step {step} {calls} · {t.completion_tokens} tok at "
                                            f"{t.tokens_per_second:.1f} tok/s"), highlight=False)
