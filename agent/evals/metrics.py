"""Whether a reported "finished" was earned: vacuous finishes and finish precision, per suite run.

A finish is vacuous when the run reported finished while no test ran (no test command, or one that ran none)
or a file the task names is missing at the end. Finish precision: of the runs reported finished with tests
passing (tests that ran), the share whose hidden check passes; what the word "finished" is worth to a user.

The files a task names are read here, by the eval, from the task's text; what the tests ran is the test
outcome's own count (agent/checks/test_runs.py). The `finish` gate's verdict on the record (`vacuous`, `missing`)
counts too: either reading makes a finish vacuous."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from agent.checks.finish import TestOutcome


class Record(Protocol):
    """What these metrics read of a run's record (agent/evals/runner.py `EvalRecord`, which imports this module)."""

    status: str
    passed: bool
    tests_ran: bool | None
    tests_passed: bool | None
    named_missing: list[str]
    missing: list[str]
    vacuous: bool


# A file name as a task writes it: `stats.py`, `src/shapes.rs`, `tests/test_reader.py`, `Cargo.toml`.
NAMED_FILE = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*"
    r"\.(?:py|js|mjs|cjs|ts|rs|go|java|toml|json|md|txt|cfg|ini|yaml|yml|sh))(?![\w/-])"
)
NOT_FILES = {"node.js"}  # names of things that read as file names


def named_files(task: str) -> list[str]:
    """The files a task's text names, in order, each once."""
    names = [m.group(1) for m in NAMED_FILE.finditer(task) if m.group(1).lower() not in NOT_FILES]
    return list(dict.fromkeys(names))


def missing_files(task: str, work: Path) -> list[str]:
    """The files the task names that are not in the result folder `work`."""
    return [name for name in named_files(task) if not (work / name).is_file()]


def tests_ran(outcome: TestOutcome | None) -> bool:
    """Whether a test run ran any test: False for no run at all (no test command) and for a run its output
    says ran none; True where the output names no count (the exit status is all there is)."""
    return outcome is not None and not outcome.vacuous


def vacuous_finish(record: Record) -> bool:
    """The run reported finished while no test ran or a file the task names was missing (the eval's reading,
    `tests_ran` False and `named_missing`; or the gate's, `vacuous` and `missing`). `tests_ran` None: a record
    made before it was kept, read as not known."""
    if record.status != "finished":
        return False
    return record.tests_ran is False or bool(record.named_missing or record.missing) or record.vacuous


def finished_with_tests(record: Record) -> bool:
    """Reported finished, with tests that ran and passed: what a user takes for "done" (a file the task
    names may still be missing: the hidden check then tells)."""
    return record.status == "finished" and record.tests_passed is True and record.tests_ran is not False


def finish_precision(records: Sequence[Record]) -> tuple[int, int]:
    """(hidden check passed, of the runs finished with tests passing); precision = first / second."""
    finished = [r for r in records if finished_with_tests(r)]
    return sum(r.passed for r in finished), len(finished)
