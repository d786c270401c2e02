"""The command line: help, catalog, profiles, and one `error:` line, never a traceback, for each bad input
(no model needed)."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.core.session import read_transcript
from agent.settings.config import Config
from agent.workflows.runs import resume_run, run_task

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
    lines = {
        line.split()[1].rstrip(":"): line
        for line in result.output.splitlines()
        if line.strip().startswith(("ok", "no"))
    }
    assert lines["qwen-cpu"].strip().startswith("ok") and lines["qwen-cpu-draft"].strip().startswith("ok")
    assert lines["gemma4-31b-dflash"].strip().startswith("no")


def test_serve_prints_the_rendered_command(engine, qwen_path):
    result = runner.invoke(app, ["serve", "--profile", "qwen-cpu-ngram", "--print-args"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    assert "--spec-type ngram-simple" in result.output and "--host 127.0.0.1" in result.output


DEAD_ENDPOINT = "http://127.0.0.1:9"  # nothing listens: a run gets as far as its first model call


def make_repo(path):
    repo = git.Repo.init(path, initial_branch="main")
    (path / "a.py").write_text("x = 1\n")
    repo.git.add("a.py")
    repo.index.commit("initial", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))
    return repo


def one_error_line(result, code=1):
    """The command ended with `error: ...` and the exit code, no traceback."""
    assert result.exit_code == code, result.output
    assert result.output.startswith("error: ") and "Traceback" not in result.output, result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    return result.output


@pytest.fixture
def state(tmp_path, monkeypatch):
    """Transcripts go under tmp_path."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state" / "dflash-agent" / "runs"


def test_an_unknown_model_lists_the_ids_and_changes_nothing(tmp_path):
    repo = make_repo(tmp_path / "r")
    out = one_error_line(runner.invoke(app, ["run", "task", "--repo", str(tmp_path / "r"), "--model", "gpt-17"]))
    assert "unknown model 'gpt-17'" in out and "qwen2.5-coder-1.5b" in out
    assert [h.name for h in repo.heads] == ["main"] and repo.active_branch.name == "main"
    out = one_error_line(runner.invoke(app, ["new-project", str(tmp_path / "new"), "-p", "x", "--model", "gpt-17"]))
    assert "unknown model 'gpt-17'" in out and not (tmp_path / "new").exists()


def test_new_project_onto_a_file_is_refused(tmp_path):
    (tmp_path / "file.txt").write_text("mine")
    out = one_error_line(runner.invoke(app, ["new-project", str(tmp_path / "file.txt"), "-p", "x"]))
    assert "is not a folder" in out and (tmp_path / "file.txt").read_text() == "mine"


def test_a_repo_that_does_not_exist_is_named(tmp_path):
    out = one_error_line(runner.invoke(app, ["run", "task", "--repo", str(tmp_path / "nope")]))
    assert f"{tmp_path / 'nope'} does not exist" in out


def test_a_malformed_config_is_an_error_line(tmp_path):
    make_repo(tmp_path / "r")
    (tmp_path / "r" / ".agent").mkdir()
    (tmp_path / "r" / ".agent" / "config.toml").write_text("max_steps = [\n")
    assert "is not valid TOML" in one_error_line(runner.invoke(app, ["run", "task", "--repo", str(tmp_path / "r")]))


def test_transcripts_that_cannot_be_resumed_are_errors(tmp_path):
    missing = one_error_line(runner.invoke(app, ["run", "--resume", str(tmp_path / "gone.jsonl")]))
    assert "cannot read the transcript" in missing
    assert "cannot read the transcript" in one_error_line(runner.invoke(app, ["run", "--resume", str(tmp_path)]))
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text('{"type": "message"}\n')
    assert "not a transcript of this agent" in one_error_line(runner.invoke(app, ["run", "--resume", str(foreign)]))
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text(json.dumps({"type": "start", "workspace": str(tmp_path), "task": "t"}) + "\n{oops\n{}\n")
    assert "line 2 of" in one_error_line(runner.invoke(app, ["run", "--resume", str(damaged)]))


def test_a_transcript_cut_by_a_crash_still_resumes(scripted, tmp_path, state):
    path = tmp_path / "r"
    make_repo(path)
    write = "<write_file>\n<path>b.py</path>\n<content>\nB = 1\n</content>\n</write_file>"
    first = run_task(path, "add b", Config(), backend=scripted([write, "<finish><summary>ok</summary></finish>"]))
    transcript = Path(first.transcript)
    text = transcript.read_text()
    transcript.write_text(text[: text.rstrip("\n").rfind("\n") + 30])  # the crash cut the last line short
    result = runner.invoke(
        app, ["run", "--resume", str(transcript), "--endpoint", DEAD_ENDPOINT], env={"COLUMNS": "300"}
    )
    assert "was cut off" in result.output and "Traceback" not in result.output, result.output
    assert result.exit_code == 1 and "error: cannot reach" in result.output, "it went on as far as the model"
    backend = scripted(["<finish><summary>ok</summary></finish>"])
    resume_run(transcript, Config(), backend=backend)
    sent = backend.calls[0]["messages"]
    assert any("B = 1" in m.content for m in sent if m.role == "assistant"), "the conversation was carried over"


def test_a_failed_start_leaves_no_branch_and_gives_back_the_work(tmp_path, state):
    repo = make_repo(tmp_path / "r")
    (tmp_path / "r" / "a.py").write_text("mine\n")
    out = one_error_line(
        runner.invoke(app, ["run", "task", "--repo", str(tmp_path / "r"), "--endpoint", DEAD_ENDPOINT])
    )
    assert "cannot reach" in out and [h.name for h in repo.heads] == ["main"] and repo.active_branch.name == "main"
    assert (tmp_path / "r" / "a.py").read_text() == "mine\n" and repo.git.stash("list") == ""


def test_hostile_text_in_an_error_is_shown_as_it_is(tmp_path):
    name = tmp_path / "x[/a-z]+([bold]\x1b[2J.jsonl"
    out = one_error_line(runner.invoke(app, ["run", "--resume", str(name)]))
    assert "[/a-z]+([bold]\\x1b[2J.jsonl" in out and "\x1b" not in out


@pytest.mark.parametrize(
    "flag, env, expected",
    [
        ("read-only", "full-access", "read-only"),  # the flag wins over the environment and the config
        (None, "full-access", "full-access"),  # the environment wins over the config
        (None, None, "workspace-write"),  # the user config
    ],
)
def test_sandbox_flag_beats_environment_beats_config(tmp_path, state, monkeypatch, flag, env, expected):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("DFLASH_AGENT_SANDBOX", raising=False)
    (tmp_path / "config" / "dflash-agent").mkdir(parents=True)
    (tmp_path / "config" / "dflash-agent" / "config.toml").write_text('sandbox = "workspace-write"\n')
    make_repo(tmp_path / "r")
    args = ["run", "task", "--repo", str(tmp_path / "r"), "--endpoint", DEAD_ENDPOINT] + (
        ["--sandbox", flag] if flag else []
    )
    result = runner.invoke(app, args, env={"DFLASH_AGENT_SANDBOX": env} if env else {})
    assert result.exit_code == 1 and "cannot reach" in result.output, result.output  # after the config was used
    (transcript,) = state.glob("*.jsonl")
    assert read_transcript(transcript).start["config"]["sandbox"] == expected


def test_an_unknown_sandbox_mode_lists_the_modes(tmp_path):
    result = runner.invoke(app, ["run", "task", "--sandbox", "none"])
    assert result.exit_code == 2 and "read-only" in result.output and "full-access" in result.output
    assert "--sandbox" in runner.invoke(app, ["new-project", "--help"], env={"COLUMNS": "200"}).output


def test_a_transcript_folder_that_cannot_be_written_is_an_error_line(tmp_path, monkeypatch):
    (tmp_path / "state").write_text("a file where the state folder should be")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    repo = make_repo(tmp_path / "r")
    out = one_error_line(
        runner.invoke(app, ["run", "task", "--repo", str(tmp_path / "r"), "--endpoint", DEAD_ENDPOINT])
    )
    assert "cannot write the run's transcript" in out and "XDG_STATE_HOME" in out
    assert [h.name for h in repo.heads] == ["main"] and repo.active_branch.name == "main"


SEED_DFLASH_FLAGS = (
    "--spec-type dflash --spec-dflash-cross-ctx 1024 --host 127.0.0.1 --port 8910 -np 1 --kv-unified -ngl all "
    "--spec-draft-ngl all -b 2048 -ub 512 --ctx-size 32768 --flash-attn on --cache-ram 0 --ctx-checkpoints 8 "
    "--jinja --no-mmap --mlock "
    "--no-host --metrics --log-timestamps --log-prefix --reasoning off --temp 0.7 --top-k 64 --top-p 0.95 --min-p 0.0"
)


def _no_downloads(tmp_path, monkeypatch):
    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path / "cache"))  # no engine built, no Gemma cached
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # a download attempt would fail loudly
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    fake_ram(monkeypatch, 64 * 1024**3)  # the plans' host side, whatever this machine has free now


def fake_ram(monkeypatch, size: int) -> None:
    import inference.hardware

    monkeypatch.setattr(inference.hardware, "ram_available", lambda memory=None: size)


def test_serve_plan_fits_24_gib_and_prints_the_seed_command(tmp_path, monkeypatch):
    _no_downloads(tmp_path, monkeypatch)
    result = runner.invoke(
        app, ["serve", "--profile", "gemma4-31b-dflash", "--plan", "--gpu-memory", "24GiB", "--port", "8910"]
    )
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


def test_serve_plan_exits_1_when_the_host_side_does_not_fit_ram_and_takes_lower_values(tmp_path, monkeypatch):
    _no_downloads(tmp_path, monkeypatch)
    fake_ram(monkeypatch, 8 * 1024**3)
    argv = ["serve", "--profile", "gemma4-31b-dflash", "--plan", "--gpu-memory", "24GiB"]
    result = runner.invoke(app, argv)
    assert result.exit_code == 1, result.output
    assert (
        "does not fit host RAM: the host terms need up to 11.22 GB, this machine has 8.59 GB (available RAM)"
        in result.stdout
    )
    assert "lower --ctx-checkpoints" in result.stdout
    fewer = runner.invoke(app, [*argv, "--ctx-checkpoints", "2"])  # 2 x 1.26 GB + 1.16 GB of embeddings
    assert fewer.exit_code == 0, fewer.output
    assert "--ctx-checkpoints 2" in fewer.stdout and "host RAM at most 3.67 GB of 8.59 GB" in fewer.stdout


def test_a_malformed_profile_is_one_line_for_serve_plan_and_run(tmp_path, monkeypatch):
    _no_downloads(tmp_path, monkeypatch)
    (tmp_path / "config" / "dflash-agent").mkdir(parents=True)
    (tmp_path / "config" / "dflash-agent" / "config.toml").write_text(
        '[profiles.x]\nextends = "gemma4-31b"\nctx_size = "big"\n'
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    git_repo = make_repo(repo)
    for argv in (
        ["serve", "--profile", "x"],
        ["serve", "--profile", "x", "--plan"],
        ["run", "task", "--repo", str(repo), "--profile", "x"],
    ):
        result = runner.invoke(app, argv)
        assert result.exit_code == 1, (argv, result.output)
        assert "profile 'x'" in result.output and "field 'ctx_size'" in result.output, argv
        assert isinstance(result.exception, SystemExit), (argv, result.exception)  # a clean exit, no traceback
    assert git_repo.head.commit.message == "initial" and (repo / "a.py").read_text() == "x = 1\n"  # nothing lost


def test_serve_lists_plans_and_prints_the_vllm_and_sglang_profiles(tmp_path, monkeypatch):
    _no_downloads(tmp_path, monkeypatch)
    listed = runner.invoke(app, ["serve", "--list"], env={"COLUMNS": "250"})
    assert "gemma4-31b-dflash-vllm     vllm" in listed.stdout and "gemma4-31b-dflash-sglang   sglang" in listed.stdout
    plan = runner.invoke(app, ["serve", "--profile", "gemma4-31b-dflash-vllm", "--plan", "--gpu-memory", "80GiB"])
    assert plan.exit_code == 0, plan.output
    assert "vllm serve google/gemma-4-31B-it --host 127.0.0.1 --port 8000" in plan.stdout
    assert "docker run --gpus all" in plan.stdout and "z-lab/gemma-4-31B-it-DFlash is gated" in plan.stdout
    assert "target weights" in plan.stdout and "fits:" in plan.stdout
    small = runner.invoke(app, ["serve", "--profile", "gemma4-31b-dflash-sglang", "--plan", "--gpu-memory", "40GiB"])
    assert small.exit_code == 1 and "does not fit" in small.stdout and "raise tensor_parallel" in small.stdout
    printed = runner.invoke(app, ["serve", "--profile", "gemma4-31b-dflash-sglang", "--print-args"])
    assert printed.stdout.startswith("python -m sglang.launch_server --model-path google/gemma-4-31B-it")


def test_serve_without_the_engine_installed_prints_how_to_get_it(tmp_path, monkeypatch):
    _no_downloads(tmp_path, monkeypatch)
    monkeypatch.setenv("PATH", str(tmp_path))  # no vllm here
    result = runner.invoke(app, ["serve", "--profile", "gemma4-31b-dflash-vllm"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)  # no traceback
    assert "vLLM is not installed" in result.output and 'pip install "vllm==0.33.0"' in result.output
    assert "vllm/vllm-openai" in result.output


def test_a_malformed_gitconfig_is_one_error_line_not_a_traceback(tmp_path):
    """Git itself refuses to run with a broken ~/.gitconfig, and GitPython fails at import: the real command in
    a fresh process (in this one GitPython is already imported) says what to fix."""
    import os
    import subprocess
    import sys

    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user\n\tname = broken\n")
    repo = tmp_path / "r"
    git.Repo.init(repo)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env |= {"HOME": str(home), "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(home / ".config")}
    agent = str(Path(sys.executable).parent / "agent")
    done = subprocess.run(
        [agent, "run", "x", "--repo", str(repo), "--endpoint", "http://127.0.0.1:9/v1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: git cannot run here: fatal: bad config line 1 in file") and ".gitconfig" in line


def test_serve_plan_for_mtp_renders_for_upstream_and_fits_24_gib(tmp_path, monkeypatch):
    _no_downloads(tmp_path, monkeypatch)
    result = runner.invoke(app, ["serve", "--profile", "gemma4-31b-mtp", "--plan", "--gpu-memory", "24GiB"])
    assert result.exit_code == 0, result.output
    assert "--spec-type draft-mtp" in result.stdout and "agent engine build --source pypi-sdist" in result.stdout
    assert "draft KV cache" in result.stdout and "reads the target's KV cache" in result.stdout
    listed = runner.invoke(app, ["serve", "--list"])
    assert "gemma4-31b-mtp" in listed.stdout and "gemma4-31b-h100" in listed.stdout


def test_serve_plan_prints_the_largest_context_per_cache_type_and_takes_ctx_and_cache_overrides(tmp_path, monkeypatch):
    _no_downloads(tmp_path, monkeypatch)
    result = runner.invoke(app, ["serve", "--profile", "gemma4-31b-mtp", "--plan", "--gpu-memory", "24GiB"])
    assert result.exit_code == 0, result.output
    table = result.stdout.split("largest context that fits", 1)[1]
    sizes = {line.split()[0]: int(line.split()[1].replace(",", "")) for line in table.splitlines()[1:] if line.strip()}
    assert set(sizes) == {"f16/f16", "q8_0/q8_0", "q5_0/q4_1", "q4_0/q4_0"}
    assert sizes["f16/f16"] < sizes["q8_0/q8_0"] < sizes["q5_0/q4_1"] <= sizes["q4_0/q4_0"]
    bigger = runner.invoke(
        app,
        [
            "serve",
            "--profile",
            "gemma4-31b-mtp",
            "--plan",
            "--gpu-memory",
            "24GiB",
            "--ctx-size",
            str(sizes["f16/f16"] + 256),
            "--cache-type",
            "f16",
        ],
    )
    assert bigger.exit_code == 1 and "--ctx-size " + str(sizes["f16/f16"] + 256) in bigger.stdout
    assert "--cache-type-k f16 --cache-type-v f16" in bigger.stdout and "does not fit" in bigger.stdout
    exact = runner.invoke(
        app,
        [
            "serve",
            "--profile",
            "gemma4-31b-mtp",
            "--plan",
            "--gpu-memory",
            "24GiB",
            "--ctx-size",
            str(sizes["f16/f16"]),
            "--cache-type",
            "f16",
        ],
    )
    assert exact.exit_code == 0, exact.output


def test_ctx_size_without_a_profile_is_one_line(tmp_path, monkeypatch):
    _no_downloads(tmp_path, monkeypatch)
    result = runner.invoke(app, ["new-project", str(tmp_path / "p"), "--prompt", "x", "--ctx-size", "4096"])
    assert result.exit_code == 1 and "add --profile NAME" in result.output
    assert not (tmp_path / "p").exists()


def test_the_vllm_plan_shows_the_tool_parser_and_the_largest_context_per_kv_type(tmp_path, monkeypatch):
    _no_downloads(tmp_path, monkeypatch)
    plan = runner.invoke(app, ["serve", "--profile", "gemma4-31b-dflash-vllm", "--plan", "--gpu-memory", "80GiB"])
    assert plan.exit_code == 0, plan.output
    assert "--tool-call-parser gemma4 --enable-auto-tool-choice" in plan.stdout
    assert "lmsysorg" not in plan.stdout and "vllm/vllm-openai:v0.33.0" in plan.stdout
    table = plan.stdout.split("largest context one request may have", 1)[1].splitlines()[1:]
    bf16, fp8 = (int(line.split()[1].replace(",", "")) for line in table[:2])
    assert 32768 < bf16 < fp8  # the profile's own 32k fits; an FP8 cache holds about twice as much
