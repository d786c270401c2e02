"""Fresh attempts instead of a context that fills with failed edits.

A small model that got something wrong early (a wrong expected value in a test, a misread requirement) digs
in: it bends the code to fit the wrong test, renames functions, repeats itself. So the run's steps are split
into attempts: when one ends without a verified `finish` (its share of the steps spent, or stuck), the
workspace goes back to how the task found it and the next attempt starts from the same system prompt (the
engine's KV cache keeps serving it) with a fresh conversation, told in a few lines what went wrong."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from pathlib import Path

from agent.core.loop import RunResult, RunStats
from agent.core.texts import RETRY_CHECK_FAILED, RETRY_NOTE, RETRY_UNFINISHED
from agent.strategies.base import Run, Strategy, Then, add_stats
from tools.workspace import iter_files, relative

OUTPUT_LINES = 6  # of the failing check's output, in the note
MIN_STEPS = 6  # an attempt gets at least this many steps: fewer attempts when max_steps is small
SEED_STRIDE = 1000  # attempt n samples at seed + SEED_STRIDE * (n - 1): the same seed and context would repeat it
# The lines of a test run's output that say what failed (pytest's `E ...` and `FAILED ...`, node's and cargo's
# assertion lines), without the code around them: the note must not hand the next attempt the old code.
VERDICT = re.compile(r"^(E  |FAILED |not ok |thread '.*' panicked|\s*(AssertionError|assertion)\b)", re.I)


class FreshAttempts(Strategy):
    """Around the loop: the run's `max_steps` split over up to `attempts` attempts; one that ends without a
    verified `finish` is undone and the next starts with a fresh conversation, told what went wrong. Applies
    where the workspace can be put back and the steps allow two attempts of MIN_STEPS; a resumed
    conversation goes on as one attempt."""

    name = "fresh attempts"

    def applies(self, run: Run) -> bool:
        return (
            run.restore is not None and not run.history and attempts_for(run.config.attempts, run.config.max_steps) > 1
        )

    def run(self, run: Run, then: Then) -> RunResult:
        attempts, max_steps = attempts_for(run.config.attempts, run.config.max_steps), run.config.max_steps
        started, stats, spent = time.monotonic(), RunStats(), 0
        share, why = math.ceil(max_steps / attempts), ""
        for number in range(1, attempts + 1):
            steps = max_steps - spent if number == attempts else min(share, max_steps - spent)
            if number > 1 and run.gate is not None:
                run.gate.new_attempt()  # the task's own files again: the examples may refuse as often again
            seed = None if run.config.seed is None else run.config.seed + SEED_STRIDE * (number - 1)
            result = then(
                run.but(
                    task=f"{run.task}\n\n{RETRY_NOTE.format(why=why)}" if why else run.task,
                    config=run.config.model_copy(update={"max_steps": steps, "seed": seed}),
                )
            )
            add_stats(stats, result.stats)
            spent += result.stats.steps
            if result.status in ("finished", "error") or number == attempts or spent >= max_steps:
                break
            why = failure(result, run.verify() if run.verify else None)
            run.note(
                f"attempt {number} ended {result.status} ({why.splitlines()[0]}); undoing its changes and starting "
                f"attempt {number + 1} with a fresh context"
            )
            run.transcript.write("restart", attempt=number + 1, why=why)
            if run.restore:
                run.restore()
        return result.model_copy(
            update={
                "stats": stats,
                "wall_seconds": time.monotonic() - started,
                "summary": f"{result.summary} (attempt {number} of {attempts})",
            }
        )


def attempts_for(attempts: int, max_steps: int) -> int:
    """How many attempts `max_steps` allows: each gets at least MIN_STEPS."""
    return min(attempts, max(1, max_steps // MIN_STEPS))


def failure(result: RunResult, check: str | None) -> str:
    """A few lines on what went wrong: the check's complaint (test output) when there is one."""
    if check:
        lines = check.strip().splitlines()
        verdicts = [line.strip() for line in lines if VERDICT.match(line)] or lines[-OUTPUT_LINES:]
        return RETRY_CHECK_FAILED.format(lines="\n".join(verdicts[:OUTPUT_LINES]))
    return RETRY_UNFINISHED.format(summary=result.summary)


def snapshot_restorer(workspace: Path) -> Callable[[], None]:
    """For a folder without commits (a new project): remember its files now; the function returned puts them
    back and removes what was added since. Ignored files (.venv, node_modules) stay as they are."""
    saved = {relative(workspace, p): p.read_bytes() for p in iter_files(workspace, workspace) if not p.is_symlink()}

    def restore() -> None:
        emptied: set[Path] = set()
        for path in list(iter_files(workspace, workspace)):
            if relative(workspace, path) not in saved:
                path.unlink()
                emptied.update(p for p in path.parents if workspace in p.parents)
        for name, data in saved.items():
            (workspace / name).parent.mkdir(parents=True, exist_ok=True)
            (workspace / name).write_bytes(data)
        for folder in sorted(emptied, key=lambda p: len(p.parts), reverse=True):  # deepest first
            if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
                folder.rmdir()

    return restore
