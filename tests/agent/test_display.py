"""The terminal display of a run: model and tool text shown as the characters it is, never as Rich markup and
never as terminal control (a scripted model writes the hostile text; git, tools and display are real)."""

from __future__ import annotations

import io

import git
from rich.console import Console

from agent.config import Config
from agent.display import TerminalEvents, print_summary
from agent.workflows import run_task

HOSTILE = "the regex [/a-z]+( and [bold]x[/bold] and \x1b[2J\x1b]0;title\x07 here"
REPLIES = [
    "<write_file>\n<path>[/a-z]+(\x1b[2J.py</path>\n<content>\nX = 2\n</content>\n</write_file>",
    "<read_file>\n<path>[/nope]\x1b[31m.py</path>\n</read_file>",
    f"<finish><summary>done: {HOSTILE}</summary></finish>",
]


def test_hostile_model_text_is_printed_as_it_is(scripted, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    path = tmp_path / "r"
    repo = git.Repo.init(path, initial_branch="main")
    (path / "a.py").write_text("X = 1\n")
    repo.git.add("a.py")
    repo.index.commit("initial", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))
    buffer = io.StringIO()
    console = Console(file=buffer, width=400, color_system=None)
    result = run_task(path, "task", Config(), TerminalEvents(console), backend=scripted(REPLIES))
    print_summary(console, result)
    out = buffer.getvalue()
    assert result.run.status == "finished" and "\x1b" not in out and "\x07" not in out
    shown = "the regex [/a-z]+( and [bold]x[/bold] and \\x1b[2J\\x1b]0;title\\x07 here"
    assert "agent/task-" in out and ": [/a-z]+(\\x1b[2J.py\n" in out, "the checkpoint note names the file"
    assert "files:    [/a-z]+(\\x1b[2J.py\n" in out, "listed as named, not as git quotes it"
    assert "read_file: [/nope]\\x1b[31m.py does not exist" in out
    assert f"summary:  done: {shown}" in out
