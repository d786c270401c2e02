"""What a suite run comes to: per task and in total, as JSON, a Markdown table and a PNG chart; and several
results folders side by side (agent vs single reply, one profile vs another, a peer agent)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel

from agent.core.errors import UserError
from agent.evals import metrics
from agent.evals.runner import EvalRecord, EvalSettings


class EvalSummary(BaseModel):
    label: str
    runs: int
    passed: int
    pass_rate: float
    per_seed: dict[int, float]  # pass rate at each seed
    mean_steps: float
    completion_tokens: int
    tokens_per_second: float
    cache_reuse: float  # prompt tokens served from the KV cache, of all prompt tokens
    draft_n: int
    draft_accepted: int
    wall_seconds: float
    wall_per_solved: float | None  # what one solved task costs the user in wall time
    # finished while no test ran or a file the task names was missing (agent/evals/metrics.py)
    vacuous_finishes: int = 0
    finished_with_tests: int = 0  # reported finished with tests that ran and passed
    finished_right: int = 0  # of those, the runs whose hidden check passed
    finish_precision: float | None = None  # of those, the share whose hidden check passed


def summarize(label: str, records: list[EvalRecord]) -> EvalSummary:
    runs, passed = len(records), sum(r.passed for r in records)
    by_seed: dict[int, list[bool]] = defaultdict(list)
    for r in records:
        by_seed[r.seed].append(r.passed)
    prompt = sum(r.prompt_tokens for r in records)
    generation = sum(r.generation_seconds for r in records)
    wall = sum(r.wall_seconds for r in records)
    precise, finished = metrics.finish_precision(records)
    return EvalSummary(
        label=label,
        runs=runs,
        passed=passed,
        pass_rate=passed / runs if runs else 0.0,
        per_seed={seed: sum(v) / len(v) for seed, v in sorted(by_seed.items())},
        mean_steps=sum(r.steps for r in records) / runs if runs else 0.0,
        completion_tokens=sum(r.completion_tokens for r in records),
        tokens_per_second=sum(r.completion_tokens for r in records) / generation if generation else 0.0,
        cache_reuse=sum(r.cached_prompt_tokens for r in records) / prompt if prompt else 0.0,
        draft_n=sum(r.draft_n for r in records),
        draft_accepted=sum(r.draft_accepted for r in records),
        wall_seconds=wall,
        wall_per_solved=wall / passed if passed else None,
        vacuous_finishes=sum(metrics.vacuous_finish(r) for r in records),
        finished_with_tests=finished,
        finished_right=precise,
        finish_precision=precise / finished if finished else None,
    )


def label_of(settings: EvalSettings) -> str:
    who = (
        Path(settings.agent_command.split()[-1]).stem
        if settings.mode == "command" and settings.agent_command
        else settings.mode
    )
    notes = " + notes" if settings.one_shot_notes else ""
    return f"{who}{notes} · {settings.backend}"


def write_report(out: Path, settings: EvalSettings, records: list[EvalRecord]) -> dict[str, Path]:
    """summary.json, report.md (totals, then one row per task) and chart.png in `out`."""
    summary = summarize(label_of(settings), records)
    paths = {"json": out / "summary.json", "markdown": out / "report.md", "chart": out / "chart.png"}
    paths["json"].write_text(
        json.dumps({"settings": settings.model_dump(), "summary": summary.model_dump()}, indent=2), encoding="utf-8"
    )
    lines = [
        f"# {settings.suite}: {summary.label}",
        "",
        totals_table([summary]),
        "",
        "| task | seed | passed | end | own tests | one-shot answers | steps | tokens | wall s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(records, key=lambda r: (r.task, r.seed)):
        end = (r.error or r.status) + (" (vacuous)" if metrics.vacuous_finish(r) else "")
        lines.append(
            f"| {r.task} | {r.seed} | {'yes' if r.passed else 'no'} | {end} | {own_tests(r)} | {r.one_shots} "
            f"| {r.steps} | {r.completion_tokens} | {r.wall_seconds:.0f} |"
        )
    paths["markdown"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    chart([summary], paths["chart"], settings.suite)
    return paths


def own_tests(record: EvalRecord) -> str:
    """What the run's own tests said at the end: passed, failed, none ran; - where not recorded."""
    if record.tests_ran is None:
        return "-"
    if not record.tests_ran:
        return "none ran"
    missing = f"; missing {', '.join(record.named_missing)}" if record.named_missing else ""
    return ("passed" if record.tests_passed else "failed") + missing


def precision(summary: EvalSummary) -> str:
    """Finish precision as a share and a count ("75% (6/8)"), or - when no run finished with tests passing."""
    if summary.finish_precision is None:
        return "-"
    return f"{summary.finish_precision:.0%} ({summary.finished_right}/{summary.finished_with_tests})"


def totals_table(summaries: list[EvalSummary]) -> str:
    """One row per results folder, side by side."""
    rows = [
        "| run | passed | pass rate | per seed | vacuous finishes | finish precision | steps/task | tok/s "
        "| cache reuse | drafted/accepted | wall total | wall per solved |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summaries:
        seeds = " ".join(f"{rate:.0%}" for rate in s.per_seed.values())
        drafted = f"{s.draft_n}/{s.draft_accepted}" if s.draft_n else "-"
        solved = f"{s.wall_per_solved:.0f} s" if s.wall_per_solved is not None else "-"
        rows.append(
            f"| {s.label} | {s.passed}/{s.runs} | {s.pass_rate:.1%} | {seeds} | {s.vacuous_finishes} | {precision(s)} "
            f"| {s.mean_steps:.1f} "
            f"| {s.tokens_per_second:.1f} | {s.cache_reuse:.1%} | {drafted} | {s.wall_seconds / 60:.1f} min "
            f"| {solved} |"
        )
    return "\n".join(rows)


def chart(summaries: list[EvalSummary], path: Path, title: str) -> None:
    """Pass rate and wall time per solved task, one bar per run: what a user weighs against each other."""
    from inference.extras import pyplot

    plt = pyplot()

    labels = [s.label.replace(": ", ":\n").replace(" · ", "\n") for s in summaries]  # one part per line
    fig, (left, right) = plt.subplots(1, 2, figsize=(max(8, 3 * len(labels)), 4.5))
    passed = left.bar(labels, [100 * s.pass_rate for s in summaries], color="tab:green")
    left.bar_label(passed, labels=[f"{s.passed}/{s.runs}" for s in summaries], fontsize=8)
    left.set_ylim(0, 105)
    left.set_ylabel("pass rate (%)")
    wall = right.bar(labels, [s.wall_per_solved or 0 for s in summaries], color="tab:blue")
    right.bar_label(
        wall,
        labels=[f"{s.wall_per_solved:.0f} s" if s.wall_per_solved else "none solved" for s in summaries],
        fontsize=8,
    )
    right.set_ylabel("wall seconds per solved task")
    for axis in (left, right):
        axis.tick_params(axis="x", labelsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# --- published results: one data file, rendered into a document's table -------------------------------------

RESULTS_BEGIN = "<!-- eval-results: rendered from {data} by `agent eval publish`; edit the data, not this table -->"
RESULTS_END = "<!-- /eval-results -->"


class PublishedRow(BaseModel):
    folder: str  # the results folder's name: publishing it again replaces its row
    settings: EvalSettings
    summary: EvalSummary


class PublishedResults(BaseModel):
    rows: list[PublishedRow] = []


def publish_rows(data: Path, rows: list[PublishedRow]) -> PublishedResults:
    """`data` (created when missing) with `rows` in place of those of the same folders; written back."""
    results = PublishedResults.model_validate_json(data.read_text(encoding="utf-8")) if data.is_file() else None
    kept = [r for r in (results.rows if results else []) if r.folder not in {row.folder for row in rows}]
    published = PublishedResults(rows=kept + rows)
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text(published.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return published


def results_table(results: PublishedResults) -> str:
    """The published rows as one Markdown table: what a user weighs (pass rate, whether "finished" can be
    trusted, wall time per solved task)."""
    lines = [
        "| run | suite | runs | passed | per seed | vacuous finishes | finish precision | wall per solved "
        "| wall total |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in results.rows:
        s = row.summary
        seeds = " ".join(f"{rate:.0%}" for rate in s.per_seed.values())
        solved = f"{s.wall_per_solved:.0f} s" if s.wall_per_solved is not None else "-"
        lines.append(
            f"| {row.folder}: {s.label} | {Path(row.settings.suite).name} | {s.runs} | {s.passed} ({s.pass_rate:.1%}) "
            f"| {seeds} | {s.vacuous_finishes} | {precision(s)} | {solved} | {s.wall_seconds / 60:.1f} min |"
        )
    if not results.rows:
        lines.append("| not measured yet | | | | | | | | |")
    return "\n".join(lines)


def render_into(doc: Path, data: Path, results: PublishedResults) -> None:
    """Replace the table between the document's eval-results markers with the published rows."""
    text = doc.read_text(encoding="utf-8")
    begin, end = RESULTS_BEGIN.format(data=data.as_posix()), RESULTS_END
    start, stop = text.find("<!-- eval-results:"), text.find(end)
    if start < 0 or stop < start:
        raise UserError(f"{doc} has no eval-results markers; add the lines `{begin}` and `{end}` where the table goes")
    doc.write_text(text[:start] + f"{begin}\n{results_table(results)}\n" + text[stop:], encoding="utf-8")
