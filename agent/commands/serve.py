"""`agent serve`: a profile's server (llama-server, vLLM or SGLang) as a managed process (also its plan, its argv,
the background one)."""

from __future__ import annotations

import typer

from agent.commands.common import err, fail


def serve(
    profile: str = typer.Option("qwen-cpu-ngram", "--profile", "-p", help="Launch recipe (see --list)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind; anything but loopback needs --api-key."),
    port: int | None = typer.Option(
        None, "--port", help="Port (default: a free one; vLLM/SGLang commands printed with their usual port)."
    ),
    api_key: str | None = typer.Option(None, "--api-key", envvar="DFLASH_AGENT_SERVER_KEY", help="Require this key."),
    engine_key: str | None = typer.Option(None, "--engine", help="llama-server build key (default: newest that fits)."),
    background: bool = typer.Option(False, "--background", help="Start, print the URL and return."),
    status: bool = typer.Option(False, "--status", help="Show the background server."),
    stop: bool = typer.Option(False, "--stop", help="Stop the background server."),
    list_profiles: bool = typer.Option(False, "--list", help="List the profiles and exit."),
    print_args: bool = typer.Option(
        False, "--print-args", help="Print the server's command and exit (downloads nothing)."
    ),
    plan: bool = typer.Option(
        False,
        "--plan",
        help="Print the command and the memory plan (each term, the total, fits "
        "or not and why); download and start nothing; exit 0 when it fits, 1 when not.",
    ),
    ctx_size: int | None = typer.Option(None, "--ctx-size", help="The server's context in tokens (the profile's)."),
    cache_type: str | None = typer.Option(
        None, "--cache-type", help="KV cache type for K and V, e.g. q8_0 (vLLM/SGLang: fp8) (the profile's)."
    ),
    cache_ram: int | None = typer.Option(
        None, "--cache-ram", help="llama-server's prompt cache in host RAM, MiB; 0: off (the profile's)."
    ),
    ctx_checkpoints: int | None = typer.Option(
        None,
        "--ctx-checkpoints",
        min=0,
        help="llama-server's context checkpoints per slot in host RAM (the profile's).",
    ),
    synthetic: bool = typer.Option(
        False,
        "--synthetic",
        help="Run the profile's engine on synthetic files of its models (real headers, zero weights: nothing "
        "downloaded), send one request, print plan vs measured per term, stop; exit 0 when each is within 10% "
        "or 0.25 GB, else 1.",
    ),
    layers: int | None = typer.Option(
        None, "--layers", min=2, help="With --synthetic: cut the target to its first N layers (the plan alike)."
    ),
    gpu_memory: str | None = typer.Option(
        None,
        "--gpu-memory",
        help="With --plan: plan for a GPU with this much memory (e.g. 24GiB; vLLM/SGLang: each of tensor_parallel "
        "GPUs) instead of this machine's.",
    ),
) -> None:
    """Run a profile's server as a managed process (127.0.0.1, free port, health-checked): llama-server, or
    vLLM / SGLang when the profile names them and they are installed (else the install and container commands)."""
    import time as _time

    from agent.settings.config import user_profiles
    from inference import server as srv
    from inference.profiles import ProfileError, get_profile, with_overrides

    if status or stop:
        from inference import background as recorded

        state, alive = recorded.background_status()
        if stop:
            stopped = recorded.stop_background()
            typer.echo(f"stopped {stopped.url} ({stopped.profile})" if stopped else "no background server")
        elif state:
            typer.echo(recorded.dump_state(state) + f"\nalive: {alive}")
        else:
            typer.echo("no background server")
        return
    profiles = user_profiles()
    if list_profiles:
        for p in profiles.values():
            typer.echo(f"{p.name:26} {p.engine:12} {p.device:4} {p.speculative:12} {p.description}")
        return
    try:
        chosen = with_overrides(
            get_profile(profile, profiles), ctx_size, cache_type, cache_ram=cache_ram, ctx_checkpoints=ctx_checkpoints
        )
    except ProfileError as exc:
        fail(str(exc))
    if synthetic:
        _run_synthetic(chosen, engine_key, layers)
        return
    if plan or print_args:
        if chosen.engine != "llama-server":
            _print_engine_plan(chosen, host, port, gpu_memory, with_plan=plan)
        else:
            _print_plan(chosen, engine_key, host, port, gpu_memory, with_plan=plan)
        return
    if chosen.engine != "llama-server":
        from inference.engines.python_engines import EngineServer, gated_notes, launcher, not_installed

        if launcher(chosen.engine) is None:
            fail(not_installed(chosen))
        for note in gated_notes(chosen):
            err.print(note, highlight=False)
        managed: srv.ManagedProcess = EngineServer(chosen, host=host, port=port, api_key=api_key)
        err.print(f"starting {chosen.name} on {chosen.engine} (log: {managed.log_path})")
    else:
        managed = srv.ManagedServer(
            srv.choose_engine(chosen, engine_key), chosen, host=host, port=port, api_key=api_key
        )
        err.print(f"starting {chosen.name} on {managed.engine.source} (log: {managed.log_path})")
    managed.start(detach=background)
    typer.echo(managed.url)
    if background:
        return
    err.print(f"serving {chosen.name} at {managed.url}; Ctrl-C to stop")
    try:
        while managed.alive():
            _time.sleep(0.5)
        fail(f"{managed.label} exited (code {managed.process and managed.process.returncode}); log: {managed.log_path}")
    except KeyboardInterrupt:
        err.print("stopping ...")
    finally:
        managed.stop()


def _run_synthetic(chosen, engine_key: str | None, layers: int | None) -> None:
    from inference.shapes.synthrun import run_synthetic

    if chosen.engine != "llama-server":
        fail(f"--synthetic runs llama-server profiles; {chosen.name!r} runs on {chosen.engine}")
    report = run_synthetic(chosen, engine_key=engine_key, layers=layers)
    typer.echo(f"$ {report.command}\n{report.render()}")
    if not report.ok:
        raise typer.Exit(1)


def _print_plan(
    chosen, engine_key: str | None, host: str, port: int | None, gpu_memory: str | None, with_plan: bool
) -> None:
    """The argv for the engine the profile would run on and, with `with_plan`, its memory plan; never downloads.
    Exits 1 when the plan does not fit (or cannot be known)."""
    import shlex

    from inference import server as srv
    from inference.fetch import cached_model, model_path
    from inference.memplan import engine_logits, plan_profile
    from inference.models import get_model
    from inference.net import free_port
    from inference.plans.llama_server import largest_contexts
    from inference.plans.terms import parse_size
    from inference.render import render

    caps, binary, described = srv.planned_engine(chosen, engine_key)
    paths = {m: cached_model(get_model(m)) or model_path(get_model(m)) for m in chosen.models()}
    argv = [binary, *render(chosen, caps, paths, host, port or free_port())]
    if not with_plan:
        typer.echo(shlex.join(argv))
        return
    try:
        size = parse_size(gpu_memory) if gpu_memory else None
    except ValueError as exc:
        fail(str(exc))
    srv.check_drafter(chosen, caps)
    logits = engine_logits(caps)
    memory = plan_profile(chosen, gpu_memory=size, logits=logits)
    if gpu_memory and chosen.device == "gpu":
        memory.available_from = f"--gpu-memory {gpu_memory}"
    table = largest_contexts(
        chosen, gpu_memory=size if chosen.device == "gpu" else None, cache_types=caps.cache_types, logits=logits
    )
    typer.echo(f"{described}:\n{shlex.join(argv)}\n\n{memory.render()}\n\n{table}")
    if not memory.fits:
        raise typer.Exit(1)


def _print_engine_plan(chosen, host: str, port: int | None, gpu_memory: str | None, with_plan: bool) -> None:
    """vLLM / SGLang: the command (and the container one), the gated-model notes and, with `with_plan`, the
    memory plan per GPU; exits 1 when the plan does not fit (or cannot be known)."""
    import shlex

    from inference.engines.python_engines import DEFAULT_PORT, container_command, describe, gated_notes, render
    from inference.plans.terms import parse_size
    from inference.plans.vllm_sglang import largest_python_contexts, plan_python_engine

    if not with_plan:
        typer.echo(shlex.join(render(chosen, host, port or DEFAULT_PORT[chosen.engine])))
        return
    try:
        size = parse_size(gpu_memory) if gpu_memory else None
    except ValueError as exc:
        fail(str(exc))
    memory = plan_python_engine(chosen, size)
    notes = "".join(f"\n{n}" for n in gated_notes(chosen))
    table = largest_python_contexts(chosen, size) if memory.available is not None else ""
    typer.echo(
        f"{describe(chosen, host, port)}\nin a container:\n{container_command(chosen)}{notes}\n\n{memory.render()}"
        + (f"\n\n{table}" if table else "")
    )
    if not memory.fits:
        raise typer.Exit(1)
