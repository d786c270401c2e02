"""`agent engine build|list`: llama-server builds from source, cached, with what each can do."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Build and inspect llama-server engines (BeeLlama.cpp, upstream llama.cpp).", no_args_is_help=True
)


@app.command("build")
def engine_build(
    source: str = typer.Option(
        "beellama",
        "--source",
        "-s",
        help="beellama (pinned tag), upstream, pypi-sdist[==VERSION], a git URL, or a local folder.",
    ),
    ref: str | None = typer.Option(
        None,
        "--ref",
        help="Git tag, branch or commit (git sources). BeeLlama tags known to work: v0.2.0 (the default; fork "
        "DFlash) and v0.4.4 (upstream draft-dflash with a converted drafter, and MTP); not v0.3.x, which has "
        "the 4090 DFlash failure (docs/beellama-versions.md).",
    ),
    backend: str | None = typer.Option(
        None,
        "--backend",
        help="cpu, cuda or metal (default: cuda when an NVIDIA GPU is present, and then the CUDA toolkit must be found; cpu builds for the CPU on purpose).",
    ),
    cuda_arch: str | None = typer.Option(
        None, "--cuda-arch", help="CUDA architecture, e.g. 89 (default: from nvidia-smi; needed where there is no GPU)."
    ),
    jobs: int | None = typer.Option(
        None,
        "--jobs",
        "-j",
        help="Parallel compile jobs (default: cores, fewer when free RAM is short: about 4 GB per CUDA job).",
    ),
    rpc: bool = typer.Option(
        False, "--rpc", help="Also build rpc-server and the RPC backend, to spread one model over machines."
    ),
    force: bool = typer.Option(False, "--force", help="Rebuild even when a cached build matches."),
) -> None:
    """Build llama-server from source (cached by source commit and options) and print what it can do."""
    from agent.commands.common import err
    from inference.engines.engine import BEELLAMA_KNOWN_GOOD, EngineSource, build_engine, detect_build_options

    if source == "beellama" and ref and ref not in BEELLAMA_KNOWN_GOOD:
        known = "; ".join(f"{tag}: {why}" for tag, why in BEELLAMA_KNOWN_GOOD.items())
        err.print(
            f"note: BeeLlama {ref} is not a version known to work here ({known}); see docs/beellama-versions.md",
            markup=False,
            highlight=False,
        )
    options = detect_build_options(backend, cuda_arch).model_copy(update={"rpc": rpc})
    if options.cublas:
        err.print(
            f"note: this CUDA toolkit has no cuBLAS; using PyPI's nvidia-cublas in {options.cublas}", markup=False
        )
    if not options.vmm:
        err.print(
            "note: no libcuda here (no NVIDIA driver, no toolkit stubs): built with GGML_CUDA_NO_VMM, "
            "ggml's plain memory pool; build on the GPU machine for its VMM pool",
            markup=False,
        )
    engine = build_engine(EngineSource.parse(source, ref), options, jobs=jobs, force=force)
    caps = engine.capabilities
    typer.echo(
        f"{engine.binary}\n  source {engine.source} ({engine.commit[:16]}), {engine.options.describe()}, {engine.version}"
        f"\n  DFlash dialect: {caps.dflash_dialect}; speculative types: {', '.join(caps.spec_types) or 'none'}"
        f"\n  our patches: {', '.join(engine.patches) or 'none apply to this source'}"
        + (f"\n  RPC worker: {engine.rpc_server}" if engine.rpc_server else "")
    )


@app.command("add")
def engine_add(
    spec: str = typer.Argument(
        ...,
        help="A llama-server you built (the binary, or its folder) or a container image that runs one "
        "(e.g. ghcr.io/anbeeld/beellama.cpp:server-cuda-v0.4.4).",
    ),
    backend: str | None = typer.Option(
        None, "--backend", help="cpu, cuda or metal (default: from its --list-devices; images: cuda)."
    ),
) -> None:
    """Register a llama-server built elsewhere: its --help is read like a build's, and profiles use it."""
    from agent.commands.common import fail
    from inference.engines.engine import EngineBuildError
    from inference.engines.engine_add import add_engine

    if backend not in (None, "cpu", "cuda", "metal"):
        fail(f"--backend {backend}: use cpu, cuda or metal")
    try:
        engine = add_engine(spec, backend)
    except EngineBuildError as exc:
        fail(str(exc))
    caps = engine.capabilities
    typer.echo(
        f"added {engine.key}: {engine.source}\n  {engine.options.backend}, {engine.version}"
        f"\n  DFlash dialect: {caps.dflash_dialect}; speculative types: {', '.join(caps.spec_types) or 'none'}"
    )


@app.command("list")
def engine_list() -> None:
    """Show the cached engine builds and their capabilities."""
    from rich.console import Console
    from rich.table import Table

    from inference.engines.engine import list_engines

    table = Table("key", "source", "backend", "version", "DFlash", "patches", "built in")
    for engine in list_engines():
        table.add_row(
            engine.key,
            f"{engine.source}\n{engine.commit[:16]}",
            engine.options.describe(),
            engine.version,
            engine.capabilities.dflash_dialect,
            ", ".join(engine.patches) or "-",
            f"{engine.build_seconds:.0f}s",
        )
    Console().print(table)
