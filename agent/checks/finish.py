"""What says a change is done: the project's tests, else the docstring examples of the functions the task
gave as stubs (as the run found them: agent/strategies/examples.py). `FinishGate` is what `finish` (and a one-shot
answer, agent/strategies/one_shot.py) must pass; `run_verification` runs any such check under the run's sandbox."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from agent.checks import named, project
from agent.checks.test_runs import TestCount, describe, read_count
from agent.core.texts import (
    CHECK_FAILS,
    EXAMPLES_EDITED,
    EXAMPLES_FAIL,
    NAMED_MISSING,
    NAMES_DROPPED,
    NO_TESTS_RAN,
    STILL_STUBS,
    TIMED_OUT,
)
from agent.settings.config import Config
from agent.strategies import examples, given_code
from tools.shell import run_command

CHECK_OUTPUT = 64_000  # a check's output kept to count its tests (cargo and go print a line per binary or package)
# docstring examples may have been wrong before the run: a wrong value holds up `finish` only so often
DOCTEST_REFUSALS = 2
EXAMPLES_SECONDS = 30  # docstring examples are one-liners: longer is an endless loop


class TestOutcome(BaseModel):
    """A check's run. `passed`: it exited 0 and ran tests (a run of none fails: agent/checks/test_runs.py);
    `summary`: what ran, in a few words ("12 tests passed", "3 passed, 1 failed", "no tests ran (...)")."""

    command: str
    passed: bool
    exit_code: int | None
    output_tail: str
    summary: str = ""
    count: TestCount | None = None  # as read from the output; None where it names no count

    @property
    def vacuous(self) -> bool:
        """No test ran: the runner found none, or skipped every one."""
        return self.count is not None and self.count.none is not None

    def problem(self) -> str | None:
        """What the `finish` gate says while this check does not pass, or None."""
        if self.passed:
            return None
        if self.count is not None and self.count.none is not None:
            return NO_TESTS_RAN.format(command=self.command, why=self.count.none, output=self.output_tail)
        return CHECK_FAILS.format(command=self.command, output=self.output_tail)


class FinishGate:
    """The check `finish` must pass: the project's tests, when it has some; `no_tests`: the answer while it
    has none, when it must (a new project). A Python project without tests is checked against the docstring
    examples of the files the run wrote (or the stubs the task names), which may have been wrong before the run: a wrong value refuses `finish` at most DOCTEST_REFUSALS
    times; code that raises or hangs is refused every time (a module that does not import is not finished). For stubs, the examples are the ones the run started with, so editing them does not pass.
    Where the task names stubs, dropping a name their files defined or leaving one a stub (agent/strategies/given_code.py)
    is refused as a wrong value is: a task may ask to rename one. The files and names the task asks for
    (agent/checks/named.py; in a new project, `no_tests` given, all it names) must exist, every time."""

    def __init__(self, workspace: Path, config: Config, no_tests: str | None = None, task: str = ""):
        self.workspace, self.config, self.no_tests, self.task = workspace, config, no_tests, task
        # the stubs the task names, as the run found them: set by the strategies that apply to the run
        # (agent/strategies/examples.py, given_code.py)
        self.given: list[examples.ModuleExamples] = []
        self.stub_files: dict[str, given_code.GivenFile] = {}
        self.asked = named.asked_for(task, workspace, new_project=no_tests is not None)
        self.refusals = 0
        self.stamps = project.python_stamps(workspace)  # the docstring-example check covers files written after

    def new_attempt(self) -> None:
        """A fresh attempt starts from the task's own files: the examples may refuse it as often again."""
        self.refusals = 0

    def __call__(self) -> str | None:
        return self.verdict(budget=True)

    def verdict(self, budget: bool = False) -> str | None:
        """What fails now, or None; `budget`: examples that only differ in value, and given code dropped or
        left a stub, refuse at most DOCTEST_REFUSALS times (for `finish`), else always (a one-shot answer,
        agent/strategies/one_shot.py, counts only if it passes them). What the task asked for and is missing always refuses."""
        lacking = self.missing()
        told = NAMED_MISSING.format(items="; ".join(lacking)) if lacking else None
        problems = [p for p in (told, self._check(budget)) if p]
        return "\n".join(problems) or None

    def missing(self) -> list[str]:
        """The files and names the task asked for that are not there now (agent/checks/named.py)."""
        return named.missing(self.asked, self.workspace)

    def _check(self, budget: bool) -> str | None:
        outcome = run_project_tests(self.workspace, self.config)
        if outcome is not None:
            return outcome.problem()
        if self.no_tests is not None:
            return self.no_tests
        problem, broken = self._examples()
        left = given_code.unfinished(self.stub_files, self.workspace)
        told = [NAMES_DROPPED.format(names=", ".join(left.dropped))] if left.dropped else []
        told += [STILL_STUBS.format(names=", ".join(left.stubs))] if left.stubs else []
        if told:
            problem = "\n".join(told + ([problem] if problem else []))
        if problem and budget and not broken:
            if self.refusals >= DOCTEST_REFUSALS:
                return None
            self.refusals += 1
        return problem

    def _examples(self) -> tuple[str | None, bool]:
        """What fails in the examples (or None), and whether the code broke (raised or hung) rather than
        giving another value."""
        original = examples.command(self.given, self._python()) if self.given else None
        command = original or project.doctest_command(self.workspace, since=self.stamps)
        if command is None:
            return None, False
        seconds = min(self.config.command_timeout, EXAMPLES_SECONDS)
        outcome = run_verification(self.workspace, command, self.config.model_copy(update={"command_timeout": seconds}))
        if outcome.passed:
            return None, False
        broken = outcome.exit_code is None or (original is not None and outcome.exit_code == examples.RAISED)
        edited = examples.changed(self.given, self.workspace)
        told = (EXAMPLES_FAIL if original else CHECK_FAILS).format(command=command, output=outcome.output_tail)
        return told + (EXAMPLES_EDITED.format(files=", ".join(edited)) if edited else ""), broken

    def _python(self) -> str:
        return project.python_test_command(self.workspace).split()[0]


def run_project_tests(workspace: Path, config: Config) -> TestOutcome | None:
    """The project's tests with its own command (agent/checks/project.py), or None when it has none."""
    command = project.test_command(workspace)
    return None if command is None else run_verification(workspace, command, config)


def run_verification(workspace: Path, command: str, config: Config) -> TestOutcome:
    """Run a check command (the tests, or a refactor's --verify), count what it ran and keep the tail of its
    output; a run of no tests does not pass. The project's tests are code the model wrote: they run under the
    run's sandbox policy, like bash, with the project's environment (its .venv first on PATH)."""
    policy = project.command_policy(config.sandbox_policy(), workspace)
    outcome = run_command(command, workspace, config.command_timeout, CHECK_OUTPUT, policy)
    tail = "\n".join(outcome.output.strip().splitlines()[-15:])
    if outcome.timed_out:  # else the model is told only that it failed (an endless loop shows no output)
        tail = TIMED_OUT.format(seconds=config.command_timeout, output=tail).rstrip()
    count = read_count(command, outcome.exit_code, outcome.output)
    return TestOutcome(
        command=command,
        passed=outcome.exit_code == 0 and not (count and count.none),
        exit_code=outcome.exit_code,
        output_tail=tail,
        summary=describe(count, outcome.exit_code, outcome.timed_out),
        count=count,
    )
