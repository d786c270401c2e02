"""Loop logic with a scripted backend (the real model drives the loop in test_workflows.py)."""

from __future__ import annotations

import json

from agent.core.loop import NO_CALL_NUDGE, REPEAT_HELP, Agent
from agent.core.session import Transcript, new_transcript_path, read_transcript
from agent.strategies.first_look import files_to_show  # the loop takes these as plain hooks (agent/strategies/)
from agent.strategies.repetition import new_guard
from inference.backends.backend import BackendError, Completion, Timings
from tools.base import ToolContext
from tools.files import file_tools
from tools.shell import BashTool

WRITE = "<write_file>\n<path>hello.py</path>\n<content>\nprint('hi')\n</content>\n</write_file>"
RUN = "<bash>\n<command>python hello.py</command>\n</bash>"
FINISH = "<finish><summary>done</summary></finish>"


def make_agent(backend, tmp_path, **kwargs):
    return Agent(backend, [BashTool(), *file_tools()], ToolContext(tmp_path), **kwargs)


def test_runs_tools_observes_and_finishes(scripted, tmp_path):
    backend = scripted([WRITE + "\n" + RUN, FINISH])
    result = make_agent(backend, tmp_path).run("say hi")
    assert result.status == "finished" and result.summary == "done"
    assert (tmp_path / "hello.py").read_text() == "print('hi')\n"
    observation = backend.calls[1]["messages"][-1].content
    assert 'tool="write_file" status="ok"' in observation
    assert 'tool="bash" status="ok"' in observation and "exit code 0\nhi" in observation
    assert result.stats.steps == 2 and result.stats.completion_tokens == 10


def test_conversation_is_append_only(scripted, tmp_path):
    backend = scripted([RUN, "<list_files></list_files>", FINISH])
    make_agent(backend, tmp_path).run("task")
    sent = [[m.model_dump() for m in call["messages"]] for call in backend.calls]
    for earlier, later in zip(sent, sent[1:]):
        assert later[: len(earlier)] == earlier, "an earlier message changed: the KV cache prefix would break"


def test_system_prompt_is_identical_across_tasks_and_workspaces(scripted, tmp_path):
    a, b = scripted([FINISH]), scripted([FINISH])
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    (tmp_path / "two" / "x.py").write_text("")
    make_agent(a, tmp_path / "one").run("first task")
    make_agent(b, tmp_path / "two").run("another task")
    assert a.calls[0]["messages"][0] == b.calls[0]["messages"][0]
    assert "first task" in a.calls[0]["messages"][1].content and "x.py" in b.calls[0]["messages"][1].content


def test_malformed_call_goes_back_as_an_observation(scripted, tmp_path):
    backend = scripted(['<tool_call>{"name": "bash", "arguments": {</tool_call>', FINISH])
    result = make_agent(backend, tmp_path).run("task")
    assert result.status == "finished"
    assert "malformed tool call" in backend.calls[1]["messages"][-1].content


def test_unknown_tool_and_bad_arguments_are_observations(scripted, tmp_path):
    backend = scripted(['<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>', "<read_file></read_file>", FINISH])
    make_agent(backend, tmp_path).run("task")
    assert "unknown tool 'rm_rf'" in backend.calls[1]["messages"][-1].content
    assert "invalid arguments for read_file" in backend.calls[2]["messages"][-1].content


def test_reply_without_call_gets_a_nudge(scripted, tmp_path):
    backend = scripted(["Sure, I can help with that!", FINISH])
    make_agent(backend, tmp_path).run("task")
    assert backend.calls[1]["messages"][-1].content == NO_CALL_NUDGE


def test_step_limit(scripted, tmp_path):
    backend = scripted([f"<bash><command>echo {i}</command></bash>" for i in range(10)])
    result = make_agent(backend, tmp_path, max_steps=3).run("task")
    assert result.status == "step_limit" and result.stats.steps == 3


def test_finish_refused_after_a_failed_call_in_the_same_reply(scripted, tmp_path):
    backend = scripted(["<bash><command>exit 1</command></bash>\n" + FINISH, FINISH])
    result = make_agent(backend, tmp_path).run("task")
    assert result.status == "finished" and result.stats.steps == 2
    assert "finish refused: bash failed" in backend.calls[1]["messages"][-1].content


def test_finish_refused_while_verify_fails(scripted, tmp_path):
    checks = iter(["2 tests fail", None])
    backend = scripted([FINISH, "<list_files></list_files>", FINISH])
    result = make_agent(backend, tmp_path, verify=lambda: next(checks)).run("task")
    assert result.status == "finished" and result.stats.steps == 3
    assert "finish refused: 2 tests fail" in backend.calls[1]["messages"][-1].content


def test_repeated_replies_are_discarded_then_the_run_stops_stuck(scripted, tmp_path):
    backend = scripted([RUN] * 12)
    result = make_agent(backend, tmp_path, max_repeats=2).run("task")
    assert result.status == "stuck"
    # the second RUN answers a new observation and is kept; the third answers the same one again: a loop,
    # discarded and resampled hotter; when that repeats too, a message changes the context
    temperatures = [c["sampling"].temperature for c in backend.calls]
    assert temperatures[1] == temperatures[2] < temperatures[3]
    assert REPEAT_HELP in [m.content for m in backend.calls[4]["messages"]]
    assert all(m.content.count("<bash>") <= 1 for m in backend.calls[-1]["messages"] if m.role == "assistant")


def test_backend_error_ends_the_run_with_its_message(tmp_path):
    class Dead:
        name = "dead"

        def complete(self, *args, **kwargs):
            raise BackendError("server at http://127.0.0.1:1 is not running; start it with `agent serve`")

    result = make_agent(Dead(), tmp_path).run("task")
    assert result.status == "error" and "agent serve" in result.summary


def test_transcript_records_every_message_and_resumes(scripted, tmp_path):
    path = tmp_path / "run.jsonl"
    transcript = Transcript(path)
    transcript.write("start", workspace=str(tmp_path), task="task")
    make_agent(scripted([RUN, FINISH]), tmp_path, transcript=transcript).run("task")
    transcript.close()
    events = [json.loads(line) for line in path.read_text().splitlines()]
    assert [e["type"] for e in events][-1] == "end"
    history = read_transcript(path).messages
    assert [m.role for m in history] == ["system", "user", "assistant", "user", "assistant"]
    resumed = scripted([FINISH])
    make_agent(resumed, tmp_path).run("ignored", history=history[:4])
    assert resumed.calls[0]["messages"] == history[:4]


def test_runs_started_together_never_share_a_transcript(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    paths = {new_transcript_path("r") for _ in range(20)}  # same second, same folder name
    assert len(paths) == 20


def test_a_reply_that_loops_is_cut_while_streaming_and_sampled_again(scripted, tmp_path):
    looping = "<write_file><path>t.py</path><content>\n" + "".join(f"assert f({n}) == {n * n}\n" for n in range(400))
    backend = scripted([looping, FINISH])
    result = make_agent(backend, tmp_path, watch=new_guard).run("task")
    assert result.status == "finished" and not (tmp_path / "t.py").exists()
    assert backend.calls[1]["sampling"].temperature > backend.calls[0]["sampling"].temperature
    assert all("f(399)" not in m.content for m in backend.calls[1]["messages"])  # the loop never entered the history


def test_the_first_message_shows_the_files_of_a_small_project(scripted, tmp_path):
    (tmp_path / "solution.py").write_text('def f(x):\n    """Return x squared."""\n    raise NotImplementedError\n')
    backend = scripted([FINISH])
    make_agent(backend, tmp_path, first_look=files_to_show).run("Implement f in solution.py")
    first = backend.calls[0]["messages"][1].content
    assert 'solution.py:\n```\ndef f(x):\n    """Return x squared."""' in first


def test_file_contents_that_do_not_fit_the_context_leave_the_first_message(tmp_path):
    """The first message shows the files the task names; when that alone overflows the context, they go."""
    from inference.backends.backend import ContextOverflow

    (tmp_path / "big.txt").write_text("row\n" * 3000)

    class SmallContext:
        name = "small"

        def __init__(self):
            self.calls = []

        def complete(self, messages, tools=None, sampling=None, on_text=None, on_prompt=None):
            self.calls.append([m.content for m in messages])
            if sum(len(m.content) for m in messages) > 9_000:
                raise ContextOverflow("too long")
            return Completion(text=FINISH, timings=Timings())

    backend = SmallContext()
    result = make_agent(backend, tmp_path, first_look=files_to_show).run("Read big.txt and say what is in it")
    assert result.status == "finished" and len(backend.calls) == 2
    assert (
        "row\nrow" in backend.calls[0][1] and "row\nrow" not in backend.calls[1][1] and "big.txt" in backend.calls[1][1]
    )
