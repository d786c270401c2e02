"""Conversations that outgrow the context window are trimmed, not crashed: scripted for the rules, then the
real embedded model with a small context reading a file larger than what is left."""

from __future__ import annotations

import pytest

from agent.core.context import trim_observations
from agent.core.loop import Agent
from agent.core.texts import TRIMMED
from inference.backends.backend import ContextOverflow, Message
from tools.base import ToolContext
from tools.files import file_tools
from tools.shell import BashTool


def observation(text: str) -> Message:
    return Message(role="user", content=f'<observation tool="bash" status="ok">\n{text}\n</observation>')


def conversation(*observations: str) -> list[Message]:
    messages = [Message(role="system", content="rules"), Message(role="user", content="task <observation> mentioned")]
    for text in observations:
        messages += [Message(role="assistant", content="<bash><command>x</command></bash>"), observation(text)]
    return messages


def test_old_observations_go_first_then_the_newest_is_halved():
    messages = conversation("a" * 1000, "b" * 1000, "c" * 1000, "d" * 1000)
    assert trim_observations(messages) == "removed 2 old observation(s)"
    assert [m.content for m in messages[3:6:2]] == [TRIMMED, TRIMMED]
    assert messages[1].content == "task <observation> mentioned"  # the task is never cut
    assert all(m.content.startswith("<bash>") for m in messages if m.role == "assistant")
    before = [len(m.content) for m in messages]
    assert trim_observations(messages).startswith("shortened an observation")
    after = [len(m.content) for m in messages]
    changed = [i for i, (b, a) in enumerate(zip(before, after)) if a != b]
    assert len(changed) == 1 and after[changed[0]] < before[changed[0]] * 0.6
    assert messages[changed[0]].content.endswith("</observation>")  # head and tail kept
    while trim_observations(messages):
        pass
    assert all(len(m.content) <= 400 or m.content == TRIMMED for m in messages[2:])


class OverflowingBackend:
    """Refuses any conversation longer than `limit` characters, as an engine refuses too many tokens."""

    name = "overflowing"

    def __init__(self, scripted, replies, limit):
        self.inner, self.limit, self.overflows = scripted(replies), limit, 0

    def complete(self, messages, tools=None, sampling=None, on_text=None, on_prompt=None):
        if sum(len(m.content) for m in messages) > self.limit:
            self.overflows += 1
            raise ContextOverflow("the conversation is too long")
        return self.inner.complete(messages, tools, sampling, on_text, on_prompt)


def test_loop_trims_and_goes_on(scripted, tmp_path):
    (tmp_path / "big.txt").write_text("a line of the file, long enough to matter\n" * 3000)
    replies = [
        "<read_file><path>big.txt</path></read_file>",
        "<bash><command>echo ok</command></bash>",
        "<finish><summary>done</summary></finish>",
    ]
    backend = OverflowingBackend(scripted, replies, limit=0)
    notes: list[str] = []

    class Events:
        def on_text(self, text):
            pass

        def on_step(self, *args):
            pass

        def on_note(self, text):
            notes.append(text)

    agent = Agent(backend, [BashTool(), *file_tools()], ToolContext(tmp_path), events=Events())
    backend.limit = len(agent.system) + 5000  # room for the task and a few replies, not for the whole file
    result = agent.run("read it")
    assert result.status == "finished" and backend.overflows >= 1
    assert any("outgrew the context" in n for n in notes)


def test_nothing_left_to_trim_is_a_clear_error(scripted, tmp_path):
    backend = OverflowingBackend(scripted, [], limit=10)
    result = Agent(backend, [BashTool()], ToolContext(tmp_path)).run("task")
    assert result.status == "error" and "ContextOverflow" in result.summary


@pytest.mark.model
def test_real_model_with_a_small_context_reads_a_file_bigger_than_what_is_left(tmp_path, qwen_path):
    from inference.backends.embedded import EmbeddedBackend

    numbers = "\n".join(f"row {i}: value {i * 7}" for i in range(400))  # ~4000 tokens: more than the context
    (tmp_path / "big.txt").write_text(numbers + "\n")
    notes: list[str] = []

    class Events:
        def on_text(self, text):
            pass

        def on_step(self, *args):
            pass

        def on_note(self, text):
            notes.append(text)

    backend = EmbeddedBackend(qwen_path, n_ctx=3072)
    try:
        agent = Agent(backend, [BashTool(), *file_tools()], ToolContext(tmp_path), events=Events(), max_steps=3)
        result = agent.run(
            "Use read_file to read big.txt (all of it). Then call finish with the first line of the file as summary."
        )
    finally:
        backend.close()
    assert any("outgrew the context" in n for n in notes), notes
    assert result.status != "error", result.summary  # trimmed and went on instead of failing
