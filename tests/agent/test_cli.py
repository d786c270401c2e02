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


SEED_DFLASH_FLAGS = (
    "--spec-type dflash --spec-dflash-cross-ctx 1024 --host 127.0.0.1 --port 8910 -np 1 --kv-unified -ngl all "
    "--spec-draft-ngl all -b 2048 -ub 512 --ctx-size 32768 --flash-attn on --cache-ram 0 --jinja --no-mmap --mlock "
    "--no-host --metrics --log-timestamps --log-prefix --reasoning off --temp 0.7 --top-k 64 --top-p 0.95 --min-p 0.0"
)


def _no_downloads(tmp_path, monkeypatch):
    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path / "cache"))  # no engine built, no Gemma cached
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # a download attempt would fail loudly
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def test_serve_plan_fits_24_gib_and_prints_the_seed_command(tmp_path, monkeypatch):
    _no_downloads(tmp_path, monkeypatch)
    result = runner.invoke(app, ["serve", "--profile", "gemma4-31b-dflash", "--plan", "--gpu-memory", "24GiB",
                                 "--port", "8910"])
    assert result.exit_code == 0, result.output
    assert SEED_DFLASH_FLAGS in result.stdout and "BeeLlama v0.2.0" in result.stdout
    assert "target KV cache" in result.stdout and "fits:" in result.stdout
    assert not (tmp_path / "cache" / "models").exists() or not any((tmp_path / "cache" / "models").iterdir())


def test_serve_plan_on_16_gib_exits_1_and_says_what_does_not_fit(tmp_path, monkeypatch):
    _no_downloads(tmp_path, monkeypatch)
    result = runner.invoke(app, ["serve", "--profile", "gemma4-31b-dflash", "--plan", "--gpu-memory", "16GiB"])
    assert result.exit_code == 1
    assert "does not fit" in result.stdout and "target weights alone" in result.stdout
    printed = runner.invoke(app, ["serve", "--profile", "gemma4-31b", "--print-args"])
    assert printed.exit_code == 0 and "--cache-type-k q5_0" in printed.stdout  # nothing downloaded, no check


def test_a_malformed_profile_is_one_line_for_serve_plan_and_run(tmp_path, monkeypatch):
    _no_downloads(tmp_path, monkeypatch)
    (tmp_path / "config" / "dflash-agent").mkdir(parents=True)
    (tmp_path / "config" / "dflash-agent" / "config.toml").write_text(
        '[profiles.x]\nextends = "gemma4-31b"\nctx_size = "big"\n')
    import git

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("a\n")
    git_repo = git.Repo.init(repo)
    git_repo.index.add(["a.txt"])
    git_repo.index.commit("init", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))
    for argv in (["serve", "--profile", "x"], ["serve", "--profile", "x", "--plan"],
                 ["run", "task", "--repo", str(repo), "--profile", "x"]):
        result = runner.invoke(app, argv)
        assert result.exit_code == 1, (argv, result.output)
        assert "profile 'x'" in result.output and "field 'ctx_size'" in result.output, argv
        assert isinstance(result.exception, SystemExit), (argv, result.exception)  # a clean exit, no traceback
    assert git_repo.head.commit.message == "init" and (repo / "a.txt").read_text() == "a\n"  # nothing lost
