"""`agent new-project`: create a folder, let the agent build the project, test and commit it."""

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
    output_format,
    run_workflow,
)


def new_project(
    directory: Path = typer.Argument(..., help="Folder to create the project in (new or empty)."),
    prompt: str = typer.Option(..., "--prompt", "-p", help="What to build."),
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
    """Create a folder, git-init it, let the agent build the project, run its tests and commit."""
    from agent.workflows.runs import new_project as build

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
    run_workflow(build, directory, prompt, flags, output_format(output, as_json))
