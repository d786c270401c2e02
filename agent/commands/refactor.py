"""`agent refactor`: one instruction over many repositories, each verified and committed on its own branch."""

from __future__ import annotations

from pathlib import Path

import typer

from agent.commands.common import Endpoint, Json, MaxSteps, Model, Preset, Profile, Sandbox, err


def refactor(
    instruction: str = typer.Argument(..., help="What to change in every repository."),
    repos: list[str] | None = typer.Option(None, "--repos", help="Repository paths (repeat, or comma-separated)."),
    repos_file: Path | None = typer.Option(None, "--repos-file", help="A file with one repository path per line."),
    verify: str | None = typer.Option(None, "--verify", help="Check command (default: each repo's test command)."),
    parallel: int = typer.Option(1, "--parallel", "-j", min=1, help="Repos at once (endpoint or profile only)."),
    report: Path | None = typer.Option(None, "--report", help="Folder for report.json and report.md."),
    model: Model = None,
    endpoint: Endpoint = None,
    profile: Profile = None,
    max_steps: MaxSteps = None,
    sandbox: Sandbox = None,
    preset: Preset = None,
    as_json: Json = False,
) -> None:
    """Run one instruction on many repositories, verify each, commit on its own branch only when it passes.

    Writes report.json and report.md (per repo: status, files, diff stat, verification tail, steps, tokens, time).
    """
    import json
    import time

    from rich.text import Text

    from agent.core.errors import UserError
    from agent.settings.config import load_config
    from agent.ui.display import LineEvents
    from agent.ui.plain import plain
    from agent.workflows.refactor import read_repos_file, write_report
    from agent.workflows.refactor import refactor as refactor_repos

    paths = [Path(p.strip()) for item in repos or [] for p in item.split(",") if p.strip()]
    try:
        paths += read_repos_file(repos_file) if repos_file else []
    except OSError as exc:
        raise UserError(f"cannot read {repos_file}: {exc}") from None
    if not paths:
        raise UserError("no repositories: pass --repos PATH (repeatable) or --repos-file FILE")
    config = load_config(
        None, dict(model=model, endpoint=endpoint, profile=profile, max_steps=max_steps, sandbox=sandbox, preset=preset)
    )
    result = refactor_repos(instruction, paths, config, verify, parallel, LineEvents(err))
    folder = report or Path(f"refactor-report-{time.strftime('%Y%m%d-%H%M%S')}")
    json_path, md_path = write_report(result, folder)
    if as_json:
        typer.echo(json.dumps(result.model_dump(), indent=2))
    counts = ", ".join(f"{n} {s}" for s, n in result.counts().items() if n)
    err.print(
        Text.assemble("\n", (counts, "bold"), plain(f" in {result.seconds:.0f}s · report: {md_path} and {json_path}")),
        highlight=False,
    )
    if result.counts()["error"]:
        raise typer.Exit(2)
