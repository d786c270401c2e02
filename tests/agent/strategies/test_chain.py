"""The chain of strategies before the loop (agent/strategies/base.py, agent/workflows/runs.py `run_agent`): each
applies only where it fits the task. Driven through the real CLI on real git repositories; the model is
scripted (the backend is replaced), so what is under test is which requests the run makes and what it writes."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.core.texts import ONE_SHOT_SYSTEM
from agent.workflows import runs as workflows
from tests.agent.git.test_checkpoints import make_repo

runner = CliRunner()
STUB = '''def slugify(text):
    """The text in lower case, words joined by dashes.

    >>> slugify("Hello World")
    'hello-world'
    """
    raise NotImplementedError
'''
README = "# Slugs\n\nThis is teh slug library.\n"
FIX_README = (
    "<write_file>\n<path>README.md</path>\n<content>\n# Slugs\n\nThis is the slug library.\n</content>\n</write_file>"
)
FINISH = "<finish><summary>fixed the typo in README.md</summary></finish>"


@pytest.fixture
def model(scripted, monkeypatch):
    """The run's backend replies with `model.replies` (set by the test)."""
    backend = scripted([])

    @contextmanager
    def session(_config):
        yield backend

    monkeypatch.setattr(workflows, "backend_session", session)
    return backend


def test_a_readme_typo_in_a_repo_with_one_stub_asks_for_no_stub_and_fixes_the_readme(model, tmp_path, monkeypatch):
    """A repository with no tests and one stub with a doctest: `agent run "Fix the typo 'teh' in README.md."`
    asked for the stub's file whole and wrote it, README untouched, while one-shot answers took any single stub
    with examples. The task names neither the stub's file nor its function: nothing is asked of the stub."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("DFLASH_AGENT_ONE_SHOTS", "3")
    make_repo(tmp_path / "r", {"README.md": README, "slug.py": STUB})
    # the stub's doctest fails before the run as after, in a file the run never wrote: it does not hold up
    # `finish` (agent/checks/finish.py checks the examples of the files a run wrote), so one finish is enough
    model.replies = [FIX_README, FINISH]
    args = ["run", "Fix the typo 'teh' in README.md.", "--repo", str(tmp_path / "r"), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert all(call["messages"][0].content != ONE_SHOT_SYSTEM for call in model.calls), "a one-shot answer was asked"
    assert (tmp_path / "r" / "slug.py").read_text() == STUB, "the stub was rewritten"
    assert (tmp_path / "r" / "README.md").read_text() == "# Slugs\n\nThis is the slug library.\n"
    report = json.loads(result.stdout)
    assert report["run"]["status"] == "finished" and report["run"]["stats"]["one_shots"] == 0
    assert applied(report["transcript"]) == ["repetition cut", "first look", "fresh attempts"]


def test_a_task_that_names_the_stub_gets_one_shot_answers(model, tmp_path, monkeypatch):
    """The same repository, a task about the stub: the one-shot strategy applies."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("DFLASH_AGENT_ONE_SHOTS", "3")
    make_repo(tmp_path / "r", {"README.md": README, "slug.py": STUB})
    body = 'return "-".join(text.lower().split())'
    model.replies = [f"```python\n{STUB.replace('raise NotImplementedError', body)}```"]
    args = ["run", "Implement slugify.", "--repo", str(tmp_path / "r"), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert model.calls[0]["messages"][0].content == ONE_SHOT_SYSTEM and len(model.calls) == 1
    assert body in (tmp_path / "r" / "slug.py").read_text()
    report = json.loads(result.stdout)
    assert report["run"]["stats"]["one_shots"] == 1
    assert applied(report["transcript"]) == [
        "repetition cut",
        "first look",
        "docstring-example checks",
        "given-code checks",
        "missing imports",
        "one-shot answers",
    ]


def applied(transcript: str) -> list[str]:
    """The strategies the run's transcript says applied, in order."""
    records = [json.loads(line) for line in Path(transcript).read_text().splitlines()]
    return [r["name"] for r in records if r["type"] == "strategy"]


BLOCK = """    with patch("wordcount.open", mock_open(read_data="a b a")) as opened:
        counts = count_words("words.txt")
        opened.assert_called_once_with("words.txt")
        assert counts["a"] == 2
        assert counts["b"] == 1
        assert len(counts) == 2
"""
RUNAWAY = (
    "<write_file>\n<path>test_wordcount.py</path>\n<content>\nfrom unittest.mock import mock_open, patch\n\n"
    "from wordcount import count_words\n\n\ndef test_counts():\n" + BLOCK * 60
)


def test_a_write_file_whose_content_repeats_one_block_is_cut_while_it_streams(scripted, tmp_path, monkeypatch):
    """A run wrote test_wordcount.py as a 2,049-token `write_file` whose content repeated one six-line
    `with patch(...)` block until max_tokens, three times in a row, none of it cut: six lines have too many
    shapes for the near-identical-lines check and too long a period for the verbatim one."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    make_repo(tmp_path / "r", {"wordcount.py": "def count_words(path):\n    return {}\n"})
    backend = scripted([RUNAWAY, FINISH])
    replies, complete = [], backend.complete

    def recorded(*args, **kwargs):
        replies.append(complete(*args, **kwargs))
        return replies[-1]

    monkeypatch.setattr(backend, "complete", recorded)
    config = workflows.Config(max_steps=2, attempts=1)
    result = workflows.run_task(tmp_path / "r", "Add tests for count_words", config, backend=backend)
    assert replies[0].finish_reason == "cut" and len(replies[0].text) < len(RUNAWAY) / 10, len(replies[0].text)
    records = [json.loads(line) for line in Path(result.transcript).read_text().splitlines()]
    assert any("fell into repeating itself and was cut" in r.get("text", "") for r in records if r["type"] == "note")
    assert all(BLOCK * 2 not in m.content for m in backend.calls[1]["messages"]), "the runaway reached the context"
    assert result.run.status == "finished"


def test_a_block_repeated_inside_a_json_tool_call_is_cut_early():
    """The same runaway in a JSON tool call, where the content is one long line of `\\n` escapes."""
    from agent.strategies.repetition import RepetitionGuard

    content = json.dumps("def test_counts():\n" + BLOCK * 60)
    reply = '<tool_call>{"name": "write_file", "arguments": {"path": "t.py", "content": ' + content
    guard, cut = RepetitionGuard(), None
    for start in range(0, len(reply), 16):
        if guard.feed(reply[start : start + 16]):
            cut = start + 16
            break
    assert cut is not None and cut < len(reply) / 10, f"cut at {cut} of {len(reply)}"
