"""`agent engine|serve|bench|doctor`: the commands about engines, servers and speed."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from agent.cli import _fail, app, err
from inference.fetch import cached_model
from inference.models import CATALOG, get_model

engine_app = typer.Typer(help="Build and inspect llama-server engines (BeeLlama.cpp, upstream llama.cpp).", no_args_is_help=True)
app.add_typer(engine_app, name="engine")


@engine_app.command("build")
def engine_build(
    source: str = typer.Option("beellama", "--source", "-s",
                               help="beellama (pinned tag), upstream, pypi-sdist[==VERSION], a git URL, or a local folder."),
    ref: Optional[str] = typer.Option(None, "--ref", help="Git tag, branch or commit (git sources)."),
    backend: Optional[str] = typer.Option(None, "--backend", help="cpu, cuda or metal (default: cuda when an NVIDIA GPU is present, and then the CUDA toolkit must be found; cpu builds for the CPU on purpose)."),
    cuda_arch: Optional[str] = typer.Option(None, "--cuda-arch", help="CUDA architecture, e.g. 89 (default: from nvidia-smi)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="Parallel compile jobs (default: cores, fewer when free RAM is short: about 4 GB per CUDA job)."),
    force: bool = typer.Option(False, "--force", help="Rebuild even when a cached build matches."),
) -> None:
    """Build llama-server from source (cached by source commit and options) and print what it can do."""
    from inference.engine import EngineSource, build_engine, detect_build_options

    engine = build_engine(EngineSource.parse(source, ref), detect_build_options(backend, cuda_arch), jobs=jobs, force=force)
    caps = engine.capabilities
    typer.echo(f"{engine.binary}\n  source {engine.source} ({engine.commit[:16]}), {engine.options.backend}, {engine.version}"
               f"\n  DFlash dialect: {caps.dflash_dialect}; speculative types: {', '.join(caps.spec_types) or 'none'}"
               f"\n  our patches: {', '.join(engine.patches) or 'none apply to this source'}")


@engine_app.command("list")
def engine_list() -> None:
    """Show the cached engine builds and their capabilities."""
    from inference.engine import list_engines

    table = Table("key", "source", "backend", "version", "DFlash", "patches", "built in")
    for engine in list_engines():
        table.add_row(engine.key, f"{engine.source}\n{engine.commit[:16]}", engine.options.backend, engine.version,
                      engine.capabilities.dflash_dialect, ", ".join(engine.patches) or "-", f"{engine.build_seconds:.0f}s")
    Console().print(table)


@app.command("serve")
def serve(
    profile: str = typer.Option("qwen-cpu-ngram", "--profile", "-p", help="Launch recipe (see --list)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind; anything but loopback needs --api-key."),
    port: Optional[int] = typer.Option(None, "--port", help="Port (default: a free one)."),
    api_key: Optional[str] = typer.Option(None, "--api-key", envvar="DFLASH_AGENT_SERVER_KEY", help="Require this key."),
    engine_key: Optional[str] = typer.Option(None, "--engine", help="Engine build key (default: newest that fits)."),
    background: bool = typer.Option(False, "--background", help="Start, print the URL and return."),
    status: bool = typer.Option(False, "--status", help="Show the background server."),
    stop: bool = typer.Option(False, "--stop", help="Stop the background server."),
    list_profiles: bool = typer.Option(False, "--list", help="List the profiles and exit."),
    print_args: bool = typer.Option(False, "--print-args", help="Print the llama-server command and exit (downloads nothing)."),
    plan: bool = typer.Option(False, "--plan", help="Print the command and the memory plan (each term, the total, fits "
                                                    "or not and why); download and start nothing; exit 0 when it fits, 1 when not."),
    gpu_memory: Optional[str] = typer.Option(None, "--gpu-memory", help="With --plan: plan for a GPU with this much "
                                                                          "memory (e.g. 24GiB) instead of this machine's."),
) -> None:
    """Run llama-server from a profile as a managed process (127.0.0.1, free port, health-checked)."""
    import time as _time

    from agent.config import user_config_path
    from inference.profiles import get_profile, load_profiles
    from inference import server as srv

    if status or stop:
        state, alive = srv.background_status()
        if stop:
            stopped = srv.stop_background()
            typer.echo(f"stopped {stopped.url} ({stopped.profile})" if stopped else "no background server")
        elif state:
            typer.echo(srv.dump_state(state) + f"\nalive: {alive}")
        else:
            typer.echo("no background server")
        return
    profiles = load_profiles(user_config_path())
    if list_profiles:
        for p in profiles.values():
            typer.echo(f"{p.name:20} {p.device:4} {p.speculative:11} {p.description}")
        return
    chosen = get_profile(profile, profiles)
    if plan or print_args:
        _print_plan(chosen, engine_key, host, port, gpu_memory, with_plan=plan)
        return
    managed = srv.ManagedServer(srv.choose_engine(chosen, engine_key), chosen, host=host, port=port, api_key=api_key)
    err.print(f"starting {chosen.name} on {managed.engine.source} (log: {managed.log_path})")
    managed.start(detach=background)
    typer.echo(managed.url)
    if background:
        return
    err.print(f"serving {chosen.name} at {managed.url}; Ctrl-C to stop")
    try:
        while managed.alive():
            _time.sleep(0.5)
        _fail(f"llama-server exited (code {managed.process and managed.process.returncode}); log: {managed.log_path}")
    except KeyboardInterrupt:
        err.print("stopping ...")
    finally:
        managed.stop()


def _print_plan(chosen, engine_key: str | None, host: str, port: int | None, gpu_memory: str | None,
                with_plan: bool) -> None:
    """The argv for the engine the profile would run on and, with `with_plan`, its memory plan; never downloads.
    Exits 1 when the plan does not fit (or cannot be known)."""
    import shlex

    from inference.fetch import model_path
    from inference.memplan import parse_size, plan_profile
    from inference.profiles import render
    from inference import server as srv

    caps, binary, described = srv.planned_engine(chosen, engine_key)
    paths = {m: cached_model(get_model(m)) or model_path(get_model(m)) for m in chosen.models()}
    argv = [binary, *render(chosen, caps, paths, host, port or srv.free_port())]
    if not with_plan:
        typer.echo(shlex.join(argv))
        return
    try:
        size = parse_size(gpu_memory) if gpu_memory else None
    except ValueError as exc:
        _fail(str(exc))
    srv.check_drafter(chosen, caps)
    memory = plan_profile(chosen, gpu_memory=size)
    if gpu_memory and chosen.device == "gpu":
        memory.available_from = f"--gpu-memory {gpu_memory}"
    typer.echo(f"{described}:\n{shlex.join(argv)}\n\n{memory.render()}")
    if not memory.fits:
        raise typer.Exit(1)


@app.command("bench")
def bench(
    profiles: str = typer.Option("qwen-cpu,qwen-cpu-draft,qwen-cpu-ngram", "--profiles",
                                 help="Comma-separated profiles; the first is the baseline."),
    endpoints: Optional[list[str]] = typer.Option(None, "--endpoint", help="NAME=URL of a running server (repeatable; used instead of --profiles)."),
    workloads: str = typer.Option("seed,edit,agent", "--workloads", help="Any of: seed (the guide's 4 prompts), edit, agent."),
    repeat: int = typer.Option(1, "--repeat", help="Rounds over all workloads; a speedup is the median of per-round "
                                                   "ratios, shown with their range (3 rounds see past the noise)."),
    temperature: float = typer.Option(0.0, "--temperature", help="0 also checks that outputs match the baseline."),
    max_tokens: int = typer.Option(1200, "--max-tokens", help="Tokens per reply (the guide used 1200)."),
    out: Path = typer.Option(Path("bench-results"), "--out", help="Folder for bench.json, bench.md and bench.png."),
    together: Optional[bool] = typer.Option(None, "--together/--one-at-a-time",
                                            help="Keep every profile's server up and alternate requests (default: "
                                                 "when their memory fits) or start them one after another."),
) -> None:
    """Baseline vs speculative decoding, side by side: tok/s, speedup, acceptance, TTFT, cache reuse, chart."""
    from agent.bench_workloads import agent_workloads
    from agent.config import user_config_path
    from inference.bench import Target, run_bench, seed_workloads
    from inference.endpoint import EndpointBackend
    from inference.hardware import Hardware
    from inference.profiles import get_profile, load_profiles
    from inference.server import ManagedServer, choose_engine, fit_together

    chosen = set(workloads.split(","))
    selected = [w for w in seed_workloads(max_tokens) if ("edit" if w.kind == "edit" else "seed") in chosen]
    selected += agent_workloads(max_tokens) if "agent" in chosen else []
    if endpoints:
        targets = [Target(name=e.partition("=")[0], endpoint=e.partition("=")[2]) for e in endpoints]
    else:
        targets = [Target(name=p, profile=p) for p in profiles.split(",") if p]
    known = load_profiles(user_config_path())

    def groups():
        if endpoints:
            yield [(t, EndpointBackend(t.endpoint)) for t in targets]
            return
        profiles_ = [get_profile(t.profile, known) for t in targets]
        at_once = fit_together(profiles_) if together is None else together
        err.print("servers: " + ("all up together, requests alternate" if at_once else "one after another"))
        for batch in ([list(zip(targets, profiles_))] if at_once else [[pair] for pair in zip(targets, profiles_)]):
            with ExitStack() as stack:
                group = []
                for target, profile in batch:
                    server = stack.enter_context(ManagedServer(choose_engine(profile), profile))
                    err.print(f"[bold]{target.name}[/bold]: llama-server up at {server.url} (log {server.log_path})")
                    group.append((target, EndpointBackend(server.url)))
                yield group

    def show(sample) -> None:
        drafted = f", accepted {sample.draft_accepted}/{sample.draft_n}" if sample.draft_n else ""
        err.print(f"  {sample.target:16} {sample.workload:18} turn {sample.turn} round {sample.repeat}: "
                  f"{sample.completion_tokens} tok at {sample.tokens_per_second:.1f} tok/s{drafted}", highlight=False)

    report = run_bench(groups(), selected, repeat=repeat, temperature=temperature, baseline=targets[0].name,
                       on_sample=show)
    hw = Hardware.detect()
    report.machine = {"cores": hw.cores, "ram_gb": round(hw.ram_total / 1e9, 1), "gpus": [g.name for g in hw.gpus]}
    paths = report.save(out)
    typer.echo(report.markdown())
    err.print(f"raw figures: {paths['json']}  table: {paths['markdown']}  chart: {paths['chart']}")


@app.command("doctor")
def doctor() -> None:
    """Hardware, engine builds, cached models, and which profiles can run here (and why not)."""
    from agent.config import user_config_path
    from inference.engine import list_engines
    from inference.hardware import Hardware
    from inference.memplan import plan_profile
    from inference.profiles import ProfileError, load_profiles, render
    from inference.server import build_hint, planned_engine

    hw = Hardware.detect()
    console = Console()
    console.print(f"[bold]machine[/bold]  {hw.cores} cores, {hw.ram_available / 1e9:.1f} of {hw.ram_total / 1e9:.1f} GB RAM "
                  f"available, nvcc: {hw.nvcc or 'not found'}")
    for gpu in hw.gpus or []:
        console.print(f"  GPU {gpu.name} (sm {gpu.compute_cap}): {gpu.memory_free / 1e9:.1f} of {gpu.memory_total / 1e9:.1f} GB free")
    if not hw.gpus:
        console.print("  no NVIDIA GPU found (nvidia-smi)")
    from tools.sandbox import sandbox_status
    console.print(f"[bold]sandbox[/bold]  {sandbox_status().summary()}", highlight=False)
    engines = list_engines()
    console.print(f"[bold]engines[/bold]  {len(engines) or 'none built: `agent engine build`'}")
    for e in engines:
        console.print(f"  {e.key} {e.source} {e.options.backend}, DFlash: {e.capabilities.dflash_dialect}, "
                      f"spec types: {', '.join(e.capabilities.spec_types)}")
    console.print("[bold]models[/bold]")
    for spec in CATALOG.values():
        console.print(f"  {spec.id:22} {'cached' if cached_model(spec) else 'not downloaded'}")
    console.print("[bold]profiles[/bold] (memory plans from GGUF headers or catalog facts; nothing downloaded)")
    placeholders = {m.id: Path(m.filename) for m in CATALOG.values()}
    for p in load_profiles(user_config_path()).values():
        try:
            caps, _, described = planned_engine(p)
            render(p, caps, placeholders, "127.0.0.1", 1)
            plan = plan_profile(p)
        except ProfileError as exc:
            console.print(f"  [red]no[/red]   {p.name}: {str(exc).splitlines()[0]}", highlight=False)
            continue
        if not plan.fits:
            console.print(f"  [red]no[/red]   {p.name}: {plan.verdict()}", highlight=False)
            continue
        todo = [] if described.startswith("engine ") else [build_hint(p)]
        todo += [f"`agent models pull {m}`" for m in p.models() if not cached_model(get_model(m))]
        then = f"; first: {', '.join(todo)}" if todo else ""
        console.print(f"  [green]ok[/green]   {p.name}: {plan.verdict()}{then}", highlight=False)
