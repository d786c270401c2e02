"""`agent run`: one task, headless, on an existing repository (its own branch, a commit per step)."""

from __future__ import annotations

from pathlib import Path

import typer

from agent.commands.common import (
    Approval,
    CacheType,
    CtxSize,
    Endpoint,
    Json,
    MaxSteps,
    Model,
    OutputFormat,
    Preset,
    Profile,
    Sandbox,
    failed,
    final_on_failure,
    output_format,
    run_workflow,
)


def run(
    task: str | None = typer.Argument(
        None, help="What the agent should do; `-` (or none, with stdin not a terminal) reads it from stdin."
    ),
    repo: Path = typer.Option(Path("."), "--repo", "-r", help="The git repository to work in."),
    resume: str | None = typer.Option(
        None,
        "--resume",
        help="Continue the run with this session id (`agent "
        "sessions list`) or transcript file (printed when a run stops).",
    ),
    model: Model = None,
    endpoint: Endpoint = None,
    profile: Profile = None,
    ctx_size: CtxSize = None,
    cache_type: CacheType = None,
    max_steps: MaxSteps = None,
    approval: Approval = None,
    sandbox: Sandbox = None,
    preset: Preset = None,
    output: OutputFormat = None,
    as_json: Json = False,
) -> None:
    """Run one task headless on an existing repository, on its own branch with a commit per step."""
    import sys

    from agent.workflows.runs import resume_run, run_task

    chosen = output_format(output, as_json)
    flags = dict(
        model=model,
        endpoint=endpoint,
        profile=profile,
        ctx_size=ctx_size,
        cache_type=cache_type,
        max_steps=max_steps,
        approval=approval,
        sandbox=sandbox,
        preset=preset,
    )
    if resume:
        from agent.core.session import find_session, read_transcript

        with final_on_failure(chosen):  # a session not found: the final object too
            path = find_session(resume)
            repo = Path(read_transcript(path).start["workspace"])
        run_workflow(
            lambda _repo, _text, config, events: resume_run(path, config, events), repo, str(path), flags, chosen
        )
        return
    if task == "-" or (task is None and not sys.stdin.isatty()):
        task = sys.stdin.read().strip()
    if not task:
        failed(chosen, 'say what to do: agent run "TASK" (or on stdin: agent run - < task.txt; or --resume SESSION)', 1)
    run_workflow(run_task, repo, task, flags, chosen)
