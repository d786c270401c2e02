"""`agent doctor`: what this machine can run, and what to do first."""

from __future__ import annotations

from pathlib import Path


def doctor() -> None:
    """Hardware, engine builds, cached models, and which profiles can run here (and why not)."""
    from rich.console import Console

    from agent.settings.config import user_profiles
    from inference.engines.engine import list_engines
    from inference.fetch import cached_model
    from inference.hardware import Hardware
    from inference.memplan import plan_profile
    from inference.models import CATALOG, get_model
    from inference.profiles import ProfileError
    from inference.render import render
    from inference.server import build_hint, planned_engine

    hw = Hardware.detect()
    console = Console()
    console.print(
        f"[bold]machine[/bold]  {hw.cores} cores, {hw.ram_available / 1e9:.1f} of {hw.ram_total / 1e9:.1f} GB RAM "
        f"available, nvcc: {hw.nvcc or 'not found'}"
    )
    for gpu in hw.gpus or []:
        console.print(
            f"  GPU {gpu.name} (sm {gpu.compute_cap}): {gpu.memory_free / 1e9:.1f} of {gpu.memory_total / 1e9:.1f} GB free"
        )
    if not hw.gpus:
        console.print("  no NVIDIA GPU found (nvidia-smi)")
    from tools.sandbox import sandbox_status

    console.print(f"[bold]sandbox[/bold]  {sandbox_status().summary()}", highlight=False)
    engines = list_engines()
    console.print(f"[bold]engines[/bold]  {len(engines) or 'none built: `agent engine build`'}")
    for e in engines:
        console.print(
            f"  {e.key} {e.source} {e.options.describe()}, DFlash: {e.capabilities.dflash_dialect}, "
            f"spec types: {', '.join(e.capabilities.spec_types)}"
        )
    console.print("[bold]models[/bold]")
    for spec in CATALOG.values():
        console.print(f"  {spec.id:22} {'cached' if cached_model(spec) else 'not downloaded'}")
    console.print("[bold]profiles[/bold] (memory plans from GGUF headers or catalog facts; nothing downloaded)")
    placeholders = {m.id: Path(m.filename) for m in CATALOG.values()}
    for p in user_profiles().values():
        if p.engine != "llama-server":
            _python_engine(console, p)
            continue
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


def _python_engine(console, profile) -> None:
    """A vLLM / SGLang profile: whether the engine is installed and whether its plan fits this machine's GPUs."""
    from inference.engines.python_engines import install_command, launcher
    from inference.plans.vllm_sglang import plan_python_engine as plan
    from inference.profiles import ProfileError

    try:
        memory = plan(profile)
    except ProfileError as exc:
        console.print(f"  [red]no[/red]   {profile.name}: {exc}", highlight=False)
        return
    if not memory.fits:
        console.print(f"  [red]no[/red]   {profile.name}: {memory.verdict()}", highlight=False)
        return
    then = "" if launcher(profile.engine) else f"; first: {install_command(profile.engine)}"
    console.print(f"  [green]ok[/green]   {profile.name}: {memory.verdict()}{then}", highlight=False)
