"""Sessions: each run is a transcript with an id; they are listed, and resumed by id (or by path), also when a
crash cut the last line. Runs on a scripted model; git, files and transcripts are real."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.core.errors import UserError
from agent.core.session import find_session, list_sessions, runs_dir
from agent.settings.config import Config
from agent.workflows.runs import run_task

runner = CliRunner()
DEAD_ENDPOINT = "http://127.0.0.1:9"
FINISH = "<finish><summary>ok</summary></finish>"


def test_sessions_are_listed_newest_first_with_how_they_ended(repo, tmp_path, scripted):
    first = run_task(repo, "first task", Config(), backend=scripted([FINISH]))
    second = run_task(repo, "second task", Config(max_steps=1), backend=scripted(["no call"]))
    found = list_sessions()
    assert [s.task for s in found] == ["second task", "first task"]
    assert [s.status for s in found] == ["step_limit", "finished"] and {s.kind for s in found} == {"run"}
    assert found[1].id == first.transcript.rsplit("/", 1)[1].removesuffix(".jsonl")
    assert list_sessions(repo) == found and list_sessions(tmp_path) == []
    shown = runner.invoke(app, ["sessions", "list"], env={"COLUMNS": "300"})
    assert shown.exit_code == 0 and found[0].id in shown.output and "step_limit" in shown.output
    narrow = runner.invoke(app, ["sessions", "list"], env={"COLUMNS": "80"})
    assert found[0].id in narrow.output and found[1].id in narrow.output, "an id is never cut on a narrow terminal"
    assert (
        found[0].path == find_session(found[0].id) == find_session(found[0].id[:-3]) == find_session(second.transcript)
    )


def test_a_session_cut_by_a_crash_is_listed_as_unfinished(repo, scripted):
    done = run_task(repo, "t", Config(), backend=scripted([FINISH]))
    path = find_session(done.transcript)
    text = path.read_text()
    path.write_text(text[: text.rstrip("\n").rfind("\n") + 30])  # the end event, cut short
    (only,) = list_sessions()
    assert only.status is None
    assert "unfinished" in runner.invoke(app, ["sessions", "list"], env={"COLUMNS": "300"}).output


def test_run_resume_takes_a_session_id(repo, scripted):
    run_task(repo, "t", Config(max_steps=1), backend=scripted(["no call"]))
    session = list_sessions()[0].id
    result = runner.invoke(app, ["run", "--resume", session, "--endpoint", DEAD_ENDPOINT])
    assert result.exit_code == 1 and "cannot reach" in result.output, "it found the session and went on to the model"


def test_unknown_or_ambiguous_ids_are_one_error_line(repo, scripted):
    assert runner.invoke(app, ["sessions", "list"]).output.startswith("no sessions yet")
    run_task(repo, "t", Config(), backend=scripted([FINISH]))
    run_task(repo, "t", Config(), backend=scripted([FINISH]))
    with pytest.raises(UserError, match="neither a transcript file nor a session id"):
        find_session("nope")
    with pytest.raises(UserError, match="matches several sessions"):
        find_session(sorted(runs_dir().glob("*.jsonl"))[0].name[:4])
    result = runner.invoke(app, ["run", "--resume", "nope"])
    assert result.exit_code == 1 and result.output.startswith("error: 'nope' is neither")


def test_sessions_list_shows_odd_transcripts_without_a_traceback(repo, scripted):
    """A transcript is a file: a start time that is not a number, and markup in any field, are shown as they are."""
    import json

    done = run_task(repo, "t", Config(), backend=scripted([FINISH]))
    path = find_session(done.transcript)
    lines = path.read_text().splitlines()
    for number, (when, field) in enumerate([("soon", "[/x]"), (float("nan"), "[bold]"), (1e300, "x"), ([1], "y")]):
        start = json.loads(lines[0]) | {"time": when, "workflow": field, "task": f"{field} task [/x]"}
        end = {"type": "end", "result": {"status": "[/x]" if number == 0 else {"nested": 1}}}
        (path.parent / f"odd-{number}.jsonl").write_text(json.dumps(start) + "\n" + json.dumps(end) + "\n")
    (path.parent / "odd-[red]id.jsonl").write_text(lines[0] + "\n")
    shown = runner.invoke(app, ["sessions", "list"], env={"COLUMNS": "300"})
    assert shown.exit_code == 0 and "Traceback" not in shown.output, shown.output
    assert "[/x] task [/x]" in shown.output and "odd-[red]id" in shown.output and "[bold]" in shown.output
    assert len(list_sessions()) == 6
