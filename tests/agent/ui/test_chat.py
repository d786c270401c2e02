"""`agent chat` on a scripted model (the loop logic; agent/commands/chat.py's terminal is covered by
test_chat_terminal.py on the real model): follow-ups continue one conversation, changes are shown as diffs and
committed, /undo, /compact, /clear, Ctrl-C, --continue. Git, files and transcripts are real."""

from __future__ import annotations

import io
from contextlib import contextmanager

import git
from rich.console import Console
from typer.testing import CliRunner

from agent.cli import app
from agent.core.session import list_sessions, read_transcript
from agent.settings.config import Config
from agent.ui import chat as chat_module
from agent.ui.chat import UNDONE, open_chat
from agent.ui.chat_display import ChatDisplay
from agent.ui.chat_repl import repl

runner = CliRunner()
WRITE_B = "I will add b.py.\n<write_file>\n<path>b.py</path>\n<content>\nB = 1\n</content>\n</write_file>"
WRITE_C = "<write_file>\n<path>c.py</path>\n<content>\nC = 2\n</content>\n</write_file>"
FINISH = "<finish><summary>done: {}</summary></finish>"


def lines(*items: str):
    queue = list(items)
    return lambda: queue.pop(0) if queue else None


def chat(repo, backend, *inputs: str, resume=None) -> tuple[str, chat_module.ChatSession]:
    out = io.StringIO()
    console = Console(file=out, width=120)
    with open_chat(repo, Config(), ChatDisplay(console, repo), resume, backend=backend) as session:
        repl(session, lines(*inputs), console)
    return out.getvalue(), session


def test_a_follow_up_continues_the_same_conversation(repo, scripted):
    backend = scripted([WRITE_B, FINISH.format("b"), WRITE_C, FINISH.format("c")])
    shown, session = chat(repo, backend, "add b", "now add c")
    first, later = backend.calls[1]["messages"], backend.calls[2]["messages"]
    assert later[: len(first)] == first, "the second message extends the first conversation: the KV cache holds"
    assert later[len(first) + 1].content == "now add c"
    assert "I will add b.py." in shown and "✎ b.py" in shown and "+B = 1" in shown and "done: c" in shown
    assert "<write_file>" not in shown and "<finish>" not in shown, "the call markup is never shown"
    commits = list(git.Repo(repo).iter_commits(session.git.branch))
    assert [c.message.splitlines()[0].startswith("agent step") for c in commits[:2]] == [True, True]
    assert session.git.files == ["b.py", "c.py"] and session.git.branch.startswith("agent/")


def test_the_spinner_says_how_big_the_prompt_is(repo, scripted):
    said: list[str] = []

    class Display(ChatDisplay):
        def waiting(self, what: str) -> None:
            said.append(what)

    with open_chat(repo, Config(), Display(Console(file=io.StringIO()), repo), backend=scripted([])) as session:
        repl(session, lines("hello"), Console(file=io.StringIO()))
    assert said[:2] == ["reading the project ...", "reading 20 tokens ..."]  # the scripted backend: 10 a message


def test_undo_takes_back_the_change_and_tells_the_model(repo, scripted):
    backend = scripted([WRITE_B, FINISH.format("b"), FINISH.format("ok")])
    shown, session = chat(repo, backend, "add b", "/undo", "thanks")
    assert "undid" in shown and not (repo / "b.py").exists()
    assert session.git.checkpoints == [] and session.git.files == [], "the report does not count what was undone"
    told = backend.calls[2]["messages"][-1].content
    assert told.startswith(UNDONE.format(files="b.py")) and told.endswith("thanks")


def test_compact_replaces_the_turns_and_a_resume_starts_from_the_summary(repo, scripted):
    backend = scripted([WRITE_B, FINISH.format("b"), "b.py was added with B = 1.", FINISH.format("ok")])
    shown, session = chat(repo, backend, "add b", "/compact", "what did you do?")
    assert "compacted" in shown
    after = backend.calls[3]["messages"]
    assert [m.role for m in after] == ["system", "user", "user"] and "B = 1" in after[1].content
    assert after[0] == backend.calls[0]["messages"][0], "the system prompt stays: the cached prefix"
    recorded = read_transcript(session.transcript.path)
    assert [m.role for m in recorded.messages][:3] == ["system", "user", "user"]


def test_clear_starts_a_new_conversation_in_the_same_session(repo, scripted):
    backend = scripted([FINISH.format("1"), FINISH.format("2")])
    chat(repo, backend, "first", "/clear", "second")
    assert len(backend.calls[1]["messages"]) == 2 and "second" in backend.calls[1]["messages"][1].content


def test_ctrl_c_stops_the_reply_not_the_session(repo, scripted):
    class Interrupted(scripted):
        def complete(self, messages, *args, **kwargs):
            if len(self.calls) == 0:
                self.calls.append({"messages": messages})
                raise KeyboardInterrupt
            return super().complete(messages, *args, **kwargs)

    shown, _ = chat(repo, Interrupted([FINISH.format("after")]), "slow task", "next")
    assert "stopped (Ctrl-C)" in shown and "done: after" in shown


def test_slash_commands_answer(repo, scripted):
    shown, _ = chat(
        repo,
        scripted([WRITE_B, FINISH.format("b")]),
        "add b",
        "/cost",
        "/diff",
        "/model",
        "/nope",
        "/help",
        "/exit",
        "never read",
    )
    assert "model turn" in shown and "+B = 1" in shown and "embedded" in shown
    assert "unknown command /nope" in shown and "/compact" in shown


def test_continue_and_resume_from_the_command_line(repo, scripted, monkeypatch):
    backend = scripted([FINISH.format("first"), FINISH.format("second")])

    @contextmanager
    def session(_config):
        yield backend

    monkeypatch.setattr(chat_module, "backend_session", session)
    first = runner.invoke(app, ["chat", "--repo", str(repo)], input="hello\n/exit\n")
    assert first.exit_code == 0 and "done: first" in first.output, first.output
    (only,) = list_sessions(repo)
    assert only.kind == "chat" and only.task == "hello" and f"agent chat --resume {only.id}" in first.output
    again = runner.invoke(app, ["chat", "--repo", str(repo), "--continue"], input="again\n")
    assert again.exit_code == 0 and "done: second" in again.output, again.output
    sent = backend.calls[1]["messages"]
    assert "hello" in sent[1].content and sent[-1].content == "again", "the earlier conversation came back"
    none = runner.invoke(app, ["chat", "--repo", str(repo.parent), "--continue"])
    assert none.exit_code == 1 and "no chat session in" in none.output


def test_a_conversation_that_fills_the_context_is_compacted_on_its_own(repo, scripted):
    backend = scripted([WRITE_B, FINISH.format("b"), "b.py holds B = 1.", FINISH.format("ok")])
    out = io.StringIO()
    console = Console(file=out, width=120)
    config = Config(n_ctx=50)  # the scripted model reports 10 prompt tokens per message: 45 after "add b"
    with open_chat(repo, config, ChatDisplay(console, repo), backend=backend) as session:
        repl(session, lines("add b", "and then?"), console)
    assert "compacting it" in out.getvalue()
    assert [m.role for m in backend.calls[3]["messages"]] == ["system", "user", "user"]


def test_a_chat_that_cannot_start_leaves_no_branch_and_gives_back_the_work(repo):
    (repo / "a.py").write_text("mine\n")
    result = runner.invoke(app, ["chat", "--repo", str(repo), "--endpoint", "http://127.0.0.1:9"], input="hi\n")
    assert result.exit_code == 1 and "cannot reach" in result.output
    r = git.Repo(repo)
    assert [h.name for h in r.heads] == ["main"] and r.active_branch.name == "main"
    assert (repo / "a.py").read_text() == "mine\n" and r.git.stash("list") == ""
