"""Asserts written from the task before the code (agent/spec_checks.py): parsed from what a small model
writes, run by real Python against real files, and choosing between attempts in a run with a scripted model
(the loop logic; whether they raise the real model's pass rate is `agent eval`'s question, docs/eval.md)."""

from __future__ import annotations

import subprocess

import git
import pytest

from agent import attempts, examples, spec_checks
from agent.config import Config
from agent.workflows import run_task
from tests.agent.test_checkpoints import make_repo

STUB = '''def sum_product(numbers):
    """Sum and product of a list; empty: (0, 1).

    >>> sum_product([])
    (0, 1)
    >>> sum_product([1, 2, 3, 4])
    (10, 24)
    """
    raise NotImplementedError
'''
OVERFIT = (
    "if not numbers:\n        return 0, 1\n    return sum(numbers), numbers[0] * numbers[1] * numbers[2] * numbers[3]"
)
RIGHT = "product = 1\n    for n in numbers:\n        product *= n\n    return sum(numbers), product"
CHECKS = (
    "assert sum_product([1, 1, 1]) == (3, 1)\nassert sum_product([5]) == (5, 5)\nassert sum_product([2, 3]) == (5, 6)"
)


def test_the_asserts_are_read_wherever_a_small_model_writes_them():
    reply = (
        "Here are the checks:\n```python\nassert f(1) == 2\n    assert f(2) == 4\nassert f(1) == 2\n```\n"
        "<write_file><content>\nassert f(3) == 6\nassert f(( == 1\nassert_equal(f(1), 2)\n</content></write_file>"
    )
    assert spec_checks.parse(reply) == ["assert f(1) == 2", "assert f(2) == 4", "assert f(3) == 6"]
    assert len(spec_checks.parse("\n".join(f"assert f({n}) == {n}" for n in range(20)))) == spec_checks.MOST_CHECKS
    assert spec_checks.parse("I would test it with f(1) == 2.") == []


def test_the_asserts_run_against_the_code_and_say_what_it_returned(tmp_path):
    (tmp_path / "solution.py").write_text(STUB)
    given = examples.collect(tmp_path)
    command = spec_checks.command(spec_checks.parse(CHECKS), given)
    assert command and spec_checks.command([], given) is None
    (tmp_path / "solution.py").write_text(STUB.replace("raise NotImplementedError", OVERFIT))
    failing = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert failing.returncode == 1
    assert "FAILED: assert sum_product([1, 1, 1]) == (3, 1) (IndexError: list index out of range)" in failing.stdout
    assert "0 of 3 checks pass" in failing.stdout and spec_checks.score(failing.stdout, 3).passed == 0
    (tmp_path / "solution.py").write_text(STUB.replace("raise NotImplementedError", RIGHT))
    passing = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert passing.returncode == 0 and spec_checks.score(passing.stdout, 3).perfect


def write(body: str) -> str:
    text = STUB.replace("raise NotImplementedError", body)
    return f"<write_file>\n<path>solution.py</path>\n<content>\n{text}</content>\n</write_file>\n<finish><summary>done</summary></finish>"


@pytest.fixture(autouse=True)
def short_attempts(monkeypatch):
    monkeypatch.setattr(attempts, "MIN_STEPS", 2)


def test_code_fitted_to_the_examples_loses_to_a_fresh_attempt_that_passes_the_asserts(scripted, tmp_path):
    make_repo(tmp_path / "r", {"solution.py": STUB})
    backend = scripted([CHECKS, write(OVERFIT), write(RIGHT)])
    config = Config(max_steps=6, attempts=3, spec_checks=True, one_shots=0)
    result = run_task(tmp_path / "r", "Implement sum_product", config, backend=backend)
    assert result.run.status == "finished" and "attempt 2 of 3" in result.run.summary
    aside, first_step, second = (backend.calls[i]["messages"] for i in range(3))
    assert aside[0] == first_step[0] and aside[1].content.startswith(first_step[1].content), "the cached prefix"
    assert "assert statements" in aside[1].content and len(first_step) == 2, "the question leaves no trace"
    assert len(second) == 2 and second[1].content == first_step[1].content, "a fresh, independent attempt"
    assert not any("(3, 1)" in m.content for call in backend.calls[1:] for m in call["messages"]), "never shown"
    assert "product *= n" in (tmp_path / "r" / "solution.py").read_text()
    assert result.tests is None and result.run.stats.steps == 2


def test_two_attempts_failing_a_wrong_assert_alike_end_the_comparison(scripted, tmp_path):
    """Independent code that agrees on a check's result says the check is wrong (CodeT): no third attempt."""
    make_repo(tmp_path / "r", {"solution.py": STUB})
    other = "import math\n    return sum(numbers), math.prod(numbers)"
    backend = scripted(["assert sum_product([2, 2]) == (4, 5)", write(RIGHT), write(other), write(OVERFIT)])
    result = run_task(
        tmp_path / "r",
        "Implement sum_product",
        Config(max_steps=6, attempts=3, spec_checks=True, one_shots=0),
        backend=backend,
    )
    assert result.run.status == "finished" and "attempt 2 of 3" in result.run.summary and len(backend.calls) == 3
    assert "math.prod" in (tmp_path / "r" / "solution.py").read_text()


def test_the_attempt_passing_most_checks_is_put_back_and_committed(scripted, tmp_path):
    make_repo(tmp_path / "r", {"solution.py": STUB})
    checks = "assert sum_product([2, 2]) == (4, 5)\nassert sum_product([2, 3]) == (5, 6)"
    fitted = "return (sum(numbers), 24) if numbers else (0, 1)"  # fails both, differently
    steps = ["<bash><command>ls</command></bash>"] * 2
    backend = scripted([checks, write(RIGHT), write(fitted), *steps])
    result = run_task(
        tmp_path / "r",
        "Implement sum_product",
        Config(max_steps=6, attempts=3, spec_checks=True, one_shots=0),
        backend=backend,
    )
    assert result.run.status == "finished" and "attempt 1 of 3" in result.run.summary
    assert "product *= n" in (tmp_path / "r" / "solution.py").read_text()
    committed = git.Repo(tmp_path / "r").head.commit.tree["solution.py"].data_stream.read().decode()
    assert "product *= n" in committed, "the chosen attempt is what the run commits"


def test_no_asserts_are_asked_for_where_the_project_has_tests_nor_by_default(scripted, tmp_path):
    make_repo(
        tmp_path / "t",
        {
            "solution.py": STUB,
            "test_solution.py": "from solution import *\n\n\ndef test_it():\n    assert sum_product([]) == (0, 1)\n",
        },
    )
    backend = scripted([write(RIGHT)])
    assert (
        run_task(
            tmp_path / "t", "Implement it", Config(max_steps=2, attempts=1, one_shots=0), backend=backend
        ).run.status
        == "finished"
    )
    assert len(backend.calls) == 1
    make_repo(tmp_path / "o", {"solution.py": STUB})
    backend = scripted([write(RIGHT)])
    assert (
        run_task(
            tmp_path / "o", "Implement it", Config(max_steps=2, attempts=1, one_shots=0), backend=backend
        ).run.status
        == "finished"
    )
    assert len(backend.calls) == 1


def test_each_attempt_may_be_refused_by_the_examples_again_and_a_finish_let_through_ranks_last(tmp_path):
    from agent.checks import DOCTEST_REFUSALS, FinishGate

    make_repo(tmp_path / "r", {"solution.py": STUB})
    gate = FinishGate(tmp_path / "r", Config(spec_checks=True, one_shots=0))
    gate.checks = spec_checks.parse(CHECKS)
    (tmp_path / "r" / "solution.py").write_text(STUB.replace("raise NotImplementedError", "return 0, 1"))
    answers = [gate() for _ in range(DOCTEST_REFUSALS + 1)]
    assert all(answers[:-1]) and answers[-1] is None, "the examples refuse only so often ..."
    gate.new_attempt()
    assert gate(), "... in each attempt"
    low = gate.score()
    assert low and not low.examples_pass and not low.perfect
    (tmp_path / "r" / "solution.py").write_text(STUB.replace("raise NotImplementedError", RIGHT))
    high = gate.score()
    assert high and high.perfect and high > low
