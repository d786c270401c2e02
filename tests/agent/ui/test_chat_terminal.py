"""`agent chat` through a real pseudo-terminal (pexpect): prompt_toolkit's input line, the streamed and rendered
reply, the checkpoint, /undo, Ctrl-C during a reply, /exit, then `--continue`. Once with a scripted model in the
child process (the terminal is under test), once on the real model (marked `model`; run it under the lock). And
`agent run`'s status line before the first token."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import git
import pexpect
import pytest

from agent.core.session import list_sessions, read_transcript

AGENT = str(Path(sys.executable).parent / "agent")
PROMPT = "\u203a"  # the chat's prompt character
ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]|\x1b[=>]|\r|\x08")

# The child: `agent` with its backend replaced by replies streamed in small pieces (SLOW: ~6 s, to Ctrl-C).
SCRIPTED_AGENT = """
import sys, time
from contextlib import contextmanager
from agent.ui import chat
from agent.cli import app
from inference.backends.backend import Completion, Timings

WRITE = "I will add b.py.\\n<write_file>\\n<path>b.py</path>\\n<content>\\nB = 1\\n</content>\\n</write_file>"
SLOW = "Thinking " + "very " * 60 + "slowly."
REPLIES = [WRITE, "<finish><summary>added b.py</summary></finish>", "<finish><summary>ok</summary></finish>"]

class Scripted:
    def complete(self, messages, tools=None, sampling=None, on_text=None, on_prompt=None):
        slow = "think slowly" in messages[-1].content
        text = SLOW if slow else REPLIES.pop(0) if REPLIES else "<finish><summary>nothing left</summary></finish>"
        on_prompt(1800, 1500)  # as the embedded backend tells it, before reading the prompt
        time.sleep(0.3)
        for i in range(0, len(text), 5):
            time.sleep(0.1 if text is SLOW else 0.005)
            on_text(text[i:i + 5])
        return Completion(text=text, timings=Timings(prompt_tokens=10 * len(messages), completion_tokens=5, predicted_ms=100))

@contextmanager
def session(_config):
    yield Scripted()

chat.backend_session = session
app(prog_name="agent")
"""


def spawn(argv: list[str], log: Path, timeout: int, cwd: Path | None = None) -> pexpect.spawn:
    env = {**os.environ, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "100", "LINES": "40"}
    child = pexpect.spawn(argv[0], argv[1:], env=env, encoding="utf-8", dimensions=(40, 100), timeout=timeout, cwd=cwd)
    child.logfile_read = log.open("a", encoding="utf-8")
    return child


def screen(log: Path) -> str:
    """What the terminal showed, without the escape sequences."""
    return ANSI.sub("", log.read_text(encoding="utf-8"))


def test_a_terminal_session_with_a_scripted_model(repo, tmp_path):
    script = tmp_path / "scripted_agent.py"
    script.write_text(SCRIPTED_AGENT)
    log = tmp_path / "terminal.log"
    child = spawn([sys.executable, str(script), "chat", "--repo", str(repo)], log, 60)
    child.expect(PROMPT)
    child.sendline("add b please")
    child.expect("reading 1,800 tokens \\(1,500 from cache\\) \\.\\.\\.")  # the spinner, before the reply
    child.expect("✎ b.py")  # on the raw stream: no escape sequence inside the line
    child.expect("added b.py")
    child.expect(PROMPT)
    assert (repo / "b.py").read_text() == "B = 1\n"
    session = git.Repo(repo)
    assert session.head.commit.message.startswith("agent step 1") and session.active_branch.name.startswith("agent/")
    child.sendline("/undo")
    child.expect("undid")
    child.expect(PROMPT)
    assert not (repo / "b.py").exists()
    child.sendline("think slowly")
    child.expect("very very")
    child.sendcontrol("c")
    child.expect("stopped \\(Ctrl-C\\)")
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect("continue with: agent chat --resume")
    child.expect(pexpect.EOF)
    shown = screen(log)
    assert "✎ b.py" in shown and "+B = 1" in shown and "<write_file>" not in shown
    (first,) = list_sessions(repo)
    again = spawn([sys.executable, str(script), "chat", "--repo", str(repo), "--continue"], log, 60)
    again.expect(PROMPT)
    again.sendline("/exit")
    again.expect(pexpect.EOF)
    latest = list_sessions(repo)[0]
    assert latest.id != first.id and latest.kind == "chat"
    resumed = read_transcript(latest.path).messages
    assert any("add b please" in m.content for m in resumed), "the earlier conversation came back"


def test_agent_alone_on_a_terminal_opens_a_chat_here(repo, tmp_path):
    script = tmp_path / "scripted_agent.py"
    script.write_text(SCRIPTED_AGENT)
    child = spawn([sys.executable, str(script)], tmp_path / "terminal.log", 60, cwd=repo)
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    (only,) = list_sessions(repo)
    assert only.kind == "chat" and f"session id {only.id}" in screen(tmp_path / "terminal.log")


# `agent run` on a terminal whose model takes a while before its first token (as loading and reading the prompt do).
SCRIPTED_RUN = """
import time
from contextlib import contextmanager
from agent.workflows import runs as workflows
from agent.cli import app
from inference.backends.backend import Completion, Timings

REPLIES = ["<write_file>\\n<path>b.py</path>\\n<content>\\nB = 1\\n</content>\\n</write_file>", "<finish><summary>added b.py</summary></finish>"]

class Scripted:
    def complete(self, messages, tools=None, sampling=None, on_text=None, on_prompt=None):
        time.sleep(0.6)  # nothing streams yet: the status line must say why
        on_prompt(1800 + 100 * (len(messages) - 2), 0 if len(messages) == 2 else 1800)  # then: how big the prompt is
        time.sleep(0.6)
        text = REPLIES.pop(0)
        on_text(text)
        return Completion(text=text, timings=Timings(prompt_tokens=10, completion_tokens=5, predicted_ms=100))

@contextmanager
def session(_config):
    yield Scripted()

workflows.backend_session = session
app(prog_name="agent")
"""


def test_a_run_on_a_terminal_shows_a_status_line_until_the_first_token(repo, tmp_path):
    script = tmp_path / "scripted_run.py"
    script.write_text(SCRIPTED_RUN)
    log = tmp_path / "terminal.log"
    child = spawn([sys.executable, str(script), "run", "add b", "--repo", str(repo)], log, 60)
    child.expect("then reading the prompt")  # before the first token: not a blank screen
    child.expect("step 1: reading 1,800 tokens \\.\\.\\.")  # the backend knows the prompt's size: said
    child.expect("step 1 ")
    child.expect("step 2: the model is reading the results")
    child.expect("step 2: reading 2,000 tokens \\(1,800 from cache\\) \\.\\.\\.")
    child.expect("finished")
    child.expect(pexpect.EOF)
    assert (repo / "b.py").read_text() == "B = 1\n"


@pytest.mark.model
def test_a_terminal_session_on_the_real_model(repo, tmp_path, qwen_path):
    """Ask for a small change, see it streamed and committed, /undo, /compact (its cost and saving are shown),
    /exit, then --continue. The screen is kept as terminal.log (docs/chat.md shows one)."""
    log = tmp_path / "terminal.log"
    child = spawn([AGENT, "chat", "--repo", str(repo), "--max-steps", "4"], log, 900)
    child.expect(PROMPT)
    child.sendline("Create a file hello.txt whose only line is: hi")
    child.expect("✎ hello.txt")
    child.expect("turns? · ")
    child.expect(PROMPT)
    assert (repo / "hello.txt").read_text().strip() == "hi"
    assert "hello.txt" in git.Repo(repo).head.commit.stats.files
    child.sendline("/undo")
    child.expect("undid")
    child.expect(PROMPT)
    assert not (repo / "hello.txt").exists()
    child.sendline("/compact")
    child.expect("compacted: the (\\d+)-token conversation is now a (\\d+)-token summary")
    before, summary = int(child.match.group(1)), int(child.match.group(2))
    child.expect(PROMPT)
    child.sendline("/cost")
    child.expect("model turns? ")
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF, timeout=120)
    assert 0 < summary < before
    again = spawn([AGENT, "chat", "--repo", str(repo), "--continue"], log, 600)
    again.expect(PROMPT)
    again.sendline("/exit")
    again.expect(pexpect.EOF, timeout=120)
    resumed = read_transcript(list_sessions(repo)[0].path).messages
    assert [m.role for m in resumed][:2] == ["system", "user"] and "Summary of this session" in resumed[1].content
