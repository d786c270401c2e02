"""Fresh attempts (agent/strategies/attempts.py) on real git repositories and real folders, with a scripted model: the
loop logic is under test here; whether attempts raise the real model's pass rate is `agent eval`'s question."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from agent.core.session import read_transcript
from agent.settings.config import Config
from agent.strategies import attempts
from agent.strategies.attempts import snapshot_restorer
from agent.workflows.runs import new_project, run_task
from tests.agent.git.test_checkpoints import make_repo

BAD = (
    "I will write the code.\n<write_file>\n<path>calc.py</path>\n<content>\ndef double(x):\n    return x + x + 1\n"
    "</content>\n</write_file>\n<write_file>\n<path>test_calc.py</path>\n<content>\nfrom calc import double\n\n\n"
    "def test_double():\n    assert double(2) == 4\n</content>\n</write_file>\n<bash>\n<command>python -m pytest -q"
    "</command>\n</bash>"
)
GOOD = BAD.replace("return x + x + 1", "return 2 * x")
SCRAP = "<write_file>\n<path>notes/scrap.txt</path>\n<content>\nscrap\n</content>\n</write_file>"
FINISH = "<finish><summary>done</summary></finish>"


@pytest.fixture(autouse=True)
def short_attempts(monkeypatch):
    """Attempts of 2 steps, so a scripted model can run out of one in a few replies."""
    monkeypatch.setattr(attempts, "MIN_STEPS", 2)


@pytest.mark.slow
def test_an_attempt_that_runs_out_of_steps_is_undone_and_the_next_starts_fresh_with_a_note(scripted, tmp_path):
    repo = make_repo(tmp_path / "r")
    start_files = {"a.py", "keep.txt", ".gitignore"}
    backend = scripted([BAD, SCRAP, GOOD, FINISH])  # attempt 1: 2 steps, its tests failing
    result = run_task(
        tmp_path / "r", "Add double(x) in calc.py with a test", Config(max_steps=4, attempts=2), backend=backend
    )
    assert result.run.status == "finished" and result.tests and result.tests.passed
    assert result.run.stats.steps == 4 and "attempt 2 of 2" in result.run.summary
    second_start = backend.calls[2]["messages"]
    assert len(second_start) == 2, "the second attempt starts from the system prompt and the task alone"
    assert "an earlier attempt at this task failed" in second_start[1].content
    assert (
        "Its check failed:\nE       assert 5 == 4" in second_start[1].content
        and "def double" not in second_start[1].content
    )
    assert backend.calls[2]["sampling"].seed == backend.calls[0]["sampling"].seed + 1000, "a fresh attempt samples anew"
    assert second_start[0].content == backend.calls[0]["messages"][0].content, "same system prompt: cache reuse"
    tree = {item.path for item in repo.head.commit.tree.traverse()}
    assert "notes/scrap.txt" not in tree and "calc.py" in tree and start_files <= tree
    subjects = [c.summary for c in repo.iter_commits(result.git.branch)]
    assert "agent step 2: attempt 2: back to the start" in subjects or any("attempt 2" in s for s in subjects)
    recorded = read_transcript(Path(result.transcript))
    assert recorded.messages[0].role == "system" and "earlier attempt" in recorded.messages[1].content


@pytest.mark.slow
def test_a_finished_first_attempt_is_the_only_one(scripted, tmp_path):
    make_repo(tmp_path / "r")
    backend = scripted([GOOD, FINISH])
    result = run_task(tmp_path / "r", "Add double", Config(max_steps=6, attempts=3), backend=backend)
    assert result.run.status == "finished" and len(backend.calls) == 2


@pytest.mark.slow
def test_a_new_project_goes_back_to_its_empty_start_between_attempts(scripted, tmp_path):
    backend = scripted([SCRAP, BAD, FINISH, GOOD, FINISH])
    result = new_project(
        tmp_path / "p",
        "A Python module calc.py with double(x), with pytest tests.",
        Config(max_steps=6, attempts=2),
        backend=backend,
    )
    assert result.run.status == "finished"
    assert not (tmp_path / "p" / "notes").exists(), "attempt 1's folder was removed by the restart"
    committed = {item.path for item in git.Repo(tmp_path / "p").head.commit.tree.traverse()}
    assert {"calc.py", "test_calc.py"} <= committed and "notes/scrap.txt" not in committed


def test_the_snapshot_restorer_keeps_ignored_files_and_puts_changed_ones_back(tmp_path):
    (tmp_path / ".gitignore").write_text(".venv/\n")
    (tmp_path / ".venv" / "include").mkdir(parents=True)
    (tmp_path / "keep.txt").write_text("start\n")
    restore = snapshot_restorer(tmp_path)
    (tmp_path / "keep.txt").write_text("changed\n")
    (tmp_path / "new" / "deep").mkdir(parents=True)
    (tmp_path / "new" / "deep" / "f.py").write_text("x\n")
    (tmp_path / ".venv" / "lib.py").write_text("ignored\n")
    restore()
    assert (tmp_path / "keep.txt").read_text() == "start\n" and not (tmp_path / "new").exists()
    assert (tmp_path / ".venv" / "lib.py").exists() and (tmp_path / ".venv" / "include").is_dir()


SQUARE = 'def square(x):\n    """The square of x.\n\n    >>> square(3)\n    9\n    """\n    {body}\n'


def write_square(body: str) -> str:
    return f"<write_file>\n<path>sq.py</path>\n<content>\n{SQUARE.format(body=body)}</content>\n</write_file>\n{FINISH}"


def test_without_tests_the_docstring_examples_hold_up_finish_a_limited_number_of_times(scripted, tmp_path):
    make_repo(tmp_path / "r", {"sq.py": SQUARE.format(body="raise NotImplementedError")})
    backend = scripted([write_square("return x + x"), write_square("return x * x")])
    config = Config(max_steps=4, attempts=1, one_shots=0)
    result = run_task(tmp_path / "r", "Implement square", config, backend=backend)
    assert result.run.status == "finished" and result.run.stats.steps == 2
    refusal = backend.calls[1]["messages"][-1].content
    assert "finish refused" in refusal and "docstring examples (as the task gave them) fail" in refusal
    assert "Expected:\n    9\nGot:\n    6" in refusal

    make_repo(tmp_path / "s", {"sq.py": SQUARE.format(body="raise NotImplementedError")})
    backend = scripted([write_square(f"return {n}") for n in range(3)])  # examples never met: not a trap
    config = Config(max_steps=6, attempts=1, one_shots=0)
    result = run_task(tmp_path / "s", "Implement square", config, backend=backend)
    assert result.run.status == "finished" and result.run.stats.steps == 3


def test_a_small_step_budget_is_one_attempt(scripted, tmp_path, monkeypatch):
    monkeypatch.setattr(attempts, "MIN_STEPS", 6)
    make_repo(tmp_path / "r")
    backend = scripted([BAD, SCRAP, GOOD, FINISH])
    result = run_task(tmp_path / "r", "Add double", Config(max_steps=11, attempts=3), backend=backend)
    assert result.run.status == "finished" and result.run.stats.steps == 4 and "attempt" not in result.run.summary
