"""The terminal display of a run: model and tool text shown as the characters it is, never as Rich markup and
never as terminal control (a scripted model writes the hostile text; git, tools and display are real)."""

from __future__ import annotations

import io

import git
from rich.console import Console

from agent.settings.config import Config
from agent.ui.display import TerminalEvents, print_summary, reading
from agent.workflows.runs import run_task

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


def test_the_status_line_says_how_big_the_prompt_is(scripted, repo):
    """A backend that knows the prompt's size before reading it tells the loop, which tells the display (through
    the checkpoint events); the status line then says it. A backend that cannot know keeps the line as it was."""
    shown: list[str] = []

    class Shown(TerminalEvents):
        def waiting(self, what: str) -> None:
            shown.append(what)
            super().waiting(what)

    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    events = Shown(console)
    events.waiting("loading the model, then reading the prompt ...")
    run_task(repo, "task", Config(), events, backend=scripted([REPLIES[0], REPLIES[2]]))
    events.quiet()
    # the scripted backend tells 10 tokens a message, none from cache (as its timings say)
    assert shown[1:] == [
        "step 1: reading 20 tokens ...",
        "step 2: the model is reading the results ...",
        "step 2: reading 40 tokens ...",
    ]
    assert reading(1800, 1500) == "reading 1,800 tokens (1,500 from cache) ..."
    assert reading(1800, 0) == "reading 1,800 tokens ..."
    events = TerminalEvents(console)
    events.on_prompt(12_345, 12_000)
    assert (
        events.status is not None
        and events.status.status.plain == "step 1: reading 12,345 tokens (12,000 from cache) ..."
    )
    events.quiet()
