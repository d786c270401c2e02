"""`agent eval publish`: results folders into one data file, rendered into a document's results table."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from agent.cli import app
from agent.evals.report import RESULTS_END, PublishedResults, results_table
from agent.evals.runner import EvalRecord, EvalSettings

ROOT = Path(__file__).parents[3]
DOC = "# Results\n\nBefore.\n\n<!-- eval-results: old -->\n| stale |\n<!-- /eval-results -->\n\nAfter.\n"


def results_folder(path: Path, mode: str, passed: list[bool]) -> Path:
    path.mkdir(parents=True)
    settings = EvalSettings(
        suite="examples/eval/tasks", mode=mode, backend="http://127.0.0.1:8080/v1", max_steps=25, temperature=0.2
    )
    (path / "settings.json").write_text(settings.model_dump_json())
    records = [
        EvalRecord(
            task=f"t{i}",
            seed=1,
            mode=mode,
            passed=ok,
            status="finished",
            wall_seconds=30.0,
            tests_passed=True,
            tests_ran=i != 0,
        )
        for i, ok in enumerate(passed)
    ]
    (path / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))
    return path


def test_publish_writes_the_data_and_renders_the_table_between_the_markers(tmp_path):
    data, doc = tmp_path / "bench" / "eval-results.json", tmp_path / "eval.md"
    doc.write_text(DOC)
    agent = results_folder(tmp_path / "tasks-agent", "agent", [True, True, False, True])
    run = CliRunner().invoke(app, ["eval", "publish", str(agent), "--data", str(data), "--doc", str(doc)])
    assert run.exit_code == 0, run.output
    text = doc.read_text()
    assert text.startswith("# Results\n\nBefore.\n\n<!-- eval-results: rendered from ") and text.endswith("After.\n")
    assert "| stale |" not in text and text.count(RESULTS_END) == 1
    # four runs, 3 passed; t0 ran no test (vacuous); of the three finished with tests passing, two were right
    assert (
        "| tasks-agent: agent · http://127.0.0.1:8080/v1 | tasks | 4 | 3 (75.0%) | 75% | 1 | 67% (2/3) | 40 s |" in text
    )

    peer = results_folder(tmp_path / "tasks-peer", "command", [False, False])
    again = results_folder(tmp_path / "again" / "tasks-agent", "agent", [True])  # the same folder name: replaced
    run = CliRunner().invoke(app, ["eval", "publish", str(peer), str(again), "--data", str(data), "--doc", str(doc)])
    assert run.exit_code == 0, run.output
    rows = PublishedResults.model_validate_json(data.read_text()).rows
    assert [(r.folder, r.summary.runs) for r in rows] == [("tasks-peer", 2), ("tasks-agent", 1)]
    assert doc.read_text().count("| tasks-") == 2


def test_publish_refuses_a_document_without_markers_and_a_folder_without_settings(tmp_path):
    doc = tmp_path / "eval.md"
    doc.write_text("# no table here\n")
    run = CliRunner().invoke(app, ["eval", "publish", "--data", str(tmp_path / "d.json"), "--doc", str(doc)])
    assert run.exit_code == 1 and "has no eval-results markers" in run.output
    run = CliRunner().invoke(app, ["eval", "publish", str(tmp_path), "--doc", str(doc)])
    assert run.exit_code == 1 and "not a results folder" in run.output


def test_docs_eval_md_shows_what_the_published_data_holds():
    results = PublishedResults.model_validate_json((ROOT / "docs" / "bench" / "eval-results.json").read_text())
    assert results_table(results) in (ROOT / "docs" / "eval.md").read_text(), "run `agent eval publish`"
