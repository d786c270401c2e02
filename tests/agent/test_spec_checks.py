"""Asserts written from the task before the code (agent/spec_checks.py): parsed from what a small model
writes, run by real Python against real files, and through a run with a scripted model (the loop logic;
whether they raise the real model's pass rate is `agent eval`'s question, docs/eval.md)."""

from __future__ import annotations

import subprocess

from agent import examples, spec_checks
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
    assert "0 of 3 checks pass" in failing.stdout
    (tmp_path / "solution.py").write_text(STUB.replace("raise NotImplementedError", RIGHT))
    passing = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert passing.returncode == 0 and "3 of 3 checks pass" in passing.stdout


def write(body: str) -> str:
    text = STUB.replace("raise NotImplementedError", body)
    return f"<write_file>\n<path>solution.py</path>\n<content>\n{text}</content>\n</write_file>\n<finish><summary>done</summary></finish>"


def test_code_fitted_to_the_examples_is_refused_once_by_the_asserts_then_fixed(scripted, tmp_path):
    make_repo(tmp_path / "r", {"solution.py": STUB})
    backend = scripted([CHECKS, write(OVERFIT), write(RIGHT)])
    result = run_task(tmp_path / "r", "Implement sum_product", Config(max_steps=4, attempts=1), backend=backend)
    assert result.run.status == "finished" and result.run.stats.steps == 2
    aside, first_step = backend.calls[0]["messages"], backend.calls[1]["messages"]
    assert aside[0] == first_step[0] and aside[1].content.startswith(first_step[1].content), "the cached prefix"
    assert "assert statements" in aside[1].content and len(first_step) == 2, "the question leaves no trace"
    refusal = backend.calls[2]["messages"][-1].content
    assert "Checks you wrote from the task before the code" in refusal and "IndexError" in refusal
    assert "product *= n" in (tmp_path / "r" / "solution.py").read_text()


def test_a_wrong_assert_holds_up_finish_only_once(scripted, tmp_path):
    make_repo(tmp_path / "r", {"solution.py": STUB})
    backend = scripted(
        [
            "assert sum_product([2, 2]) == (4, 5)",
            write(RIGHT),
            "<finish><summary>the check was wrong</summary></finish>",
        ]
    )
    result = run_task(tmp_path / "r", "Implement sum_product", Config(max_steps=4, attempts=1), backend=backend)
    assert result.run.status == "finished" and result.run.stats.steps == 2
    assert "(it returned (4, 4))" in backend.calls[2]["messages"][-1].content


def test_no_asserts_are_asked_for_where_the_project_has_tests_or_when_turned_off(scripted, tmp_path):
    make_repo(
        tmp_path / "t",
        {
            "solution.py": STUB,
            "test_solution.py": "from solution import *\n\n\ndef test_it():\n    assert sum_product([]) == (0, 1)\n",
        },
    )
    backend = scripted([write(RIGHT)])
    assert (
        run_task(tmp_path / "t", "Implement it", Config(max_steps=2, attempts=1), backend=backend).run.status
        == "finished"
    )
    assert len(backend.calls) == 1
    make_repo(tmp_path / "o", {"solution.py": STUB})
    backend = scripted([write(RIGHT)])
    config = Config(max_steps=2, attempts=1, spec_checks=False)
    assert run_task(tmp_path / "o", "Implement it", config, backend=backend).run.status == "finished"
    assert len(backend.calls) == 1
