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
from pathlib import Path
from typing import Callable

from agent.texts import RETRY_CHECK_FAILED, RETRY_NOTE, RETRY_UNFINISHED
from agent.loop import Agent, RunResult, RunStats
from inference.backend import Message
from tools.workspace import iter_files, relative

OUTPUT_LINES = 6  # of the failing check's output, in the note
MIN_STEPS = 6  # an attempt gets at least this many steps: fewer attempts when max_steps is small
# The lines of a test run's output that say what failed (pytest's `E ...` and `FAILED ...`, node's and cargo's
# assertion lines), without the code around them: the note must not hand the next attempt the old code.
VERDICT = re.compile(r"^(E  |FAILED |not ok |thread '.*' panicked|\s*(AssertionError|assertion)\b)", re.I)


def run_attempts(
    new_agent: Callable[[int, int], Agent],
    task: str,
    *,
    attempts: int,
    max_steps: int,
    restore: Callable[[], None],
    verify: Callable[[], str | None] | None,
    note: Callable[[str], None] = lambda text: None,
    history: list[Message] | None = None,
) -> RunResult:
    """Run `task` in up to `attempts` fresh attempts sharing `max_steps`; `new_agent(steps, attempt)` builds
    one attempt's agent (its own sampling seed: the same seed and a fresh context would repeat the attempt),
    `restore()` puts the workspace back as the task found it. A resumed conversation (`history`) goes on as one
    attempt with all the steps."""
    attempts = min(attempts, max(1, max_steps // MIN_STEPS))
    if history or attempts <= 1:
        return new_agent(max_steps, 1).run(task, history)
    started, stats, spent = time.monotonic(), RunStats(), 0
    share, why = math.ceil(max_steps / attempts), ""
    for number in range(1, attempts + 1):
        steps = max_steps - spent if number == attempts else min(share, max_steps - spent)
        agent = new_agent(steps, number)
        result = agent.run(f"{task}\n\n{RETRY_NOTE.format(why=why)}" if why else task)
        add_stats(stats, result.stats)
        spent += result.stats.steps
        if result.status in ("finished", "error") or number == attempts or spent >= max_steps:
            break
        why = failure(result, verify() if verify else None)
        note(
            f"attempt {number} ended {result.status} ({why.splitlines()[0]}); undoing its changes and starting "
            f"attempt {number + 1} with a fresh context"
        )
        if agent.transcript:
            agent.transcript.write("restart", attempt=number + 1, why=why)
        restore()
    return result.model_copy(
        update={
            "stats": stats,
            "wall_seconds": time.monotonic() - started,
            "summary": f"{result.summary} (attempt {number} of {attempts})",
        }
    )


def failure(result: RunResult, check: str | None) -> str:
    """A few lines on what went wrong: the check's complaint (test output) when there is one."""
    if check:
        lines = check.strip().splitlines()
        verdicts = [line.strip() for line in lines if VERDICT.match(line)] or lines[-OUTPUT_LINES:]
        return RETRY_CHECK_FAILED.format(lines="\n".join(verdicts[:OUTPUT_LINES]))
    return RETRY_UNFINISHED.format(summary=result.summary)


def add_stats(total: RunStats, part: RunStats) -> None:
    """Add `part` to `total`; a part after one with steps counts as later turns (its prompts reuse the cache)."""
    first = total.steps == 0
    for name in RunStats.model_fields:
        setattr(total, name, getattr(total, name) + getattr(part, name))
    if not first:  # every prompt of a later attempt is a later turn of the run
        total.later_prompt_tokens += part.prompt_tokens - part.later_prompt_tokens
        total.later_cached_tokens += part.cached_prompt_tokens - part.later_cached_tokens


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
