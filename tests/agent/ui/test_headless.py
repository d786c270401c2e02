"""`agent run --output-format json|stream-json`: what programs read on stdout, parsed line by line. The loop
logic runs on a scripted model (agent/workflows/runs.py's backend is replaced); git, files and the CLI are real."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.workflows import runs as workflows

runner = CliRunner()
AGENT = str(Path(sys.executable).parent / "agent")
DEAD_ENDPOINT = "http://127.0.0.1:9"
WRITE = "<write_file>\n<path>b.py</path>\n<content>\nB = 1\n</content>\n</write_file>"
FINISH = "<finish><summary>added b.py</summary></finish>"


@pytest.fixture
def model(scripted, monkeypatch):
    """The run's backend replies with `model.replies` (set by the test)."""
    backend = scripted([])

    @contextmanager
    def session(_config):
        yield backend

    monkeypatch.setattr(workflows, "backend_session", session)
    return backend


def events(stdout: str) -> list[dict]:
    lines = stdout.splitlines()
    assert lines, "nothing on stdout"
    return [json.loads(line) for line in lines]  # every line is one whole JSON object


def test_stream_json_is_one_event_per_line_in_order(repo, model):
    model.replies = [WRITE, FINISH]
    result = runner.invoke(app, ["run", "add b", "--repo", str(repo), "--output-format", "stream-json"])
    assert result.exit_code == 0, result.output
    got = events(result.stdout)
    kinds = [e["type"] for e in got]
    assert kinds[0] == "start" and got[0]["task"] == "add b" and kinds[-1] == "end"
    assert [k for k in kinds if k not in ("text", "note")] == [
        "start",
        "tool_call",
        "tool_result",
        "step",
        "tool_call",
        "tool_result",
        "step",
        "end",
    ]
    call = next(e for e in got if e["type"] == "tool_call")
    assert call["name"] == "write_file" and call["arguments"]["path"] == "b.py" and call["step"] == 1
    assert "".join(e["text"] for e in got if e["type"] == "text") == WRITE + FINISH
    step = next(e for e in got if e["type"] == "step")
    assert step["timings"]["completion_tokens"] == 5
    end = got[-1]["result"]
    assert end["run"]["status"] == "finished" and end["files"] == ["b.py"] and end["session"] in end["transcript"]


def test_a_failure_still_ends_with_an_object(repo):
    result = runner.invoke(
        app, ["run", "t", "--repo", str(repo), "--endpoint", DEAD_ENDPOINT, "--output-format", "stream-json"]
    )
    assert result.exit_code == 1
    got = events(result.stdout)
    assert got[0]["type"] == "start" and got[-1]["type"] == "error" and "cannot reach" in got[-1]["message"]
    result = runner.invoke(app, ["run", "t", "--repo", str(repo), "--endpoint", DEAD_ENDPOINT, "--json"])
    final = json.loads(result.stdout)
    assert result.exit_code == 1 and final["status"] == "error" and "cannot reach" in final["error"]
    assert "error: " in result.stderr


def test_a_bug_also_ends_with_the_final_object(repo, model, monkeypatch):
    """An unexpected exception (not a user error) mid-run: the final object on stdout, then raised on (its
    traceback on stderr), with a non-zero exit."""

    def broken(*_args, **_kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(model, "complete", broken)
    result = runner.invoke(app, ["run", "t", "--repo", str(repo), "--output-format", "stream-json"])
    assert result.exit_code != 0 and isinstance(result.exception, RuntimeError)
    got = events(result.stdout)
    assert got[0]["type"] == "start" and got[-1]["type"] == "error"
    assert got[-1]["exit_code"] == 1 and "internal error: RuntimeError: boom" in got[-1]["message"]
    result = runner.invoke(app, ["run", "t", "--repo", str(repo), "--json"])
    final = json.loads(result.stdout)
    assert result.exit_code != 0 and isinstance(result.exception, RuntimeError)
    assert final["status"] == "error" and "RuntimeError: boom" in final["error"]


def test_failures_before_the_run_end_with_the_object_too(repo):
    result = runner.invoke(app, ["run", "--repo", str(repo), "--output-format", "json"], input="")
    assert result.exit_code == 1 and "say what to do" in json.loads(result.stdout)["error"]
    result = runner.invoke(app, ["run", "--resume", "no-such-session", "--output-format", "stream-json"])
    assert result.exit_code == 1 and events(result.stdout)[-1]["type"] == "error"


def test_the_task_comes_on_stdin(repo, model):
    model.replies = [FINISH]
    for args in (["run", "-"], ["run"]):  # `-`, or no task while stdin is not a terminal
        result = runner.invoke(app, [*args, "--repo", str(repo), "--output-format", "json"], input="say hello\n")
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["run"]["status"] == "finished"
        model.replies = [FINISH]
    assert "say hello" in model.calls[0]["messages"][1].content


def test_an_empty_stdin_is_a_clear_error(repo):
    result = runner.invoke(app, ["run", "--repo", str(repo)], input="")
    assert result.exit_code == 1 and result.output.startswith("error: say what to do")


def test_json_is_the_alias_of_output_format_json(repo, model):
    model.replies = [FINISH]
    result = runner.invoke(app, ["run", "t", "--repo", str(repo), "--json"])
    assert json.loads(result.stdout)["run"]["summary"].startswith("added b.py")
    clash = runner.invoke(app, ["run", "t", "--repo", str(repo), "--json", "--output-format", "stream-json"])
    assert clash.exit_code == 1 and "disagree" in clash.output


@pytest.mark.model
def test_stream_json_on_the_real_model(repo, qwen_path):
    """The real model, the real CLI process: every stdout line parses, the model's tokens come as `text` events,
    each model turn as a `step` with the engine's timings, and the last line is the final object."""
    done = subprocess.run(
        [
            AGENT,
            "run",
            "Create a file hello.txt whose only line is: hi",
            "--repo",
            str(repo),
            "--max-steps",
            "3",
            "--output-format",
            "stream-json",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    got = events(done.stdout)
    kinds = [e["type"] for e in got]
    assert kinds[0] == "start" and kinds[-1] == "end" and done.returncode in (0, 2), done.stderr[-2000:]
    assert kinds.count("text") > 5, "tokens stream as they come"
    steps = [e for e in got if e["type"] == "step"]
    assert steps and all(s["timings"]["prompt_tokens"] > 0 for s in steps)
    assert got[-1]["result"]["run"]["stats"]["steps"] == len(steps)
