"""`agent bench`: baseline against speculative decoding, side by side."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import typer

from agent.commands.common import err


def bench(
    profiles: str = typer.Option(
        "qwen-cpu,qwen-cpu-draft,qwen-cpu-ngram",
        "--profiles",
        help="Comma-separated profiles; the first is the baseline.",
    ),
    endpoints: list[str] | None = typer.Option(
        None, "--endpoint", help="NAME=URL of a running server (repeatable; used instead of --profiles)."
    ),
    workloads: str = typer.Option(
        "seed,edit,agent", "--workloads", help="Any of: seed (the guide's 4 prompts), edit, agent."
    ),
    repeat: int = typer.Option(
        1,
        "--repeat",
        help="Rounds over all workloads; a speedup is the median of per-round "
        "ratios, shown with their range (3 rounds see past the noise).",
    ),
    temperature: float = typer.Option(0.0, "--temperature", help="0 also checks that outputs match the baseline."),
    max_tokens: int = typer.Option(1200, "--max-tokens", help="Tokens per reply (the guide used 1200)."),
    out: Path = typer.Option(Path("bench-results"), "--out", help="Folder for bench.json, bench.md and bench.png."),
    together: bool | None = typer.Option(
        None,
        "--together/--one-at-a-time",
        help="Keep every profile's server up and alternate requests (default: "
        "when their memory fits) or start them one after another.",
    ),
) -> None:
    """Baseline vs speculative decoding, side by side: tok/s, speedup, acceptance, TTFT, cache reuse, chart."""
    from agent.evals.bench_workloads import agent_workloads
    from agent.settings.config import user_profiles
    from inference.backends.endpoint import EndpointBackend
    from inference.bench import Target, run_bench, seed_workloads
    from inference.engines.python_engines import managed
    from inference.hardware import Hardware
    from inference.profiles import get_profile
    from inference.server import fit_together

    chosen = set(workloads.split(","))
    selected = [w for w in seed_workloads(max_tokens) if ("edit" if w.kind == "edit" else "seed") in chosen]
    selected += agent_workloads(max_tokens) if "agent" in chosen else []
    if endpoints:
        targets = [Target(name=e.partition("=")[0], endpoint=e.partition("=")[2]) for e in endpoints]
    else:
        targets = [Target(name=p, profile=p) for p in profiles.split(",") if p]
    known = user_profiles()

    def groups():
        if endpoints:
            yield [(t, EndpointBackend(t.endpoint)) for t in targets]
            return
        profiles_ = [get_profile(t.profile, known) for t in targets]
        at_once = fit_together(profiles_) if together is None else together
        err.print("servers: " + ("all up together, requests alternate" if at_once else "one after another"))
        for batch in [list(zip(targets, profiles_))] if at_once else [[pair] for pair in zip(targets, profiles_)]:
            with ExitStack() as stack:
                group = []
                for target, profile in batch:
                    server = stack.enter_context(managed(profile))
                    err.print(f"[bold]{target.name}[/bold]: {server.label} up at {server.url} (log {server.log_path})")
                    group.append((target, EndpointBackend(server.url)))
                yield group

    def show(sample) -> None:
        drafted = f", accepted {sample.draft_accepted}/{sample.draft_n}" if sample.draft_n else ""
        err.print(
            f"  {sample.target:16} {sample.workload:18} turn {sample.turn} round {sample.repeat}: "
            f"{sample.completion_tokens} tok at {sample.tokens_per_second:.1f} tok/s{drafted}",
            highlight=False,
        )

    report = run_bench(
        groups(), selected, repeat=repeat, temperature=temperature, baseline=targets[0].name, on_sample=show
    )
    hw = Hardware.detect()
    report.machine = {"cores": hw.cores, "ram_gb": round(hw.ram_total / 1e9, 1), "gpus": [g.name for g in hw.gpus]}
    paths = report.save(out)
    typer.echo(report.markdown())
    err.print(f"raw figures: {paths['json']}  table: {paths['markdown']}  chart: {paths['chart']}")
