"""Vacuous finishes and finish precision (agent/evals/metrics.py), from hand-made records and test outcomes."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.checks import finish as checks
from agent.checks.test_runs import read_count
from agent.evals import metrics
from agent.evals.metrics import finish_precision, missing_files, named_files, vacuous_finish
from agent.evals.report import summarize, totals_table
from agent.evals.runner import EvalRecord
from agent.evals.tasks import load_folder_suite

SUITE = Path(__file__).parents[3] / "examples" / "eval" / "tasks"
SOLUTIONS = Path(__file__).parent / "solutions"
CARGO = "test result: ok. {} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"


def record(passed: bool, status: str = "finished", **fields) -> EvalRecord:
    return EvalRecord(task="t", seed=fields.pop("seed", 1), mode="agent", passed=passed, status=status, **fields)


def test_a_finish_is_vacuous_when_no_test_ran_or_a_named_file_is_missing():
    assert vacuous_finish(record(False, tests_passed=True, tests_ran=False))
    assert vacuous_finish(record(False, tests_passed=True, tests_ran=True, named_missing=["slugify.js"]))
    assert not vacuous_finish(record(True, tests_passed=True, tests_ran=True))
    assert not vacuous_finish(record(False, tests_passed=False, tests_ran=True))  # failing tests: not vacuous
    assert not vacuous_finish(record(False, status="step_limit", tests_ran=False))  # did not claim to be done
    assert not vacuous_finish(record(True))  # an older record: nothing recorded about tests


def test_the_finish_gates_own_verdict_counts_too():
    assert vacuous_finish(record(False, vacuous=True)) and vacuous_finish(record(False, missing=["stack.js"]))
    assert not vacuous_finish(record(False, tests_ran=True, tests_passed=True))


def test_finish_precision_counts_only_finishes_with_tests_that_ran_and_passed():
    records = [
        record(True, tests_passed=True, tests_ran=True),  # earned
        record(True, tests_passed=True, tests_ran=True),  # earned
        record(False, tests_passed=True, tests_ran=True),  # its own tests missed a stated requirement
        record(False, tests_passed=True, tests_ran=True, named_missing=["b.py"]),  # counted, and vacuous
        record(False, tests_passed=True, tests_ran=False),  # vacuous: not a finish "with tests passing"
        record(False, tests_passed=False, tests_ran=True),  # finished with failing tests
        record(True, status="step_limit", tests_passed=True, tests_ran=True),  # not reported finished
    ]
    assert finish_precision(records) == (2, 4)
    summary = summarize("x", records)
    assert summary.vacuous_finishes == 2 and summary.finish_precision == pytest.approx(0.5)
    assert (summary.finished_right, summary.finished_with_tests) == (2, 4)
    assert "| x | 3/7 | 42.9% | 43% | 2 | 50% (2/4) |" in totals_table([summary])
    none_finished = summarize("y", [record(False, status="stuck")])
    assert none_finished.finish_precision is None and "| 0 | - |" in totals_table([none_finished])


@pytest.mark.parametrize(
    ("output", "exit_code", "command", "ran"),
    [
        ("1 passed in 0.01s", 0, "python -m pytest -q", True),
        ("no tests ran in 0.01s", 5, "python -m pytest -q", False),
        ("# tests 0\n# pass 0\n# fail 0", 0, "node --test", False),
        ("# tests 3\n# pass 3\n# fail 0", 0, "node --test", True),
        (f"running 0 tests\n\n{CARGO.format(0)}\n\nrunning 0 tests\n\n{CARGO.format(0)}", 0, "cargo test", False),
        (f"running 2 tests\n\n{CARGO.format(2)}\n\nrunning 0 tests\n\n{CARGO.format(0)}", 0, "cargo test", True),
        ("?   \texample.com/m\t[no test files]", 0, "go test ./...", False),
        ("all good", 0, "make test", True),  # no count named: the exit status is all there is
    ],
)
def test_whether_tests_ran_is_the_outcomes_own_count(output, exit_code, command, ran):
    count = read_count(command, exit_code, output)
    outcome = checks.TestOutcome(
        command=command, passed=exit_code == 0, exit_code=exit_code, output_tail="", count=count
    )
    assert metrics.tests_ran(outcome) is ran
    assert metrics.tests_ran(None) is False  # no test command: no test ran


def test_named_files_are_read_from_the_task():
    task = (
        "A Node.js module slugify.js with tests in test/slugify.test.js; see AGENTS.md, "
        "Cargo.toml and src/shapes.rs. Version 2.0 is not a file, e.g. neither is node:test."
    )
    assert named_files(task) == ["slugify.js", "test/slugify.test.js", "AGENTS.md", "Cargo.toml", "src/shapes.rs"]


def test_every_file_a_bundled_task_names_is_there_in_its_reference_solution(tmp_path):
    for task in load_folder_suite(SUITE):
        names = set(task.start_files) | {
            p.relative_to(SOLUTIONS / task.id).as_posix() for p in (SOLUTIONS / task.id).rglob("*") if p.is_file()
        }
        for name in names:
            (tmp_path / task.id / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / task.id / name).touch()
        assert missing_files(task.prompt, tmp_path / task.id) == [], task.id
    assert missing_files("Write stack.js and stack.test.js.", tmp_path) == ["stack.js", "stack.test.js"]
