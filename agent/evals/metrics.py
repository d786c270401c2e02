"""Whether a reported "finished" was earned: vacuous finishes and finish precision, per suite run.

A finish is vacuous when the run reported finished while no test ran (no test command, or one that ran none)
or a file the task names is missing at the end. Finish precision: of the runs reported finished with tests
passing (tests that ran), the share whose hidden check passes; what the word "finished" is worth to a user.

These are the eval's own readings of the result, independent of the agent's `finish` gate (which they measure).
Where a record or a test outcome carries the gate's own verdict (`vacuous`, `missing`), it counts too."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Protocol

# A file name as a task writes it: `stats.py`, `src/shapes.rs`, `tests/test_reader.py`, `Cargo.toml`.
NAMED_FILE = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:py|js|mjs|cjs|ts|rs|go|java|toml|json|md|txt|cfg|ini|yaml|yml|sh))(?![\w/-])"
)
NOT_FILES = {"node.js"}  # names of things that read as file names

# Test runs that ran nothing, as each runner prints it (read when the outcome does not count its tests itself;
# only the output's tail is kept, so a form that needs the whole output counts only when the tail holds it all).
NO_TESTS = [
    re.compile(r"\bno tests ran\b|\bcollected 0 items\b"),  # pytest (exit 5)
    re.compile(r"^# tests 0$", re.MULTILINE),  # node --test
    re.compile(r"Error: no test specified"),  # npm's placeholder script
]
GO_NO_FILES, GO_RAN = re.compile(r"\bno test files\b"), re.compile(r"^(ok|FAIL|--- \w+)\s", re.MULTILINE)
CARGO_RESULT = re.compile(r"test result: \w+\. (\d+) passed; (\d+) failed")
CARGO_START = re.compile(r"^\s*Finished `?test`?\s", re.MULTILINE)  # printed before the first test binary


class TestRun(Protocol):
    passed: bool
    exit_code: int | None
    output_tail: str


def named_files(task: str) -> list[str]:
    """The files a task's text names, in order, each once."""
    names = [m.group(1) for m in NAMED_FILE.finditer(task) if m.group(1).lower() not in NOT_FILES]
    return list(dict.fromkeys(names))


def missing_files(task: str, work: Path) -> list[str]:
    """The files the task names that are not in the result folder `work`."""
    return [name for name in named_files(task) if not (work / name).is_file()]


def tests_ran(outcome: TestRun | None) -> bool:
    """Whether a test run ran any test: False for no run at all (no test command) and for a run of none."""
    if outcome is None:
        return False
    vacuous = getattr(outcome, "vacuous", None)  # the outcome's own count, where it has one
    if isinstance(vacuous, bool):
        return not vacuous
    if outcome.exit_code == 5 and "pytest" in getattr(outcome, "command", ""):
        return False
    text = outcome.output_tail
    if any(pattern.search(text) for pattern in NO_TESTS):
        return False
    if GO_NO_FILES.search(text) and not GO_RAN.search(text):
        return False
    cargo = [(int(p), int(f)) for p, f in CARGO_RESULT.findall(text)]
    return not (cargo and CARGO_START.search(text)) or any(p or f for p, f in cargo)


def vacuous_finish(record: Any) -> bool:
    """The run reported finished while no test ran or a file the task names was missing. Reads the record
    defensively: `tests_ran` False (None: not recorded), `named_missing`; and the gate's own `vacuous` and
    `missing` where a record has them."""
    if getattr(record, "status", None) != "finished":
        return False
    return (
        getattr(record, "tests_ran", None) is False
        or bool(getattr(record, "named_missing", None))
        or bool(getattr(record, "missing", None))
        or getattr(record, "vacuous", False) is True
    )


def finished_with_tests(record: Any) -> bool:
    """Reported finished, with tests that ran and passed: what a user takes for "done" (a file the task
    names may still be missing: the hidden check then tells)."""
    return (
        getattr(record, "status", None) == "finished"
        and getattr(record, "tests_passed", None) is True
        and getattr(record, "tests_ran", None) is not False
    )


def finish_precision(records: list[Any]) -> tuple[int, int]:
    """(hidden check passed, of the runs finished with tests passing); precision = first / second."""
    finished = [r for r in records if finished_with_tests(r)]
    return sum(bool(r.passed) for r in finished), len(finished)
