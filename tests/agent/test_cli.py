"""The command line: help, catalog, profiles, and clear errors for bad input (no model needed)."""

from __future__ import annotations

from typer.testing import CliRunner

from agent.cli import app

runner = CliRunner()


def test_help_lists_every_command():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ["new-project", "run", "models", "engine", "serve", "doctor"]:
        assert command in result.output


def test_models_list_shows_the_catalog():
    result = runner.invoke(app, ["models", "list"], env={"COLUMNS": "250"})
    assert result.exit_code == 0
    for model_id in ["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "gemma4-31b", "gemma4-31b-dflash"]:
        assert model_id in result.output


def test_unknown_model_is_a_clear_error():
    result = runner.invoke(app, ["models", "pull", "gpt-17"])
    assert result.exit_code == 1 and "unknown model 'gpt-17'" in result.output and "known models" in result.output


def test_serve_lists_profiles_and_refuses_unknown_ones():
    listed = runner.invoke(app, ["serve", "--list"])
    assert listed.exit_code == 0 and "gemma4-31b-dflash" in listed.output and "qwen-cpu-draft" in listed.output
    unknown = runner.invoke(app, ["serve", "--profile", "nope", "--print-args"])
    assert unknown.exit_code == 1 and "unknown profile 'nope'" in unknown.output


def test_new_project_refuses_a_non_empty_folder(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    result = runner.invoke(app, ["new-project", str(tmp_path), "--prompt", "x"])
    assert result.exit_code == 1 and "not empty" in result.output
    assert (tmp_path / "keep.txt").read_text() == "mine"


def test_run_refuses_a_folder_that_is_not_a_repository(tmp_path):
    result = runner.invoke(app, ["run", "do something", "--repo", str(tmp_path)])
    assert result.exit_code == 1 and "not a git repository" in result.output


def test_doctor_reports_what_can_run_here(engine, qwen_path):
    from inference.fetch import fetch_model
    from inference.models import QWEN_0_5B

    fetch_model(QWEN_0_5B, show_progress=False)
    result = runner.invoke(app, ["doctor"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "cores" in result.output and engine.key in result.output
    lines = {line.split()[1].rstrip(":"): line for line in result.output.splitlines() if line.strip().startswith(("ok", "no"))}
    assert lines["qwen-cpu"].strip().startswith("ok") and lines["qwen-cpu-draft"].strip().startswith("ok")
    assert lines["gemma4-31b-dflash"].strip().startswith("no")


def test_serve_prints_the_rendered_command(engine, qwen_path):
    result = runner.invoke(app, ["serve", "--profile", "qwen-cpu-ngram", "--print-args"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    assert "--spec-type ngram-simple" in result.output and "--host 127.0.0.1" in result.output
